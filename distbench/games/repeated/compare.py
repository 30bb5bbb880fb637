"""How ``distbench compare`` cuts the repeated family's rows (its ``Comparing.units`` hook):
unit = the match (``match_id`` = stage, opponent, seed, match index: the same stage game in
every run), group = the stage, the horizon or continuation probability and the opponent; its
own metric: regret over complete matches against a machine.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE_AND_REGRET, FamilyUnits, headline_sums, unit_sql

# Per match, the repeated_matches quality: a forfeit 0, NULL for a match ended by a failed call
# or another model's invalid answer (left out); valid = complete.
SQL = unit_sql(
    "repeated_matches",
    player="provider || ':' || model",
    grp="stage || CASE WHEN horizon IS NOT NULL THEN ' T=' || CAST(horizon AS VARCHAR)"
        " ELSE ' p=' || CAST(continuation AS VARCHAR) END || ' vs ' || opponent",
    unit="match_id",
    sums=headline_sums("quality", "quality IS NOT NULL AND status = 'complete'", "regret"))

UNITS = FamilyUnits("repeated", "repeated_matches", "matches", SQL,
                    HEADLINE_AND_REGRET,
                    "stages, seeds, horizons or opponents", ("repeated_matches",))
