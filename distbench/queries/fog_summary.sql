-- Fog-of-war: outcomes per ordered pairing (player a's score rate: win 1, draw 0.5), and
-- belief quality (Brier, log loss, calibration error, valid-report rate) per agent and seat.
WITH per_agent AS (
    SELECT agent_a AS agent, agent_b AS opponent, 'a' AS seat, scout_accuracy, scouting,
           CASE winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END AS score,
           brier_a AS brier, log_loss_a AS log_loss, calibration_error_a AS calibration_error,
           tom_delta_a AS tom_delta, uncertainty_reduction_a AS uncertainty_reduction,
           valid_reports_a AS valid_reports, reports_a AS reports, turns
    FROM fog_games
    UNION ALL
    SELECT agent_b, agent_a, 'b', scout_accuracy, scouting,
           CASE winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END,
           brier_b, log_loss_b, calibration_error_b, tom_delta_b, uncertainty_reduction_b,
           valid_reports_b, reports_b, turns
    FROM fog_games
)
SELECT
    agent,
    opponent,
    scout_accuracy,
    scouting,
    count(*)                                           AS games,
    avg(score)                                         AS score_rate,
    avg(score) - 1.96 * stddev_samp(score) / sqrt(count(*)) AS score_ci_low,
    avg(score) + 1.96 * stddev_samp(score) / sqrt(count(*)) AS score_ci_high,
    avg(turns)                                         AS mean_turns,
    avg(brier)                                         AS mean_brier,
    avg(log_loss)                                      AS mean_log_loss,
    avg(calibration_error)                             AS mean_calibration_error,
    avg(tom_delta)                                     AS mean_tom_delta,
    avg(uncertainty_reduction)                         AS mean_uncertainty_reduction,
    sum(valid_reports) / nullif(sum(reports), 0)       AS valid_report_rate
FROM per_agent
GROUP BY agent, opponent, scout_accuracy, scouting
ORDER BY agent, opponent, scout_accuracy, scouting;
