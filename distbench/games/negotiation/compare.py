"""How ``distbench compare`` cuts the negotiation family's rows (its ``Comparing.units`` hook):
unit = the instance (``instance_id``), group = mode, language and opponent.
"""

from __future__ import annotations

from distbench.report.compare import HEADLINE, FamilyUnits, answered_sums, unit_sql

# Per seat: quality main_score / 100 on a deal, 0 on no deal or an abort; an episode aborted
# by a failed call is left out (README, "The headline").
SQL = unit_sql(
    "scored",
    before="""WITH seats AS (
    SELECT run_id, player_a AS player, player_b AS opponent, mode, lang, instance_id, aborted,
           main_score, abort_reason
    FROM episodes
    UNION ALL
    SELECT run_id, player_b, player_a, mode, lang, instance_id, aborted, main_score,
           abort_reason
    FROM episodes
),
scored AS (
    SELECT *, abort_reason IS DISTINCT FROM 'call_failed' AS answered,
           CASE WHEN abort_reason IS NOT DISTINCT FROM 'call_failed' THEN NULL
                WHEN aborted THEN 0.0
                ELSE greatest(0.0, least(1.0, coalesce(main_score, 0.0) / 100.0)) END AS quality
    FROM seats
)""",
    player="player",
    grp="mode || '/' || lang || ' vs ' || CASE WHEN opponent = player THEN 'self' ELSE opponent END",
    unit="instance_id",
    sums=answered_sums("answered", "NOT aborted"))

UNITS = FamilyUnits("negotiation", "episodes", "instances", SQL,
                    HEADLINE,
                    "seeds, modes, languages or opponents", ("episodes",))
