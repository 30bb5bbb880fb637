-- Report: fog-of-war belief quality per agent (both seats pooled): mean per-game Brier score,
-- log loss and calibration error, and the share of valid reports.
WITH per_agent AS (
    SELECT agent_a AS agent, brier_a AS brier, log_loss_a AS log_loss,
           calibration_error_a AS calibration_error, valid_reports_a AS valid_reports,
           reports_a AS reports
    FROM fog_games
    UNION ALL
    SELECT agent_b, brier_b, log_loss_b, calibration_error_b, valid_reports_b, reports_b
    FROM fog_games
)
SELECT
    agent,
    count(*)                                      AS games,
    avg(brier)                                    AS mean_brier,
    avg(log_loss)                                 AS mean_log_loss,
    avg(calibration_error)                        AS mean_calibration_error,
    sum(valid_reports) / nullif(sum(reports), 0)  AS valid_report_rate
FROM per_agent
GROUP BY agent
ORDER BY agent;
