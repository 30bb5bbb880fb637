-- Report: per tier x mode x game, the sum and count of the valid answers' Nash gaps: the
-- clusters of the tier gradient's bootstrap (games are resampled, not trials).
SELECT
    tier,
    mode,
    game_id,
    count(*)                                         AS trials,
    count(*) FILTER (WHERE parse_status = 'ok')      AS valid,
    coalesce(sum(nash_gap) FILTER (WHERE parse_status = 'ok'), 0) AS gap_sum
FROM trials
WHERE family = 'matrix'
GROUP BY tier, mode, game_id
ORDER BY tier NULLS FIRST, mode, game_id;
