-- Models ranked by mean exploitability (lower is better; unlike the gap it is never degenerate),
-- per answer mode, over all buckets and seeds, with the valid-answer rate beside it.
SELECT
    mode,
    rank() OVER (PARTITION BY mode ORDER BY avg(exploitability) ASC NULLS LAST) AS rank,
    tier,
    provider,
    model,
    count(*)                                                   AS total_trials,
    avg(CASE WHEN parse_status = 'ok' THEN 1.0 ELSE 0.0 END)   AS valid_rate,
    avg(exploitability)                                        AS mean_exploitability,
    avg(nash_gap)                                              AS mean_nash_gap,
    avg(label_mass)                                            AS mean_label_mass
FROM trials
WHERE family = 'matrix'
GROUP BY mode, tier, provider, model
ORDER BY mode, rank, tier, model;
