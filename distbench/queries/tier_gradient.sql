-- quality: the headline (README, "The headline"): the mean over answered trials, an invalid
-- answer 0; missing_trials: failed calls, left out; valid_rate: of answered trials.
-- Does a higher tier play better? Per tier and mode over all buckets, models and seeds: over
-- valid answers, and honest (over all trials, an invalid answer scored as chance).
SELECT
    tier,
    mode,
    count(DISTINCT model)                                      AS num_models,
    count(*)                                                   AS total_trials,
    count(*) FILTER (WHERE NOT answered)                       AS missing_trials,
    avg(quality)                            AS quality,
    share_among(parse_status = 'ok', answered)                 AS valid_rate,
    avg(nash_gap)                                              AS mean_nash_gap,
    avg(exploitability)                                        AS mean_exploitability,
    avg(honest_gap)                                            AS honest_nash_gap,
    avg(honest_expl)                                           AS honest_exploitability
FROM matrix_scored
GROUP BY tier, mode
ORDER BY mode, tier;
