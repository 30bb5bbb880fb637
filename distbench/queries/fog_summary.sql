-- Fog-of-war: outcomes per agent and opponent (both seats pooled; the agent's score rate: win 1,
-- draw 0.5, loss 0) with its 95% Wilson score interval (the store's macros wilson_low and
-- wilson_high: the formula and z of distbench.report.stats.wilson_interval, so `distbench fog
-- tournament` prints the same interval for the same pairing), and belief quality (Brier, log loss, calibration error,
-- valid-report rate) per agent.
WITH per_agent AS (
    SELECT agent_a AS agent, agent_b AS opponent, 'a' AS seat, scout_accuracy, scouting,
           CASE winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END::DOUBLE AS score,
           brier_a AS brier, log_loss_a AS log_loss, calibration_error_a AS calibration_error,
           tom_delta_a AS tom_delta, uncertainty_reduction_a AS uncertainty_reduction,
           valid_reports_a AS valid_reports, reports_a AS reports, turns
    FROM fog_games
    UNION ALL
    SELECT agent_b, agent_a, 'b', scout_accuracy, scouting,
           CASE winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END::DOUBLE,
           brier_b, log_loss_b, calibration_error_b, tom_delta_b, uncertainty_reduction_b,
           valid_reports_b, reports_b, turns
    FROM fog_games
),
grouped AS (
    SELECT
        agent,
        opponent,
        scout_accuracy,
        scouting,
        count(*)                                           AS games,
        sum(score)                                         AS score_sum,
        avg(turns)                                         AS mean_turns,
        avg(brier)                                         AS mean_brier,
        avg(log_loss)                                      AS mean_log_loss,
        avg(calibration_error)                             AS mean_calibration_error,
        avg(tom_delta)                                     AS mean_tom_delta,
        avg(uncertainty_reduction)                         AS mean_uncertainty_reduction,
        sum(valid_reports) / nullif(sum(reports), 0)       AS valid_report_rate
    FROM per_agent
    GROUP BY agent, opponent, scout_accuracy, scouting
)
SELECT
    agent,
    opponent,
    scout_accuracy,
    scouting,
    games,
    score_sum / games                                  AS score_rate,
    wilson_low(score_sum, games)                       AS score_ci_low,
    wilson_high(score_sum, games)                      AS score_ci_high,
    mean_turns,
    mean_brier,
    mean_log_loss,
    mean_calibration_error,
    mean_tom_delta,
    mean_uncertainty_reduction,
    valid_report_rate
FROM grouped
ORDER BY agent, opponent, scout_accuracy, scouting;
