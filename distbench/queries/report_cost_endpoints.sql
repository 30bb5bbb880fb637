-- Report: cost and speed per endpoint and model: calls, tokens, failures, retries (attempts
-- beyond the first), cache hits, and latency percentiles (ms: time on the wire of the last
-- attempt) and the median queue time (ms waiting for the rate limiter, a slot or a back-off) of
-- the calls not answered from the cache.
SELECT
    endpoint,
    model,
    count(*)                                                   AS calls,
    coalesce(sum(prompt_tokens), 0)                            AS prompt_tokens,
    coalesce(sum(completion_tokens), 0)                        AS completion_tokens,
    count(*) FILTER (WHERE status <> 'ok')                     AS failures,
    coalesce(sum(greatest(attempts - 1, 0)), 0)                AS retries,
    count(*) FILTER (WHERE cache_hit)                          AS cache_hits,
    quantile_cont(latency_ms, 0.5) FILTER (WHERE NOT cache_hit)  AS latency_p50_ms,
    quantile_cont(latency_ms, 0.9) FILTER (WHERE NOT cache_hit)  AS latency_p90_ms,
    quantile_cont(latency_ms, 0.99) FILTER (WHERE NOT cache_hit) AS latency_p99_ms,
    quantile_cont(queue_ms, 0.5) FILTER (WHERE NOT cache_hit)    AS queue_p50_ms
FROM calls
GROUP BY endpoint, model
ORDER BY endpoint, model;
