-- Report: stated (mode 'mixed') versus read (mode 'logprob') strategy: per model, game and row
-- action, the mean probability over valid trials in each mode; only where both exist.
WITH probs AS (
    SELECT provider, model, mode, game_id,
           unnest(range(len(strategy))) AS action,
           unnest(strategy)             AS p
    FROM trials
    WHERE family = 'matrix' AND parse_status = 'ok' AND strategy IS NOT NULL
      AND mode IN ('mixed', 'logprob')
),
means AS (
    SELECT provider, model, game_id, action,
           avg(p) FILTER (WHERE mode = 'mixed')   AS stated,
           avg(p) FILTER (WHERE mode = 'logprob') AS read
    FROM probs
    GROUP BY provider, model, game_id, action
)
SELECT provider, model, game_id, action, stated, read
FROM means
WHERE stated IS NOT NULL AND read IS NOT NULL
ORDER BY provider, model, game_id, action;
