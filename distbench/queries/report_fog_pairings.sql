-- Report: fog-of-war results per agent against each opponent, both seats pooled, with the
-- agent's score rate (win 1, draw 0.5, loss 0) and its 95% Wilson interval (the store's
-- macros wilson_low and wilson_high, as in fog_summary.sql).
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
        share(win)                                   AS win_rate,
        share(draw)                                  AS draw_rate,
        share(loss)                                  AS loss_rate,
        sum(CASE WHEN win THEN 1.0 WHEN draw THEN 0.5 ELSE 0.0 END)::DOUBLE AS score_sum
    FROM per_agent
    GROUP BY agent, opponent
)
SELECT
    agent,
    opponent,
    games,
    win_rate,
    draw_rate,
    loss_rate,
    score_sum / games                                  AS score_rate,
    wilson_low(score_sum, games)                       AS score_ci_low,
    wilson_high(score_sum, games)                      AS score_ci_high
FROM grouped
ORDER BY agent, opponent;
