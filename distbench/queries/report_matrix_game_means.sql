-- Report: per model x mode x game, the valid-answer rate and, over the valid answers, the mean
-- Nash gap and mean exploitability: the units of the paired model comparisons (models are
-- played on identical games). A game without a valid answer has NULL gap and exploitability.
SELECT
    provider,
    model,
    mode,
    game_id,
    count(*) FILTER (WHERE parse_status = 'ok')                AS valid,
    share(parse_status = 'ok')                                 AS valid_rate,
    avg(nash_gap) FILTER (WHERE parse_status = 'ok')           AS mean_nash_gap,
    avg(exploitability) FILTER (WHERE parse_status = 'ok')     AS mean_exploitability
FROM trials
WHERE family = 'matrix'
GROUP BY provider, model, mode, game_id
ORDER BY provider, model, mode, game_id;
