-- Report: information gain of scouting per agent and scout accuracy: entropy drop (bits) of
-- the beliefs about forces revealed by the previous turn's scouting (reports with a reveal).
-- A game is (run_id, shard_id, game_id): game_id repeats across the scouting conditions of a study,
-- and the shard (one condition's chunk of games) tells them apart.
SELECT
    r.agent,
    g.scout_accuracy,
    count(r.info_gain)                              AS reports,
    count(*) FILTER (WHERE r.info_gain <> 0)        AS reveal_reports,
    avg(r.info_gain) FILTER (WHERE r.info_gain <> 0) AS mean_info_gain_per_reveal,
    sum(r.info_gain)                                AS total_info_gain
FROM fog_reports AS r
JOIN fog_games AS g USING (run_id, shard_id, game_id)
WHERE g.scouting
GROUP BY r.agent, g.scout_accuracy
ORDER BY r.agent, g.scout_accuracy;
