-- Report: per bucket x model x mode: trials, the headline quality (mean over the answered
-- trials, an invalid answer 0, failed calls left out and counted as missing), the valid-answer
-- rate (of answered trials) and the quality of valid answers; over valid answers the mean
-- and median Nash gap and mean exploitability; the share of trials on gap-degenerate games; the
-- older honest gap and exploitability (over answered trials, an invalid answer scored as
-- chance) and which of those two to read (exploitability for mixed buckets and degenerate games).
SELECT
    bucket,
    provider,
    model,
    tier,
    mode,
    count(DISTINCT game_id)                                    AS games,
    count(*)                                                   AS trials,
    count(*) FILTER (WHERE NOT answered)                       AS missing,
    avg(quality)                                               AS quality,
    share_among(parse_status = 'ok', answered)                 AS valid_rate,
    avg(quality) FILTER (WHERE parse_status = 'ok')            AS quality_of_valid,
    avg(nash_gap) FILTER (WHERE parse_status = 'ok')           AS mean_nash_gap,
    median(nash_gap) FILTER (WHERE parse_status = 'ok')        AS median_nash_gap,
    avg(exploitability) FILTER (WHERE parse_status = 'ok')     AS mean_exploitability,
    share(gap_degenerate)                                      AS degenerate_trial_share,
    avg(label_mass)                                            AS mean_label_mass,
    avg(honest_gap) FILTER (WHERE answered)                    AS honest_nash_gap,
    avg(honest_expl) FILTER (WHERE answered)                   AS honest_exploitability,
    CASE WHEN bucket LIKE '%\_mixed' ESCAPE '\' OR bool_or(gap_degenerate)
             THEN 'exploitability' ELSE 'nash_gap' END AS headline_metric
FROM matrix_scored
GROUP BY bucket, provider, model, tier, mode
ORDER BY bucket, provider, model, tier NULLS FIRST, mode;
