"""How ``distbench compare`` cuts the openspiel family's rows (its ``Comparing.units`` hook):
unit = the match in one seat (game, seed, game index, seat), group = the game and the
opponent; its own metric: regret.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE, VALID_ONLY, FamilyUnits, Metric

SQL = """
SELECT
    run_id,
    player_a                                                         AS player,
    game || ' vs ' || player_b                                       AS grp,
    game || '/s' || CAST(seed AS VARCHAR) || '/g' || CAST(game_index AS VARCHAR)
         || '/seat' || CAST(seat_a AS VARCHAR)                       AS unit,
    sum(quality_a) FILTER (WHERE isfinite(quality_a))                AS quality_sum,
    count(quality_a) FILTER (WHERE isfinite(quality_a))              AS quality_n,
    CAST(count(*) FILTER (WHERE quality_a IS NOT NULL
                          AND forfeit_seat IS DISTINCT FROM seat_a) AS DOUBLE)
                                                                     AS valid_rate_sum,
    count(quality_a)                                                 AS valid_rate_n,
    sum(quality_a) FILTER (WHERE forfeit_seat IS DISTINCT FROM seat_a
                           AND isfinite(quality_a))                  AS quality_of_valid_sum,
    count(quality_a) FILTER (WHERE forfeit_seat IS DISTINCT FROM seat_a
                             AND isfinite(quality_a))                AS quality_of_valid_n,
    sum(regret_a) FILTER (WHERE isfinite(regret_a))                  AS regret_sum,
    count(regret_a) FILTER (WHERE isfinite(regret_a))                AS regret_n
FROM matches
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("openspiel", "matches", "matches", SQL,
                    (*HEADLINE, Metric("regret", "lower", VALID_ONLY)),
                    "games, seeds or opponents", ("matches",))
