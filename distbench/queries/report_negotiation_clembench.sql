-- Report: clembench's aggregates per player x mode x lang, and per player over every mode and
-- language (mode = lang = 'all': clembench's figures for the whole game). Each episode counts
-- once per seat. pct_played = 100 x the share of episodes not aborted; quality_score = mean of
-- clembench's episode score (episodes.clem_quality: coop 100 x sum / max sum, semi
-- 100 x (1 - pareto improvement / the larger player's total) and 0 on lose, comp 100) over
-- episodes not aborted; clemscore = pct_played / 100 x quality_score. Beside them distbench's
-- own: mean_main_score (Pareto score) and mean_comp_score ((own - other's score) / 10).
WITH seats AS (
    SELECT player_a AS player, mode, lang, aborted, clem_quality, main_score,
           comp_score AS own_comp_score
    FROM episodes
    UNION ALL
    SELECT player_b, mode, lang, aborted, clem_quality, main_score, -comp_score
    FROM episodes
)
SELECT
    player,
    coalesce(mode, 'all')                                          AS mode,
    coalesce(lang, 'all')                                          AS lang,
    count(*)                                                       AS episodes,
    100.0 * avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END)           AS pct_played,
    avg(clem_quality)                                              AS quality_score,
    avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) * avg(clem_quality) AS clemscore,
    avg(main_score)                                                AS mean_main_score,
    avg(own_comp_score)                                            AS mean_comp_score
FROM seats
GROUP BY GROUPING SETS ((player, mode, lang), (player))
ORDER BY player, mode IS NULL, mode, lang;
