-- Negotiation summary per (player, mode, lang) over the episodes table.
-- Each episode counts once for each seat: a model playing itself counts every episode twice.
-- Rates are over all episodes; mean_main_score, mean_sum_score_ratio, mean_own_score and
-- mean_comp_score are over episodes that were not aborted (their values are NULL otherwise);
-- pareto_optimal_rate counts aborted and lost episodes as not Pareto-optimal.
-- mean_comp_score is (own score - other's score) / 10 from the player's side.
-- clembench's aggregates (its dond scorer and leaderboard): clem_pct_played = 100 x the share
-- of episodes not aborted; clem_quality_score = mean of clembench's episode score over
-- episodes not aborted (coop: 100 x sum of scores / max_sum_score; semi: 100 x (1 -
-- pareto improvement / the larger player's total), 0 on lose; comp: 100 for any completed
-- episode); clemscore = clem_pct_played / 100 x clem_quality_score. The episode score is the
-- episodes view's clem_quality (q_score here), written out so the query also reads the raw
-- files.
WITH clem AS (
    -- clembench's pareto improvement (gap) and its normaliser, per episode.
    SELECT *,
           CASE mode WHEN 'coop' THEN max_sum_score - (CASE WHEN success THEN score_a + score_b ELSE 0 END)
                     WHEN 'semi' THEN (CASE WHEN success THEN max_pareto_improvement
                                            ELSE greatest(max_score_a, max_score_b) END)
                     ELSE 0 END                                             AS q_gap,
           CASE mode WHEN 'coop' THEN max_sum_score
                     WHEN 'semi' THEN greatest(max_score_a, max_score_b)
                     ELSE 0 END                                             AS q_norm
    FROM episodes
),
quality AS (
    SELECT *,
           CASE WHEN aborted THEN NULL WHEN mode = 'comp' THEN 100.0
                ELSE 100.0 * (1 - q_gap / nullif(q_norm, 0)) END           AS q_score
    FROM clem
),
seats AS (
    SELECT player_a AS player, 'a' AS seat, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_a AS own_score,
           comp_score AS own_comp_score, q_score
    FROM quality
    UNION ALL
    SELECT player_b AS player, 'b' AS seat, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_b AS own_score,
           -comp_score AS own_comp_score, q_score
    FROM quality
)
SELECT
    player,
    mode,
    lang,
    count(*)                                                        AS episodes,
    avg(CASE WHEN success THEN 1.0 ELSE 0.0 END)                    AS success_rate,
    avg(CASE WHEN lose THEN 1.0 ELSE 0.0 END)                       AS lose_rate,
    avg(CASE WHEN aborted THEN 1.0 ELSE 0.0 END)                    AS aborted_rate,
    avg(CASE WHEN abort_player = seat THEN 1.0 ELSE 0.0 END)        AS caused_abort_rate,
    avg(main_score)                                                 AS mean_main_score,
    avg(CASE WHEN coalesce(pareto_optimal, false) THEN 1.0 ELSE 0.0 END) AS pareto_optimal_rate,
    avg(sum_score_ratio)                                            AS mean_sum_score_ratio,
    avg(own_score)                                                  AS mean_own_score,
    avg(own_comp_score)                                             AS mean_comp_score,
    100.0 * avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END)            AS clem_pct_played,
    avg(q_score)                                                    AS clem_quality_score,
    avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) * avg(q_score)     AS clemscore
FROM seats
GROUP BY player, mode, lang
ORDER BY player, mode, lang;
