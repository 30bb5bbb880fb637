-- Report: per bucket x model x mode: trials, valid-answer rate, and over valid answers the mean
-- and median Nash gap and mean exploitability; the share of trials on gap-degenerate games.
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
    avg(label_mass)                                            AS mean_label_mass
FROM trials
WHERE family = 'matrix'
GROUP BY bucket, provider, model, tier, mode
ORDER BY bucket, provider, model, tier NULLS FIRST, mode;
