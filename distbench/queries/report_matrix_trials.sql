-- Report: the valid matrix trials (one row each), for the nash_gap / exploitability box plots.
SELECT bucket, provider, model, tier, mode, game_id, trial, nash_gap, exploitability
FROM trials
WHERE family = 'matrix' AND parse_status = 'ok'
ORDER BY bucket, provider, model, mode, game_id, trial;
