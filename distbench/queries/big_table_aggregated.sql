-- The main report table: per tier x provider x model x bucket x mode, the mean and the std
-- across seeds of each seed's figures (so the std is the seed-to-seed spread).
WITH per_seed AS (
    SELECT
        seed, tier, provider, model, bucket, mode,
        count(*)                                                 AS total_trials,
        avg(CASE WHEN parse_status = 'ok' THEN 1.0 ELSE 0.0 END) AS valid_rate,
        avg(nash_gap)                                            AS mean_nash_gap,
        avg(exploitability)                                      AS mean_exploitability,
        avg(nash_gap) / nullif(avg(abs(br_value)), 0)            AS gap_ratio
    FROM trials
    WHERE family = 'matrix'
    GROUP BY ALL
)
SELECT
    tier,
    provider,
    model,
    bucket,
    mode,
    count(*)                       AS num_seeds,
    sum(total_trials)              AS total_trials,
    avg(valid_rate)                AS valid_rate_mean,
    avg(mean_nash_gap)             AS nash_gap_mean,
    stddev_samp(mean_nash_gap)     AS nash_gap_std,
    avg(mean_exploitability)       AS exploitability_mean,
    stddev_samp(mean_exploitability) AS exploitability_std,
    avg(gap_ratio)                 AS gap_ratio_mean
FROM per_seed
GROUP BY ALL
ORDER BY tier, provider, model, bucket, mode;
