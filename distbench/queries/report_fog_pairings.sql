-- Report: fog-of-war results per agent against each opponent, both seats pooled.
WITH per_agent AS (
    SELECT agent_a AS agent, agent_b AS opponent,
           winner = 'a' AS win, winner = 'draw' AS draw, winner = 'b' AS loss
    FROM fog_games
    UNION ALL
    SELECT agent_b, agent_a, winner = 'b', winner = 'draw', winner = 'a'
    FROM fog_games
)
SELECT
    agent,
    opponent,
    count(*)                                     AS games,
    avg(CASE WHEN win THEN 1.0 ELSE 0.0 END)     AS win_rate,
    avg(CASE WHEN draw THEN 1.0 ELSE 0.0 END)    AS draw_rate,
    avg(CASE WHEN loss THEN 1.0 ELSE 0.0 END)    AS loss_rate
FROM per_agent
GROUP BY agent, opponent
ORDER BY agent, opponent;
