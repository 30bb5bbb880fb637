-- Does a higher tier play better? Per tier and mode over all buckets, models and seeds: over
-- valid answers, and honest (over all trials, an invalid answer scored as chance).
SELECT
    tier,
    mode,
    count(DISTINCT model)                                      AS num_models,
    count(*)                                                   AS total_trials,
    avg(CASE WHEN parse_status = 'ok' THEN 1.0 ELSE 0.0 END)   AS valid_rate,
    avg(nash_gap)                                              AS mean_nash_gap,
    avg(exploitability)                                        AS mean_exploitability,
    avg(honest_gap)                                            AS honest_nash_gap,
    avg(honest_expl)                                           AS honest_exploitability
FROM matrix_scored
GROUP BY tier, mode
ORDER BY mode, tier;
