-- Report: per bucket x model x mode: trials, valid-answer rate, and over valid answers the mean
-- and median Nash gap and mean exploitability; the share of trials on gap-degenerate games; the
-- honest gap and exploitability (over all trials, an invalid answer scored as chance) and the
-- headline metric (exploitability for mixed buckets and gap-degenerate games).
SELECT
    bucket,
    provider,
    model,
    tier,
    mode,
    count(DISTINCT game_id)                                    AS games,
    count(*)                                                   AS trials,
    avg(CASE WHEN parse_status = 'ok' THEN 1.0 ELSE 0.0 END)   AS valid_rate,
    avg(nash_gap) FILTER (WHERE parse_status = 'ok')           AS mean_nash_gap,
    median(nash_gap) FILTER (WHERE parse_status = 'ok')        AS median_nash_gap,
    avg(exploitability) FILTER (WHERE parse_status = 'ok')     AS mean_exploitability,
    avg(CASE WHEN gap_degenerate THEN 1.0 ELSE 0.0 END)        AS degenerate_trial_share,
    avg(label_mass)                                            AS mean_label_mass,
    avg(honest_gap)                                            AS honest_nash_gap,
    avg(honest_expl)                                           AS honest_exploitability,
    CASE WHEN bucket LIKE '%\_mixed' ESCAPE '\' OR bool_or(gap_degenerate)
             THEN 'exploitability' ELSE 'nash_gap' END AS headline_metric
FROM matrix_scored
GROUP BY bucket, provider, model, tier, mode
ORDER BY bucket, provider, model, tier NULLS FIRST, mode;
