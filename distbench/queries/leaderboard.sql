-- Models ranked per answer mode by the headline quality: the mean over the answered trials
-- (failed calls left out: missing_trials counts them) of each trial's quality in [0, 1], 1 -
-- exploitability / the game's worst pure exploitability, an invalid answer 0 (so failing to
-- answer never helps; higher is better; README, "The headline"). The 95% interval is a normal
-- interval over the model's per-game means (games are the independent units), clipped to
-- [0, 1]. A model's rank is 1 + the number of models of its mode whose interval lies wholly
-- above its own, so models whose intervals overlap share a rank
-- (distbench.report.stats.overlap_ranks); tied_with lists the models whose intervals overlap
-- its own. The valid rate (of answered trials), the quality of valid answers, the older honest
-- aggregates (an invalid answer scored as chance, with their normal interval) and the figures
-- over valid answers stand beside it.
WITH per_game AS (
    SELECT mode, tier, provider, model, game_id,
           count(*) FILTER (WHERE answered)                         AS trials,
           count(*) FILTER (WHERE NOT answered)                     AS missing,
           count(*) FILTER (WHERE parse_status = 'ok')              AS valid,
           avg(quality)                                             AS quality,
           sum(quality) FILTER (WHERE parse_status = 'ok')          AS sum_quality_valid,
           avg(honest_expl) FILTER (WHERE answered)                 AS honest_expl,
           avg(honest_gap) FILTER (WHERE answered)                  AS honest_gap,
           sum(exploitability)                                      AS sum_expl,
           sum(nash_gap)                                            AS sum_gap,
           avg(label_mass)                                          AS label_mass
    FROM matrix_scored
    GROUP BY ALL
),
models AS (
    SELECT mode, tier, provider, model,
           count(*) FILTER (WHERE trials > 0)                       AS num_games,
           sum(trials)                                              AS answered_trials,
           sum(missing)                                             AS missing_trials,
           sum(valid) / nullif(sum(trials), 0)                      AS valid_rate,
           sum(quality * trials) / nullif(sum(trials), 0)           AS quality,
           stddev_samp(quality) / sqrt(count(quality))              AS quality_se,
           sum(sum_quality_valid) / nullif(sum(valid), 0)           AS quality_of_valid,
           sum(honest_expl * trials) / nullif(sum(trials), 0)       AS honest_exploitability,
           stddev_samp(honest_expl) / sqrt(count(honest_expl))      AS honest_se,
           sum(honest_gap * trials) / nullif(sum(trials), 0)        AS honest_nash_gap,
           sum(sum_expl) / nullif(sum(valid), 0)                    AS mean_exploitability,
           sum(sum_gap) / nullif(sum(valid), 0)                     AS mean_nash_gap,
           avg(label_mass)                                          AS mean_label_mass
    FROM per_game
    GROUP BY mode, tier, provider, model
),
intervals AS (
    SELECT *,
           greatest(0.0, quality - 1.959963984540054::DOUBLE * quality_se) AS ci95_low,
           least(1.0, quality + 1.959963984540054::DOUBLE * quality_se)    AS ci95_high
    FROM models
)
SELECT
    a.mode,
    1 + count(b.model) FILTER (WHERE b.ci95_low > a.ci95_high)     AS rank,
    a.tier,
    a.provider,
    a.model,
    a.num_games,
    a.answered_trials,
    a.missing_trials,
    a.quality,
    a.ci95_low                                                     AS quality_ci95_low,
    a.ci95_high                                                    AS quality_ci95_high,
    string_agg(b.provider || ':' || b.model || coalesce(' (' || b.tier || ')', ''), ', '
               ORDER BY b.provider, b.model, b.tier)
        FILTER (WHERE (b.tier IS DISTINCT FROM a.tier OR b.provider <> a.provider
                       OR b.model <> a.model)
                AND NOT (b.ci95_high < a.ci95_low OR b.ci95_low > a.ci95_high)) AS tied_with,
    a.valid_rate,
    a.quality_of_valid,
    a.honest_exploitability,
    greatest(0.0, a.honest_exploitability - 1.959963984540054::DOUBLE * a.honest_se)
                                                                   AS honest_exploitability_ci95_low,
    a.honest_exploitability + 1.959963984540054::DOUBLE * a.honest_se
                                                                   AS honest_exploitability_ci95_high,
    a.honest_nash_gap,
    a.mean_exploitability,
    a.mean_nash_gap,
    a.mean_label_mass
FROM intervals AS a
JOIN intervals AS b ON b.mode = a.mode
GROUP BY ALL
ORDER BY a.mode, rank, a.quality DESC NULLS LAST, a.tier, a.model;
