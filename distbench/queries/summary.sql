-- Summary per (bucket, provider, model, tier, mode) over the trials table: the same figures as
-- summary.json, except the bootstrap CIs (which need resampling; see distbench/games/matrix/summary.py).
-- The headline first (README, "The headline"): quality, the mean over the answered trials
-- (failed calls left out: missing_trials counts them) of each trial's quality in [0, 1] (1 -
-- exploitability / the game's worst pure exploitability; an invalid answer 0); valid_rate =
-- valid / answered; quality_of_valid over valid answers. Gap statistics are over valid
-- answers (parse_status = 'ok'); std is the population std (ddof 0). honest_nash_gap /
-- honest_exploitability (the older headline) are over the answered trials, an invalid answer
-- scored as chance on its game; headline_metric names the one of those two to read.
SELECT
    bucket,
    provider,
    model,
    tier,
    mode,
    count(DISTINCT game_id)                                    AS num_games,
    count(*)                                                   AS total_trials,
    count(*) FILTER (WHERE NOT answered)                       AS missing_trials,
    avg(quality)                                               AS quality,
    share_among(parse_status = 'ok', answered)                 AS valid_rate,
    avg(quality) FILTER (WHERE parse_status = 'ok')            AS quality_of_valid,
    count(*) FILTER (WHERE parse_status = 'ok')                AS valid_trials,
    avg(nash_gap)                                              AS mean_nash_gap,
    median(nash_gap)                                           AS median_nash_gap,
    stddev_pop(nash_gap)                                       AS std_nash_gap,
    min(nash_gap)                                              AS min_nash_gap,
    max(nash_gap)                                              AS max_nash_gap,
    avg(llm_value)                                             AS mean_llm_value,
    avg(br_value)                                              AS mean_br_value,
    avg(nash_gap) / nullif(avg(abs(br_value)), 0)              AS gap_ratio,
    avg(exploitability)                                        AS mean_exploitability,
    avg(label_mass)                                            AS mean_label_mass,
    avg(honest_gap) FILTER (WHERE answered)                    AS honest_nash_gap,
    avg(honest_expl) FILTER (WHERE answered)                   AS honest_exploitability,
    CASE WHEN bucket LIKE '%\_mixed' ESCAPE '\' OR bool_or(gap_degenerate)
                THEN 'exploitability' ELSE 'nash_gap' END AS headline_metric,
    share(gap_degenerate)                                      AS degenerate_trial_share
FROM matrix_scored
GROUP BY bucket, provider, model, tier, mode
ORDER BY bucket, provider, model, tier, mode;
