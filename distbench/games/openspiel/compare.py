"""How ``distbench compare`` cuts the openspiel family's rows (its ``Comparing.units`` hook):
unit = the match in one seat (game, seed, game index, seat), group = the game and the
opponent; its own metric: regret.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE_AND_REGRET, FamilyUnits, headline_sums, unit_sql

SQL = unit_sql(
    "matches",
    player="player_a",
    grp="game || ' vs ' || player_b",
    unit="game || '/s' || CAST(seed AS VARCHAR) || '/g' || CAST(game_index AS VARCHAR)"
         " || '/seat' || CAST(seat_a AS VARCHAR)",
    sums=headline_sums("quality_a", "quality_a IS NOT NULL AND forfeit_seat IS DISTINCT FROM seat_a",
                       "regret_a"))

UNITS = FamilyUnits("openspiel", "matches", "matches", SQL,
                    HEADLINE_AND_REGRET,
                    "games, seeds or opponents", ("matches",))
