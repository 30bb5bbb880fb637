-- The main report table: per tier x provider x model x bucket x mode, the mean and the std
-- across seeds of each seed's figures (so the std is the seed-to-seed spread). Gap and
-- exploitability over valid answers; the headline quality over the answered trials (an
-- invalid answer 0, failed calls left out; README, "The headline") and, beside it, the valid
-- rate of answered trials; the older honest figures over answered trials, an invalid answer
-- scored as chance on its game; headline_metric names the one of those two to read.
WITH per_seed AS (
    SELECT
        seed, tier, provider, model, bucket, mode,
        count(*)                                                 AS total_trials,
        count(*) FILTER (WHERE NOT answered)                     AS missing_trials,
        avg(quality)                                             AS quality,
        share_among(parse_status = 'ok', answered)               AS valid_rate,
        avg(quality) FILTER (WHERE parse_status = 'ok')          AS quality_of_valid,
        avg(nash_gap)                                            AS mean_nash_gap,
        avg(exploitability)                                      AS mean_exploitability,
        avg(nash_gap) / nullif(avg(abs(br_value)), 0)            AS gap_ratio,
        avg(honest_gap) FILTER (WHERE answered)                  AS honest_nash_gap,
        avg(honest_expl) FILTER (WHERE answered)                 AS honest_exploitability,
        share(gap_degenerate)                                    AS degenerate_share,
        bool_or(gap_degenerate)                                  AS any_degenerate
    FROM matrix_scored
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
    sum(missing_trials)            AS missing_trials,
    avg(quality)                   AS quality_mean,
    stddev_samp(quality)           AS quality_std,
    avg(valid_rate)                AS valid_rate_mean,
    avg(quality_of_valid)          AS quality_of_valid_mean,
    avg(mean_nash_gap)             AS nash_gap_mean,
    stddev_samp(mean_nash_gap)     AS nash_gap_std,
    avg(mean_exploitability)       AS exploitability_mean,
    stddev_samp(mean_exploitability) AS exploitability_std,
    avg(gap_ratio)                 AS gap_ratio_mean,
    avg(honest_nash_gap)           AS honest_nash_gap_mean,
    stddev_samp(honest_nash_gap)   AS honest_nash_gap_std,
    avg(honest_exploitability)     AS honest_exploitability_mean,
    stddev_samp(honest_exploitability) AS honest_exploitability_std,
    avg(degenerate_share)          AS degenerate_share,
    CASE WHEN bucket LIKE '%\_mixed' ESCAPE '\' OR bool_or(any_degenerate)
         THEN 'exploitability' ELSE 'nash_gap' END AS headline_metric
FROM per_seed
GROUP BY tier, provider, model, bucket, mode
ORDER BY tier, provider, model, bucket, mode;
