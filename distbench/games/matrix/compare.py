"""How ``distbench compare`` cuts the matrix family's rows (its ``Comparing.units`` hook):
unit = the game (``game_id`` = bucket, seed, game index), group = the answer mode; its own
metrics: exploitability and Nash gap over valid answers.
"""

from __future__ import annotations

from distbench.report.compare import (
    HEADLINE,
    VALID_ONLY,
    FamilyUnits,
    Metric,
    select_items,
    unit_sql,
)


# quality_of_valid: the mean quality of the valid answers (a valid answer's quality).
def _valid_finite(column: str, metric: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """A metric's sum and count: a column over the valid answers where it is finite."""
    where = f"FILTER (WHERE parse_status = 'ok' AND isfinite({column}))"
    return (f"sum({column}) {where}", f"{metric}_sum"), (f"count({column}) {where}", f"{metric}_n")


SQL = unit_sql(
    "matrix_scored",
    player="provider || ':' || model",
    grp="mode",
    unit="game_id",
    sums=select_items(
        ("sum(quality) FILTER (WHERE isfinite(quality))", "quality_sum"),
        ("count(quality) FILTER (WHERE isfinite(quality))", "quality_n"),
        ("CAST(count(*) FILTER (WHERE parse_status = 'ok') AS DOUBLE)", "valid_rate_sum"),
        ("count(*) FILTER (WHERE answered)", "valid_rate_n"),
        *_valid_finite("quality", "quality_of_valid"),
        *_valid_finite("exploitability", "exploitability"),
        *_valid_finite("nash_gap", "nash_gap")))

UNITS = FamilyUnits("matrix", "trials", "games", SQL,
                    (*HEADLINE, Metric("exploitability", "lower", VALID_ONLY),
                     Metric("nash_gap", "lower", VALID_ONLY)),
                    "buckets, seeds or answer modes", ("trials", "games"))
