-- Mean Nash gap and exploitability per bucket and mode, with the share of games whose gap is
-- degenerate (every answer has gap 0, so read exploitability there).
SELECT
    t.bucket,
    t.mode,
    count(DISTINCT t.game_id)                                  AS num_games,
    count(*)                                                   AS total_trials,
    avg(CASE WHEN t.parse_status = 'ok' THEN 1.0 ELSE 0.0 END) AS valid_rate,
    avg(t.nash_gap)                                            AS mean_nash_gap,
    avg(t.exploitability)                                      AS mean_exploitability,
    avg(CASE WHEN g.gap_degenerate THEN 1.0 ELSE 0.0 END)      AS degenerate_trial_share,
    avg(g.value)                                               AS mean_game_value
FROM trials AS t
JOIN games AS g USING (game_id)
WHERE t.family = 'matrix'
GROUP BY t.bucket, t.mode
ORDER BY t.bucket, t.mode;
