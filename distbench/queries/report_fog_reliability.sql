-- Report: reliability diagram data per agent. Every belief probability of a valid report about
-- a living enemy force is one forecast; its outcome is 1 when the force's true power is that
-- power. Forecasts are binned into ten equal-width bins of probability.
WITH forces AS (
    SELECT agent, beliefs, true_powers, enemy_alive,
           unnest(range(1, len(beliefs) + 1)) AS k
    FROM fog_reports
    WHERE report_status = 'ok' AND beliefs IS NOT NULL
),
forecasts AS (
    SELECT agent, beliefs[k] AS belief, true_powers[k] AS truth,
           unnest(range(1, len(beliefs[k]) + 1)) AS power
    FROM forces
    WHERE enemy_alive[k]
),
scored AS (
    SELECT agent, belief[power] AS p, CASE WHEN truth = power THEN 1.0 ELSE 0.0 END AS hit
    FROM forecasts
)
SELECT
    agent,
    least(CAST(floor(p * 10) AS INTEGER), 9)  AS bin,
    count(*)                                  AS forecasts,
    avg(p)                                    AS mean_forecast,
    avg(hit)                                  AS observed_frequency
FROM scored
GROUP BY agent, bin
ORDER BY agent, bin;
