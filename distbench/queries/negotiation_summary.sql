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
-- The headline (README, "The headline"): quality, per seat in [0, 1], main_score / 100 for
-- a deal (0 for no deal) and 0 when aborted (an invalid move, whoever made it, as clembench),
-- averaged over the answered episodes: an episode aborted because a model call failed at the
-- server is not the model's and is left out of every figure here (missing_episodes counts
-- it). valid_rate = share of answered episodes not aborted (clembench's % played / 100);
-- quality_of_valid over those; quality = valid_rate x quality_of_valid.
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
    SELECT player_a AS player, 'a' AS seat, instance_id, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_a AS own_score,
           comp_score AS own_comp_score, q_score, abort_reason
    FROM quality
    UNION ALL
    SELECT player_b AS player, 'b' AS seat, instance_id, mode, lang, success, lose, aborted, abort_player,
           main_score, pareto_optimal, sum_score_ratio, score_b AS own_score,
           -comp_score AS own_comp_score, q_score, abort_reason
    FROM quality
),
scored AS (
    SELECT *,
           abort_reason IS DISTINCT FROM 'call_failed'                      AS answered,
           CASE WHEN abort_reason IS NOT DISTINCT FROM 'call_failed' THEN NULL
                WHEN aborted THEN 0.0
                ELSE greatest(0.0, least(1.0, coalesce(main_score, 0.0) / 100.0)) END
                                                                             AS quality
    FROM seats
)
SELECT
    player,
    mode,
    lang,
    count(*) FILTER (WHERE answered)                                AS episodes,
    count(*) FILTER (WHERE NOT answered)                            AS missing_episodes,
    avg(quality)                                                    AS quality,
    avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) FILTER (WHERE answered) AS valid_rate,
    avg(quality) FILTER (WHERE answered AND NOT aborted)            AS quality_of_valid,
    avg(CASE WHEN success THEN 1.0 ELSE 0.0 END) FILTER (WHERE answered) AS success_rate,
    avg(CASE WHEN lose THEN 1.0 ELSE 0.0 END) FILTER (WHERE answered) AS lose_rate,
    avg(CASE WHEN aborted THEN 1.0 ELSE 0.0 END) FILTER (WHERE answered) AS aborted_rate,
    avg(CASE WHEN abort_player = seat THEN 1.0 ELSE 0.0 END) FILTER (WHERE answered)
                                                                    AS caused_abort_rate,
    avg(main_score) FILTER (WHERE answered)                         AS mean_main_score,
    avg(CASE WHEN coalesce(pareto_optimal, false) THEN 1.0 ELSE 0.0 END) FILTER (WHERE answered)
                                                                    AS pareto_optimal_rate,
    avg(sum_score_ratio) FILTER (WHERE answered)                    AS mean_sum_score_ratio,
    avg(own_score) FILTER (WHERE answered)                          AS mean_own_score,
    avg(own_comp_score) FILTER (WHERE answered)                     AS mean_comp_score,
    100.0 * avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) FILTER (WHERE answered)
                                                                    AS clem_pct_played,
    avg(q_score) FILTER (WHERE answered)                            AS clem_quality_score,
    avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) FILTER (WHERE answered)
        * avg(q_score) FILTER (WHERE answered)                      AS clemscore
FROM scored
GROUP BY player, mode, lang
ORDER BY player, mode, lang;
