-- Negotiation summary per (player, mode, lang) over the episodes table.
-- Each episode counts once for each seat: a model playing itself counts every episode twice.
-- Rates are over all episodes; mean_main_score, mean_sum_score_ratio, mean_own_score and
-- mean_comp_score are over episodes that were not aborted (their values are NULL otherwise);
-- pareto_optimal_rate counts aborted and lost episodes as not Pareto-optimal.
-- mean_comp_score is (own score - other's score) / 10 from the player's side.
WITH seats AS (
    SELECT player_a AS player, 'a' AS seat, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_a AS own_score,
           comp_score AS own_comp_score
    FROM episodes
    UNION ALL
    SELECT player_b AS player, 'b' AS seat, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_b AS own_score,
           -comp_score AS own_comp_score
    FROM episodes
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
    avg(own_comp_score)                                             AS mean_comp_score
FROM seats
GROUP BY player, mode, lang
ORDER BY player, mode, lang;
