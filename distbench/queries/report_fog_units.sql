-- Report: per agent x (seed, game index, scouting condition), the sum and count of the agent's
-- game scores (win 1, draw 0.5, loss 0): bootstrap clusters and paired-comparison units. The
-- condition is part of the unit: a study replays the same seeds under each condition.
WITH per_agent AS (
    SELECT agent_a AS agent, seed, game_index, scout_accuracy, scouting,
           CASE winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END AS score
    FROM fog_games
    UNION ALL
    SELECT agent_b, seed, game_index, scout_accuracy, scouting,
           CASE winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END
    FROM fog_games
)
SELECT agent, seed, game_index, scout_accuracy, scouting, count(*) AS games,
       CAST(sum(score) AS DOUBLE) AS score_sum
FROM per_agent
GROUP BY agent, seed, game_index, scout_accuracy, scouting
ORDER BY agent, seed, game_index, scouting DESC, scout_accuracy;
