-- Report: rows per table, to decide which sections the report shows.
SELECT
    (SELECT count(*) FROM trials)      AS trials,
    (SELECT count(*) FROM games)       AS games,
    (SELECT count(*) FROM episodes)    AS episodes,
    (SELECT count(*) FROM fog_games)   AS fog_games,
    (SELECT count(*) FROM fog_reports) AS fog_reports,
    (SELECT count(*) FROM calls)       AS calls;
