"""The repeated family's summary: per (stage, opponent, model), the headline first (README,
"The headline"): ``quality`` (the mean quality of the answered matches, a forfeit 0; matches
ended by a failed call or another model's invalid answer are left out and counted as
``missing``), the valid rate (complete / answered) and the quality of complete matches; then
the means of the match metrics; each with its 95% interval (a bootstrap over matches,
:mod:`distbench.report.bootstrap`). A group with nothing answered has no headline (None)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from distbench.report.bootstrap import finish_intervals, start_bootstrap_ci
from distbench.report.document import summary_lines
from distbench.report.headline import headline, headline_cell, with_interval
from distbench.store.catalog import cursor_records

METRICS: tuple[tuple[str, str], ...] = (
    ("complete_rate", "(status = 'complete')::double"),
    ("mean_total", "total"),
    ("mean_payoff", "mean_payoff"),
    ("mean_regret", "regret"),
    ("cooperation", "cooperation_rate"),
    ("retaliation", "retaliation_rate"),
    ("forgiveness", "forgiveness_rate"),
    ("exploitation", "exploitation"),
    ("brier", "brier"),
    ("log_loss", "log_loss"),
)
HEADLINE = ("quality", "valid_rate", "quality_of_valid")
KEYS = ("stage", "opponent", "provider", "model")
_SQL = ("SELECT " + ", ".join(KEYS) + ", count(*) AS n, "
        + ", ".join(f"list({expr} ORDER BY match_id) AS v_{name}" for name, expr in METRICS)
        + ", list(quality ORDER BY match_id) AS h_quality"
        + ", list(status ORDER BY match_id) AS h_status"
        + " FROM repeated_matches GROUP BY ALL ORDER BY ALL")


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """One record per (stage, opponent, model): ``matches``, the headline's fields
    (:meth:`distbench.report.headline.Headline.record`: ``quality``, ``quality_ci95``,
    ``valid_rate``, ..., ``answered``, ``missing``) and each metric's mean over the matches
    where it is defined, with ``<metric>_lo`` / ``<metric>_hi`` (95%)."""
    names = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    names |= {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    if "repeated_matches" not in names:
        return []
    pending = []
    for rec in cursor_records(con.execute(_SQL)):
        out = {k: rec[k] for k in KEYS}
        out["matches"] = rec["n"]
        quality = list(rec["h_quality"])
        answered = [q is not None for q in quality]
        h = headline([q or 0.0 for q in quality],
                     [float(st == "complete" and a) for st, a in
                      zip(rec["h_status"], answered, strict=True)],
                     [float(a) for a in answered], answered.count(False))
        out.update(h.record())
        for name in HEADLINE:
            out[f"{name}_lo"], out[f"{name}_hi"] = out[f"{name}_ci95"] or (None, None)
        waits = {}
        for name, _ in METRICS:
            values = np.array([v for v in rec[f"v_{name}"] if v is not None], dtype=np.float64)
            out[name] = float(values.mean()) if len(values) else None
            if len(values) > 1:
                waits[name] = start_bootstrap_ci(values, np.ones(len(values)), offload)
        pending.append((out, waits))
    return finish_intervals(pending, [name for name, _ in METRICS])


def _fmt(rec: dict[str, Any], name: str) -> str:
    value = rec.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return with_interval(value, rec.get(f"{name}_lo"), rec.get(f"{name}_hi"))


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The console summary: per opponent, the headline first (quality, valid rate and quality
    of complete matches with their 95% intervals, ``missing`` matches left out), then mean
    total, regret, cooperation, retaliation and forgiveness, each with its 95% interval."""
    if not records:
        return "no repeated matches"
    head = ("stage", "opponent", "matches", "missing", "quality [95% CI]", "valid [95% CI]",
            "quality of valid [95% CI]", "mean total", "regret [95% CI]",
            "cooperation [95% CI]", "retaliation", "forgiveness", "brier")
    lines = [head] + [(r["stage"], r["opponent"], str(r["matches"]), str(r["missing"]),
                       headline_cell(r, "quality"), headline_cell(r, "valid_rate"),
                       headline_cell(r, "quality_of_valid"),
                       _fmt(r, "mean_total"), _fmt(r, "mean_regret"), _fmt(r, "cooperation"),
                       _fmt(r, "retaliation"), _fmt(r, "forgiveness"), _fmt(r, "brier"))
                      for r in records]
    return summary_lines(
        "repeated", records,
        "quality (the headline): a complete match's total between the worst and the best "
        "achievable against the opponent, a forfeit 0, matches ended by a failed call left out "
        "(missing); valid = complete; quality = valid x quality of valid; intervals: bootstrap "
        "over matches", lines[0], lines[1:], width, keys=2)
