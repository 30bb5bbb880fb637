"""The bimatrix family's summary: per (game set, seat, opponent, model, mode), the valid rate
and the means of regret, quality, equilibrium play, dominated play, welfare ratio, cooperation
and coordination, each with its 95% interval (cluster bootstrap over games,
:mod:`distbench.report.bootstrap`: the trials of one game are not independent)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from distbench.games.answers.classes import COORDINATION
from distbench.report.bootstrap import start_bootstrap_ci

#: (summary name, per-trial SQL expression) of each averaged metric.
METRICS: tuple[tuple[str, str], ...] = (
    ("valid_rate", "(parse_status = 'ok')::double"),
    ("mean_regret", "regret"),
    ("quality", "quality"),
    ("eq_rate", "eq_consistent::double"),
    ("dominated_rate", "dominated::double"),
    ("welfare_ratio", "welfare_ratio"),
    ("cooperation", "cooperate"),
    ("coordination", "coordinated"),
)
KEYS = ("game_set", "seat", "opponent", "provider", "model", "mode")

_SQL = ("SELECT " + ", ".join(KEYS) + ", game_id, count(*) AS n, "
        + ", ".join(f"sum({expr}) AS s_{name}, count({expr}) AS n_{name}"
                    for name, expr in METRICS)
        + " FROM bimatrix_trials GROUP BY ALL ORDER BY ALL")


def _has_table(con: Any) -> bool:
    views = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    return "bimatrix_trials" in views | tables


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """One record per (game set, seat, opponent, model, mode); see the module docstring.
    ``<metric>`` is the mean over the trials where it is defined, ``<metric>_lo`` /
    ``<metric>_hi`` its 95% interval (None when undefined or from one game only)."""
    if not _has_table(con):
        return []
    cur = con.execute(_SQL)
    names = [d[0] for d in cur.description]
    groups: dict[tuple, list[tuple]] = {}
    for row in cur.fetchall():
        rec = dict(zip(names, row, strict=True))
        groups.setdefault(tuple(rec[k] for k in KEYS), []).append(rec)
    pending = []
    for key, games in groups.items():
        out: dict[str, Any] = dict(zip(KEYS, key, strict=True))
        out["games"] = len(games)
        out["trials"] = int(sum(g["n"] for g in games))
        waits = {}
        for name, _ in METRICS:
            sums = np.array([g[f"s_{name}"] or 0.0 for g in games], dtype=np.float64)
            counts = np.array([g[f"n_{name}"] for g in games], dtype=np.float64)
            total = counts.sum()
            out[name] = float(sums.sum() / total) if total else None
            if total and (counts > 0).sum() > 1:
                waits[name] = start_bootstrap_ci(sums, counts, offload)
        pending.append((out, waits))
    records = []
    for out, waits in pending:
        for name, _ in METRICS:
            ci = waits[name]() if name in waits else None
            out[f"{name}_lo"], out[f"{name}_hi"] = ci if ci else (None, None)
        records.append(out)
    return records


def _fmt(rec: dict[str, Any], name: str, digits: int = 3) -> str:
    value = rec.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    lo, hi = rec.get(f"{name}_lo"), rec.get(f"{name}_hi")
    text = f"{value:.{digits}f}"
    if lo is not None and hi is not None:
        text += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return text


def format_summary(records: list[dict[str, Any]]) -> str:
    """The console summary: per row, the valid rate, cooperation rate, mean regret, equilibrium
    play rate and quality (and for the coordination classes the coordination rate), each with
    its 95% interval."""
    if not records:
        return "no bimatrix trials"
    head = ("set", "seat", "opponent", "mode", "games", "valid", "cooperation [95% CI]",
            "mean regret [95% CI]", "eq play [95% CI]", "quality [95% CI]")
    coordination = any(r["game_set"].removeprefix("class:") in COORDINATION for r in records)
    if coordination:  # the classic rate of coordination games
        head += ("coordination [95% CI]",)
    lines = [head]
    for r in records:
        cells = (r["game_set"], r["seat"], r["opponent"], r["mode"], str(r["games"]),
                 _fmt(r, "valid_rate", 2), _fmt(r, "cooperation"), _fmt(r, "mean_regret"),
                 _fmt(r, "eq_rate"), _fmt(r, "quality"))
        if coordination:
            cells += (_fmt(r, "coordination")
                      if r["game_set"].removeprefix("class:") in COORDINATION else "-",)
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
           for line in lines]
    out.insert(1, "-" * len(out[0]))
    model = f"{records[0]['provider']}:{records[0]['model']}"
    return f"bimatrix summary ({model}; intervals: cluster bootstrap over games)\n" + "\n".join(out)
