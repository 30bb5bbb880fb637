"""The run summary of the negotiation family: one record per (player, mode, lang).

The SQL is ``queries/negotiation_summary.sql``, shipped inside the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The SQL lives once, in the packaged ``queries/negotiation_summary.sql`` (also usable with
# ``distbench query --file negotiation_summary``).
SUMMARY_SQL = (Path(__file__).resolve().parents[2] / "queries" / "negotiation_summary.sql").read_text(
    encoding="utf-8"
)


def negotiation_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Summary records from a DuckDB connection with an ``episodes`` view (all in SQL, so
    ``offload``, a run's place for numeric work, is not used)."""
    result = con.execute(SUMMARY_SQL)
    names = [d[0] for d in result.description]
    rows = result.fetchall()
    return [dict(zip(names, row, strict=True)) for row in rows]


def format_summary(records: list[dict[str, Any]]) -> str:
    """The negotiation summary for the terminal: per player, mode and language, the outcome
    shares (success = a deal), the success rate's 95% Wilson interval, distbench's main score
    and Pareto-optimal rate, and clembench's % played, quality and clemscore."""
    from distbench.report.document import Table, format_console
    from distbench.report.stats import wilson_interval

    if not records:
        return "no episodes"
    rows = []
    for r in records:
        n = int(r["episodes"])
        low, high = wilson_interval(round((r["success_rate"] or 0) * n), n) if n else (None, None)
        rows.append((r["player"], r["mode"], r["lang"], n, r["success_rate"], low, high,
                     r["lose_rate"], r["aborted_rate"], r["mean_main_score"],
                     r["pareto_optimal_rate"], r.get("clem_pct_played"),
                     r.get("clem_quality_score"), r.get("clemscore")))
    return format_console(Table(
        "negotiation_summary", "Negotiation",
        ["player", "mode", "lang", "episodes", "success", "success_ci95_low",
         "success_ci95_high", "no deal", "aborted", "main score", "Pareto-optimal",
         "clem % played", "clem quality", "clemscore"], rows,
        note="Shares of episodes (each counted once per seat). main score: 0-100, 100 = "
             "Pareto-optimal deal, over episodes not aborted; clem columns as clembench "
             "defines them (clemscore = % played / 100 x quality)."))
