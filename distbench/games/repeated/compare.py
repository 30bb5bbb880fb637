"""How ``distbench compare`` cuts the repeated family's rows (its ``Comparing.units`` hook):
unit = the match (``match_id`` = stage, opponent, seed, match index: the same stage game in
every run), group = the stage, the horizon or continuation probability and the opponent; its
own metric: regret over complete matches against a machine.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE_AND_REGRET, FamilyUnits, headline_sums

# Per match, the repeated_matches quality: a forfeit 0, NULL for a match ended by a failed call
# or another model's invalid answer (left out); valid = complete.
SQL = f"""
SELECT
    run_id,
    provider || ':' || model                                         AS player,
    stage || CASE WHEN horizon IS NOT NULL THEN ' T=' || CAST(horizon AS VARCHAR)
                  ELSE ' p=' || CAST(continuation AS VARCHAR) END
          || ' vs ' || opponent                                      AS grp,
    match_id                                                         AS unit,
{headline_sums("quality", "quality IS NOT NULL AND status = 'complete'", "regret")}
FROM repeated_matches
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("repeated", "repeated_matches", "matches", SQL,
                    HEADLINE_AND_REGRET,
                    "stages, seeds, horizons or opponents", ("repeated_matches",))
