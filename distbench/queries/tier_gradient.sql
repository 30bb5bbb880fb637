-- Does a higher tier play better? Per tier and mode over all buckets, models and seeds: over
-- valid answers, and honest (over all trials, an invalid answer scored as chance).
WITH scored AS (
    -- Honest scores: an invalid answer scores as chance on its game (games.uniform_*: the
    -- uniform strategy; in pure mode a uniformly random pure action's expected exploitability).
    SELECT t.*,
           CASE WHEN t.parse_status = 'ok' THEN t.nash_gap ELSE g.uniform_nash_gap END
               AS honest_gap,
           CASE WHEN t.parse_status = 'ok' THEN t.exploitability
                WHEN t.mode = 'pure' THEN g.uniform_pure_exploitability
                ELSE g.uniform_exploitability END AS honest_expl
    FROM trials AS t
    LEFT JOIN (SELECT DISTINCT run_id, game_id, uniform_nash_gap, uniform_exploitability,
                               uniform_pure_exploitability FROM games) AS g
        USING (run_id, game_id)
    WHERE t.family = 'matrix'
)
SELECT
    tier,
    mode,
    count(DISTINCT model)                                      AS num_models,
    count(*)                                                   AS total_trials,
    avg(CASE WHEN parse_status = 'ok' THEN 1.0 ELSE 0.0 END)   AS valid_rate,
    avg(nash_gap)                                              AS mean_nash_gap,
    avg(exploitability)                                        AS mean_exploitability,
    avg(honest_gap)                                            AS honest_nash_gap,
    avg(honest_expl)                                           AS honest_exploitability
FROM scored
GROUP BY tier, mode
ORDER BY mode, tier;
