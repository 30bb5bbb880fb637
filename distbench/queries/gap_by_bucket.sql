-- quality: the headline (README, "The headline"): the mean over answered trials, an invalid
-- answer 0; missing_trials: failed calls, left out; valid_rate: of answered trials.
-- Mean Nash gap and exploitability per bucket and mode (over valid answers, and honest: over
-- all trials, an invalid answer scored as chance), with the share of trials on games whose gap
-- is degenerate (every answer has gap 0, so read exploitability there).
SELECT
    t.bucket,
    t.mode,
    count(DISTINCT t.game_id)                                  AS num_games,
    count(*)                                                   AS total_trials,
    count(*) FILTER (WHERE NOT t.answered)                     AS missing_trials,
    avg(t.quality)                          AS quality,
    share_among(t.parse_status = 'ok', t.answered)             AS valid_rate,
    avg(t.nash_gap)                                            AS mean_nash_gap,
    avg(t.exploitability)                                      AS mean_exploitability,
    share(g.gap_degenerate)                                    AS degenerate_trial_share,
    avg(g.value)                                               AS mean_game_value,
    avg(t.honest_gap)                                          AS honest_nash_gap,
    avg(t.honest_expl)                                         AS honest_exploitability
FROM matrix_scored AS t
JOIN (SELECT DISTINCT run_id, game_id, gap_degenerate, value FROM games) AS g
    USING (run_id, game_id)
GROUP BY t.bucket, t.mode
ORDER BY t.bucket, t.mode;
