-- Report: per player x mode x lang x instance, the sum and count of the main scores of the
-- player's non-aborted episodes (each seat counts): bootstrap clusters and paired-comparison
-- units (every player meets the same instances).
WITH seats AS (
    SELECT player_a AS player, mode, lang, instance_id, main_score FROM episodes
    UNION ALL
    SELECT player_b, mode, lang, instance_id, main_score FROM episodes
)
SELECT
    player,
    mode,
    lang,
    instance_id,
    count(main_score)              AS scored,
    coalesce(sum(main_score), 0)   AS score_sum
FROM seats
GROUP BY player, mode, lang, instance_id
ORDER BY player, mode, lang, instance_id;
