-- Models ranked per answer mode by the honest exploitability: the mean over ALL trials, an
-- invalid answer scored as chance on its game (so failing to answer never helps; lower is
-- better; unlike the gap it is never degenerate). The 95% interval is a normal interval over
-- the model's per-game means (games are the independent units), clipped at 0. A model's rank
-- is 1 + the number of models of its mode whose interval lies wholly below its own, so models
-- whose intervals overlap share a rank (distbench.report.stats.overlap_ranks); tied_with lists
-- the models whose intervals overlap its own. The valid rate and the figures over valid
-- answers stand beside it.
WITH per_game AS (
    SELECT mode, tier, provider, model, game_id,
           count(*)                                                 AS trials,
           count(*) FILTER (WHERE parse_status = 'ok')              AS valid,
           avg(honest_expl)                                         AS honest_expl,
           avg(honest_gap)                                          AS honest_gap,
           sum(exploitability)                                      AS sum_expl,
           sum(nash_gap)                                            AS sum_gap,
           avg(label_mass)                                          AS label_mass
    FROM matrix_scored
    GROUP BY ALL
),
models AS (
    SELECT mode, tier, provider, model,
           count(*)                                                 AS num_games,
           sum(trials)                                              AS total_trials,
           sum(valid) / sum(trials)                                 AS valid_rate,
           sum(honest_expl * trials) / sum(trials)                  AS honest_exploitability,
           stddev_samp(honest_expl) / sqrt(count(*))                AS honest_se,
           sum(honest_gap * trials) / sum(trials)                   AS honest_nash_gap,
           sum(sum_expl) / nullif(sum(valid), 0)                    AS mean_exploitability,
           sum(sum_gap) / nullif(sum(valid), 0)                     AS mean_nash_gap,
           avg(label_mass)                                          AS mean_label_mass
    FROM per_game
    GROUP BY mode, tier, provider, model
),
intervals AS (
    SELECT *,
           greatest(0.0, honest_exploitability - 1.959963984540054::DOUBLE * honest_se) AS ci95_low,
           honest_exploitability + 1.959963984540054::DOUBLE * honest_se AS ci95_high
    FROM models
)
SELECT
    a.mode,
    1 + count(b.model) FILTER (WHERE b.ci95_high < a.ci95_low)     AS rank,
    a.tier,
    a.provider,
    a.model,
    a.num_games,
    a.total_trials,
    a.valid_rate,
    a.honest_exploitability,
    a.ci95_low                                                     AS honest_exploitability_ci95_low,
    a.ci95_high                                                    AS honest_exploitability_ci95_high,
    string_agg(b.provider || ':' || b.model || coalesce(' (' || b.tier || ')', ''), ', '
               ORDER BY b.provider, b.model, b.tier)
        FILTER (WHERE (b.tier IS DISTINCT FROM a.tier OR b.provider <> a.provider
                       OR b.model <> a.model)
                AND NOT (b.ci95_high < a.ci95_low OR b.ci95_low > a.ci95_high)) AS tied_with,
    a.honest_nash_gap,
    a.mean_exploitability,
    a.mean_nash_gap,
    a.mean_label_mass
FROM intervals AS a
JOIN intervals AS b ON b.mode = a.mode
GROUP BY ALL
ORDER BY a.mode, rank, a.honest_exploitability, a.tier, a.model;
