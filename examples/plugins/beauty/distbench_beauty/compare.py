"""How ``distbench compare`` cuts the beauty family's rows (its ``Comparing.units`` hook):
unit = the game (``game_id``: seed, game index, players, p), group = the number of players and
p; quality = 1 - regret / 100 of a valid guess (a best response 1), an invalid answer 0, a
failed call left out; its own metric: the distance to the target over valid guesses."""

from __future__ import annotations

from distbench.report.compare import HEADLINE, VALID_ONLY, FamilyUnits, Metric

SQL = """
WITH scored AS (
    SELECT *, parse_status <> 'call_failed' AS answered, parse_status = 'ok' AS valid,
           CASE WHEN parse_status = 'call_failed' THEN NULL
                WHEN parse_status = 'ok' THEN greatest(0.0, 1.0 - regret / 100.0)
                ELSE 0.0 END AS quality
    FROM beauty_games
)
SELECT
    run_id,
    player,
    'n=' || CAST(num_players AS VARCHAR) || ' p=' || CAST(fraction AS VARCHAR) AS grp,
    game_id                                                          AS unit,
    sum(quality)                                                     AS quality_sum,
    count(quality)                                                   AS quality_n,
    CAST(count(*) FILTER (WHERE valid) AS DOUBLE)                    AS valid_rate_sum,
    count(*) FILTER (WHERE answered)                                 AS valid_rate_n,
    sum(quality) FILTER (WHERE valid)                                AS quality_of_valid_sum,
    count(quality) FILTER (WHERE valid)                              AS quality_of_valid_n,
    sum(distance) FILTER (WHERE valid AND isfinite(distance))        AS distance_sum,
    count(distance) FILTER (WHERE valid AND isfinite(distance))      AS distance_n
FROM scored
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("beauty", "beauty_games", "games", SQL,
                    (*HEADLINE, Metric("distance", "lower", VALID_ONLY)),
                    "seeds, numbers of players or fractions", ("beauty_games",))
