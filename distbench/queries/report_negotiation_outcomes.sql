-- Report: negotiation outcomes per player x mode x lang. Each episode counts once per seat.
-- mean_main_score is over episodes that were not aborted; pareto_optimal_rate counts aborted
-- and lost episodes as not Pareto-optimal.
WITH seats AS (
    SELECT player_a AS player, mode, lang, success, lose, aborted, main_score, pareto_optimal
    FROM episodes
    UNION ALL
    SELECT player_b, mode, lang, success, lose, aborted, main_score, pareto_optimal
    FROM episodes
)
SELECT
    player,
    mode,
    lang,
    count(*)                                                         AS episodes,
    share(success)                                                   AS success_share,
    share(lose)                                                      AS lose_share,
    share(aborted)                                                   AS aborted_share,
    avg(main_score)                                                  AS mean_main_score,
    share(coalesce(pareto_optimal, false))                           AS pareto_optimal_rate
FROM seats
GROUP BY player, mode, lang
ORDER BY player, mode, lang;
