-- quality: the headline (README, "The headline"): the mean over answered trials, an invalid
-- answer 0; missing_trials: failed calls, left out; valid_rate: of answered trials.
-- One row per seed x provider x bucket x model x mode (with the tier): the suite's full table.
-- Gap and exploitability figures are over valid answers; honest_nash_gap and
-- honest_exploitability over ALL trials, an invalid answer scored as chance on its game (README,
-- "Metrics (matrix)"); headline_metric names the one to read first.
SELECT
    seed,
    tier,
    provider,
    model,
    bucket,
    mode,
    count(DISTINCT game_id)                                    AS num_games,
    count(*)                                                   AS total_trials,
    count(*) FILTER (WHERE NOT answered)                       AS missing_trials,
    avg(quality)                            AS quality,
    share_among(parse_status = 'ok', answered)                 AS valid_rate,
    avg(nash_gap)                                              AS mean_nash_gap,
    median(nash_gap)                                           AS median_nash_gap,
    stddev_pop(nash_gap)                                       AS std_nash_gap,
    avg(exploitability)                                        AS mean_exploitability,
    avg(llm_value)                                             AS mean_llm_value,
    avg(br_value)                                              AS mean_br_value,
    avg(nash_gap) / nullif(avg(abs(br_value)), 0)              AS gap_ratio,
    share(gap_degenerate)                                      AS degenerate_share,
    avg(honest_gap)                                            AS honest_nash_gap,
    avg(honest_expl)                                           AS honest_exploitability,
    CASE WHEN bucket LIKE '%\_mixed' ESCAPE '\' OR bool_or(gap_degenerate)
             THEN 'exploitability' ELSE 'nash_gap' END AS headline_metric
FROM matrix_scored
GROUP BY seed, tier, provider, model, bucket, mode
ORDER BY seed, tier, provider, model, bucket, mode;
