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


# The same seats, per (player, mode, lang) and instance: the units of the headline's bootstrap.
_UNITS_SQL = SUMMARY_SQL[:SUMMARY_SQL.index("SELECT\n    player,")] + """
SELECT player, mode, lang, instance_id,
       coalesce(sum(quality), 0.0) AS q, count(*) FILTER (WHERE answered AND NOT aborted) AS v,
       count(*) FILTER (WHERE answered) AS n
FROM scored GROUP BY ALL ORDER BY player, mode, lang, instance_id
"""


def negotiation_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Summary records from a DuckDB connection with an ``episodes`` view (in SQL; the
    headline's intervals are bootstraps over instances, here: ``offload``, a run's place for
    numeric work, is not used)."""
    from distbench.report.headline import headline

    result = con.execute(SUMMARY_SQL)
    names = [d[0] for d in result.description]
    records = [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    units: dict[tuple, list[tuple]] = {}
    for player, mode, lang, _, q, v, n in con.execute(_UNITS_SQL).fetchall():
        units.setdefault((player, mode, lang), []).append((q, v, n))
    for r in records:
        cols = list(zip(*units.get((r["player"], r["mode"], r["lang"]), []), strict=True))
        if not cols:
            continue
        h = headline(cols[0], cols[1], cols[2], int(r["missing_episodes"] or 0))
        for name in ("quality", "valid_rate", "quality_of_valid"):
            ci = getattr(h, f"{name}_ci95")
            r[f"{name}_ci95"] = list(ci) if ci and getattr(h, name) is not None else None
    return records


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The negotiation summary for the terminal: per player, mode and language, the headline
    (quality) with its interval and its components first, then the outcome
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
        q_low, q_high = r.get("quality_ci95") or (None, None)
        rows.append((r["player"], r["mode"], r["lang"], n, r.get("missing_episodes"),
                     r.get("quality"), q_low, q_high, r.get("valid_rate"),
                     r.get("quality_of_valid"), r["success_rate"], low, high,
                     r["lose_rate"], r["aborted_rate"], r["mean_main_score"],
                     r["pareto_optimal_rate"], r.get("clem_pct_played"),
                     r.get("clem_quality_score"), r.get("clemscore")))
    return format_console(Table(
        "negotiation_summary", "Negotiation",
        ["player", "mode", "lang", "episodes", "missing", "quality", "quality_ci95_low",
         "quality_ci95_high", "valid", "quality of valid", "success", "success_ci95_low",
         "success_ci95_high", "no deal", "aborted", "main score", "Pareto-optimal",
         "clem % played", "clem quality", "clemscore"], rows,
        note="quality (the headline): per seat, main score / 100 for a deal, 0 for no deal "
             "or an abort, over the answered episodes (missing: aborted by a failed model "
             "call, left out of every figure); valid: share not aborted; quality = valid x "
             "quality of valid. Shares of episodes (each counted once per seat). main score: 0-100, 100 = "
             "Pareto-optimal deal, over episodes not aborted; clem columns as clembench "
             "defines them (clemscore = % played / 100 x quality).", keys=3), width)
