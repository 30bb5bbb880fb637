-- Report: fog-of-war results per agent against each opponent, both seats pooled, with the
-- agent's score rate (win 1, draw 0.5, loss 0) and its 95% Wilson interval (within [0, 1];
-- the formula of distbench.report.stats.wilson_interval, as in fog_summary.sql).
WITH per_agent AS (
    SELECT agent_a AS agent, agent_b AS opponent,
           winner = 'a' AS win, winner = 'draw' AS draw, winner = 'b' AS loss
    FROM fog_games
    UNION ALL
    SELECT agent_b, agent_a, winner = 'b', winner = 'draw', winner = 'a'
    FROM fog_games
),
grouped AS (
    SELECT
        agent,
        opponent,
        count(*)                                     AS games,
        avg(CASE WHEN win THEN 1.0 ELSE 0.0 END)     AS win_rate,
        avg(CASE WHEN draw THEN 1.0 ELSE 0.0 END)    AS draw_rate,
        avg(CASE WHEN loss THEN 1.0 ELSE 0.0 END)    AS loss_rate,
        sum(CASE WHEN win THEN 1.0 WHEN draw THEN 0.5 ELSE 0.0 END)::DOUBLE AS score_sum
    FROM per_agent
    GROUP BY agent, opponent
),
wilson AS (
    SELECT *,
           score_sum / games AS p,
           (1.959963984540054::DOUBLE * 1.959963984540054::DOUBLE) AS z2,
           1.0 + (1.959963984540054::DOUBLE * 1.959963984540054::DOUBLE) / games AS denom
    FROM grouped
)
SELECT
    agent,
    opponent,
    games,
    win_rate,
    draw_rate,
    loss_rate,
    p                                                  AS score_rate,
    CASE WHEN score_sum = 0 THEN 0.0 ELSE greatest(0.0,
        (p + z2 / (2 * games)) / denom
        - 1.959963984540054::DOUBLE / denom * sqrt(p * (1.0 - p) / games + z2 / (4.0 * games * games)))
    END                                                AS score_ci_low,
    CASE WHEN score_sum = games THEN 1.0 ELSE least(1.0,
        (p + z2 / (2 * games)) / denom
        + 1.959963984540054::DOUBLE / denom * sqrt(p * (1.0 - p) / games + z2 / (4.0 * games * games)))
    END                                                AS score_ci_high
FROM wilson
ORDER BY agent, opponent;
