"""How ``distbench compare`` cuts the bimatrix family's rows (its ``Comparing.units`` hook):
unit = the game (``game_id`` = game set, seed, game index), group = the seat, the answer
mode and the opponent (``eq1``, ``uniform``, ``self``, a model, ...); its own metric: regret
over valid answers.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE, VALID_ONLY, FamilyUnits, Metric

# Per trial, the bimatrix_trials quality: NULL when a call of the model failed or another model
# opponent's answer was invalid (left out); valid: answered and both answers it rests on parsed.
SQL = """
WITH scored AS (
    SELECT *, quality IS NOT NULL AND parse_status = 'ok' AND opponent_status = 'ok' AS valid
    FROM bimatrix_trials
)
SELECT
    run_id,
    provider || ':' || model                                         AS player,
    seat || '/' || mode || ' vs ' || opponent                        AS grp,
    game_id                                                          AS unit,
    sum(quality) FILTER (WHERE isfinite(quality))                    AS quality_sum,
    count(quality) FILTER (WHERE isfinite(quality))                  AS quality_n,
    CAST(count(*) FILTER (WHERE valid) AS DOUBLE)                    AS valid_rate_sum,
    count(quality)                                                   AS valid_rate_n,
    sum(quality) FILTER (WHERE valid AND isfinite(quality))          AS quality_of_valid_sum,
    count(quality) FILTER (WHERE valid AND isfinite(quality))        AS quality_of_valid_n,
    sum(regret) FILTER (WHERE valid AND isfinite(regret))            AS regret_sum,
    count(regret) FILTER (WHERE valid AND isfinite(regret))          AS regret_n
FROM scored
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

UNITS = FamilyUnits("bimatrix", "bimatrix_trials", "games", SQL,
                    (*HEADLINE, Metric("regret", "lower", VALID_ONLY)),
                    "game sets, seeds, seats, modes or opponents", ("bimatrix_trials",))
