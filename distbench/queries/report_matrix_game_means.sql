-- Report: per model x mode x game, the mean Nash gap of the valid answers: the units of the
-- paired model comparisons (models are played on identical games).
SELECT
    provider,
    model,
    mode,
    game_id,
    count(*)       AS valid,
    avg(nash_gap)  AS mean_nash_gap
FROM trials
WHERE family = 'matrix' AND parse_status = 'ok'
GROUP BY provider, model, mode, game_id
ORDER BY provider, model, mode, game_id;
