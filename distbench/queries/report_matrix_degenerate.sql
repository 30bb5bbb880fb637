-- Report: per bucket, the share of games whose Nash gap is degenerate (0 for every answer).
SELECT
    bucket,
    count(*)                                             AS games,
    count(*) FILTER (WHERE gap_degenerate)               AS degenerate_games,
    share(gap_degenerate)                                AS degenerate_share
FROM games
WHERE family = 'matrix'
GROUP BY bucket
ORDER BY bucket;
