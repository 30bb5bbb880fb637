"""The bimatrix family's summary: per (game set, seat, opponent, model, mode), the headline
first (README, "The headline"): ``quality`` (the mean quality of the answered trials, an
invalid answer 0; trials whose call failed are left out and counted as ``missing``), the valid
rate (valid / answered) and the quality of valid answers, then the means of regret,
equilibrium play, dominated play, welfare ratio, cooperation and coordination; each with its
95% interval (cluster bootstrap over games, :mod:`distbench.report.bootstrap`: the trials of
one game are not independent). A group with nothing answered has no headline (None)."""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.games.answers.classes import COORDINATION
from distbench.report.bootstrap import finish_intervals, start_bootstrap_ci
from distbench.report.document import summary_lines
from distbench.report.headline import headline, headline_cell, with_interval
from distbench.store.catalog import cursor_records

#: (summary name, per-trial SQL expression) of each averaged metric besides the headline.
METRICS: tuple[tuple[str, str], ...] = (
    ("mean_regret", "regret"),
    ("eq_rate", "eq_consistent::double"),
    ("dominated_rate", "dominated::double"),
    ("welfare_ratio", "welfare_ratio"),
    ("cooperation", "cooperate"),
    ("coordination", "coordinated"),
)
HEADLINE = ("quality", "valid_rate", "quality_of_valid")
KEYS = ("game_set", "seat", "opponent", "provider", "model", "mode")

#: Per game: the headline's sums. A trial is answered when it has a quality (its call did
#: not fail; another model opponent's answer was valid); valid when it is answered and both
#: answers it rests on parsed (the model's, and in self-play its own other seat's).
_HEADLINE_SQL = ("coalesce(sum(quality), 0.0) AS h_q, "
                 "count(*) FILTER (WHERE quality IS NOT NULL AND parse_status = 'ok' "
                 "AND opponent_status = 'ok') AS h_v, count(quality) AS h_n, "
                 "count(*) FILTER (WHERE quality IS NULL) AS h_missing")

_SQL = ("SELECT " + ", ".join(KEYS) + ", game_id, count(*) AS n, " + _HEADLINE_SQL + ", "
        + ", ".join(f"sum({expr}) AS s_{name}, count({expr}) AS n_{name}"
                    for name, expr in METRICS)
        + " FROM bimatrix_trials GROUP BY ALL ORDER BY ALL")


def _has_table(con: Any) -> bool:
    views = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    return "bimatrix_trials" in views | tables


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """One record per (game set, seat, opponent, model, mode); see the module docstring.
    The headline's fields are :meth:`distbench.report.headline.Headline.record`'s
    (``quality``, ``quality_ci95``, ``valid_rate``, ..., ``answered``, ``missing``); every other
    ``<metric>`` is the mean over the trials where it is defined; ``<metric>_lo`` /
    ``<metric>_hi`` its 95% interval (None when undefined or from one game only)."""
    if not _has_table(con):
        return []
    groups: dict[tuple, list[tuple]] = {}
    for rec in cursor_records(con.execute(_SQL)):
        groups.setdefault(tuple(rec[k] for k in KEYS), []).append(rec)
    pending = []
    for key, games in groups.items():
        out: dict[str, Any] = dict(zip(KEYS, key, strict=True))
        out["games"] = len(games)
        out["trials"] = int(sum(g["n"] for g in games))
        h = headline([g["h_q"] for g in games], [g["h_v"] for g in games],
                     [g["h_n"] for g in games], int(sum(g["h_missing"] for g in games)))
        out.update(h.record())
        out["answered_games"] = h.units
        for name in HEADLINE:  # the report's names of the same intervals
            out[f"{name}_lo"], out[f"{name}_hi"] = out[f"{name}_ci95"] or (None, None)
        waits = {}
        for name, _ in METRICS:
            sums = np.array([g[f"s_{name}"] or 0.0 for g in games], dtype=np.float64)
            counts = np.array([g[f"n_{name}"] for g in games], dtype=np.float64)
            total = counts.sum()
            out[name] = float(sums.sum() / total) if total else None
            if total and (counts > 0).sum() > 1:
                waits[name] = start_bootstrap_ci(sums, counts, offload)
        pending.append((out, waits))
    return finish_intervals(pending, [name for name, _ in METRICS])


def _fmt(rec: dict[str, Any], name: str) -> str:
    return with_interval(rec.get(name), rec.get(f"{name}_lo"), rec.get(f"{name}_hi"))


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """The console summary: per row, the headline first (quality, valid rate and quality of
    valid answers, each with its 95% interval; ``missing``: trials whose call failed, left
    out), then the cooperation rate, mean regret and equilibrium play rate (and for the
    coordination classes the coordination rate), each with its 95% interval."""
    if not records:
        return "no bimatrix trials"
    head = ("set", "seat", "opponent", "mode", "games", "missing", "quality [95% CI]",
            "valid [95% CI]", "quality of valid [95% CI]", "cooperation [95% CI]",
            "mean regret [95% CI]", "eq play [95% CI]")
    coordination = any(r["game_set"].removeprefix("class:") in COORDINATION for r in records)
    if coordination:  # the classic rate of coordination games
        head += ("coordination [95% CI]",)
    lines = [head]
    for r in records:
        cells = (r["game_set"], r["seat"], r["opponent"], r["mode"], str(r["games"]),
                 str(r["missing"]), headline_cell(r, "quality"), headline_cell(r, "valid_rate"),
                 headline_cell(r, "quality_of_valid"), _fmt(r, "cooperation"), _fmt(r, "mean_regret"),
                 _fmt(r, "eq_rate"))
        if coordination:
            cells += (_fmt(r, "coordination")
                      if r["game_set"].removeprefix("class:") in COORDINATION else "-",)
        lines.append(cells)
    return summary_lines(
        "bimatrix", records,
        "quality (the headline): 1 - regret / (best - worst payoff against the opponent "
        "faced), an invalid answer 0, calls that failed left out (missing); quality = valid x "
        "quality of valid; intervals: cluster bootstrap over games",
        lines[0], lines[1:], width, keys=4)
