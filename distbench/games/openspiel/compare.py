"""How ``distbench compare`` cuts the openspiel family's rows (its ``Comparing.units`` hook):
unit = the match in one seat (game, seed, game index, seat), group = the game and the
opponent; its own metric: regret.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE_AND_REGRET, FamilyUnits, headline_sums

SQL = f"""
SELECT
    run_id,
    player_a                                                         AS player,
    game || ' vs ' || player_b                                       AS grp,
    game || '/s' || CAST(seed AS VARCHAR) || '/g' || CAST(game_index AS VARCHAR)
         || '/seat' || CAST(seat_a AS VARCHAR)                       AS unit,
{headline_sums("quality_a", "quality_a IS NOT NULL AND forfeit_seat IS DISTINCT FROM seat_a", "regret_a")}
FROM matches
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("openspiel", "matches", "matches", SQL,
                    HEADLINE_AND_REGRET,
                    "games, seeds or opponents", ("matches",))
