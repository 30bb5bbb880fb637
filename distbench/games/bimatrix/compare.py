"""How ``distbench compare`` cuts the bimatrix family's rows (its ``Comparing.units`` hook):
unit = the game (``game_id`` = game set, seed, game index), group = the seat, the answer
mode and the opponent (``eq1``, ``uniform``, ``self``, a model, ...); its own metric: regret
over valid answers.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE_AND_REGRET, FamilyUnits, headline_sums, unit_sql

# Per trial, the bimatrix_trials quality: NULL when a call of the model failed or another model
# opponent's answer was invalid (left out); valid: answered and both answers it rests on parsed.
SQL = unit_sql(
    "scored",
    before="""WITH scored AS (
    SELECT *, quality IS NOT NULL AND parse_status = 'ok' AND opponent_status = 'ok' AS valid
    FROM bimatrix_trials
)""",
    player="provider || ':' || model",
    grp="seat || '/' || mode || ' vs ' || opponent",
    unit="game_id",
    sums=headline_sums("quality", "valid", "regret", regret_of_valid=True))

UNITS = FamilyUnits("bimatrix", "bimatrix_trials", "games", SQL,
                    HEADLINE_AND_REGRET,
                    "game sets, seeds, seats, modes or opponents", ("bimatrix_trials",))
