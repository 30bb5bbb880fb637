"""The run summary of the matrix family: one record per (bucket, provider, model, tier, mode).

Statistics are over the valid trials (parse_status = 'ok'); the valid-answer rate is reported
beside them. ``std_nash_gap`` is the population standard deviation (``numpy.std``, ddof=0), as
in the seed tool. ``gap_ratio`` = mean nash_gap / mean |br_value|. The 95% confidence interval
of the mean gap is a percentile bootstrap that resamples whole games (the trials of one game
share its payoffs, so they are not independent), with a fixed seed so it is reproducible.
"""

from __future__ import annotations

import math
from typing import Any

import duckdb
import numpy as np

from distbench.report.bootstrap import Offload, start_bootstrap_ci

GROUP_KEYS: tuple[str, ...] = ("bucket", "provider", "model", "tier", "mode")


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


_GAMES_SQL = """
WITH per_game AS (
    SELECT bucket, provider, model, tier, mode, game_id, trials AS n, valid AS nv,
           coalesce(mean_nash_gap * valid, 0) AS s, var_nash_gap AS v,
           min_nash_gap AS lo, max_nash_gap AS hi,
           mean_llm_value * valid AS s_llm, mean_br_value * valid AS s_br,
           mean_abs_br_value * valid AS s_abs_br, mean_exploitability * valid AS s_expl,
           mean_label_mass AS lm, gap_degenerate AS deg
    FROM game_scores
)
SELECT bucket, provider, model, tier, mode,
       count(*) AS num_games, max(n) AS per_game, sum(n) AS total, sum(nv) AS valid,
       avg(CASE WHEN deg THEN 1.0 ELSE 0.0 END) AS deg_share,
       list(s ORDER BY game_id) AS sums, list(nv ORDER BY game_id) AS counts,
       list(coalesce(v, 0) ORDER BY game_id) AS variances,
       min(lo) AS min_gap, max(hi) AS max_gap,
       sum(s_llm ORDER BY game_id) AS sum_llm,
       sum(s_br ORDER BY game_id) AS sum_br,
       sum(s_abs_br ORDER BY game_id) AS sum_abs_br,
       sum(s_expl ORDER BY game_id) AS sum_expl,
       sum(lm ORDER BY game_id) AS sum_lm, count(lm) AS n_lm
FROM per_game GROUP BY ALL
ORDER BY bucket, provider, model, tier NULLS FIRST, mode
"""

_VALID_TRIALS = "FROM trials WHERE family = 'matrix' AND parse_status = 'ok'"
_MEDIANS_SQL = (f"SELECT bucket, provider, model, tier, mode, median(nash_gap) AS median_gap "
                f"{_VALID_TRIALS} GROUP BY ALL")
# A run of one group (one bucket, model and mode: the common single run) has every valid
# trial in that group; grouping a million rows by five string keys would double the scan.
_MEDIAN_SQL = f"SELECT median(nash_gap) {_VALID_TRIALS}"


def matrix_summary(con: duckdb.DuckDBPyConnection,
                   offload: Offload | None = None) -> list[dict[str, Any]]:
    """Summary records of a matrix run, one per group, in a stable order.

    Per-game statistics come from ``game_scores`` (computed by each shard from its trials),
    combined in ``game_id`` order: the same numbers on any number of DuckDB threads. Only the
    median reads every trial (an exact median is order-free). The per-game figures come to
    Python for the bootstrap and the pooled variance.

    Args:
        con: A connection with the run's views (:func:`distbench.store.catalog.open_run`).
        offload: Where the bootstraps run (a run's driver passes its cluster's workers, and
            the DuckDB scan for the medians runs meanwhile); default: in this process.
    """
    result = con.execute(_GAMES_SQL)
    columns = [d[0] for d in result.description]
    groups = [dict(zip(columns, row, strict=True)) for row in result.fetchall()]
    cis = [start_bootstrap_ci(r["sums"], r["counts"], offload) if r["valid"] else None
           for r in groups]
    if len(groups) == 1:
        medians = {tuple(groups[0][k] for k in GROUP_KEYS): con.execute(_MEDIAN_SQL).fetchone()[0]}
    else:
        medians = {tuple(row[:5]): row[5] for row in con.execute(_MEDIANS_SQL).fetchall()}
    records = []
    for r, ci in zip(groups, cis, strict=True):
        r["median_gap"] = medians.get(tuple(r[k] for k in GROUP_KEYS))
        records.append(_record(r, ci() if ci else None))
    return records


def _record(r: dict[str, Any], ci: tuple[float, float] | None) -> dict[str, Any]:
    """One summary record from a group's per-game figures, its median and its CI."""
    total, valid = int(r["total"]), int(r["valid"])
    record: dict[str, Any] = {k: r[k] for k in GROUP_KEYS}
    record.update(
        num_games=int(r["num_games"]),
        num_trials_per_game=int(r["per_game"]),
        total_trials=total,
        valid_trials=valid,
        valid_rate=valid / total if total else None,
        degenerate_game_share=float(r["deg_share"]),
        mean_label_mass=float(r["sum_lm"] / r["n_lm"]) if r["n_lm"] else None,
    )
    if not valid:
        for key in _STAT_KEYS:
            record[key] = None
        return record
    sums = np.asarray(r["sums"], dtype=np.float64)
    counts = np.asarray(r["counts"], dtype=np.float64)
    mean_gap = float(sums.sum() / valid)
    # Pooled population variance: within-game plus between-game parts.
    played = counts > 0
    within = float((counts * np.asarray(r["variances"], dtype=np.float64)).sum())
    between = float((counts[played] * (sums[played] / counts[played] - mean_gap) ** 2).sum())
    mean_abs_br = r["sum_abs_br"] / valid
    record.update(
        mean_nash_gap=mean_gap,
        median_nash_gap=float(r["median_gap"]),
        std_nash_gap=math.sqrt(max(within + between, 0.0) / valid),
        min_nash_gap=float(r["min_gap"]),
        max_nash_gap=float(r["max_gap"]),
        mean_llm_value=float(r["sum_llm"] / valid),
        mean_br_value=float(r["sum_br"] / valid),
        gap_ratio=_num(mean_gap / mean_abs_br) if mean_abs_br else None,
        mean_exploitability=float(r["sum_expl"] / valid),
        nash_gap_ci95=list(ci) if ci else None,
    )
    return record


_STAT_KEYS = (
    "mean_nash_gap", "median_nash_gap", "std_nash_gap", "min_nash_gap", "max_nash_gap",
    "mean_llm_value", "mean_br_value", "gap_ratio", "mean_exploitability", "nash_gap_ci95",
)


def format_summary(records: list[dict[str, Any]]) -> str:
    """A compact plain-text table of summary records for the terminal."""
    if not records:
        return "no trials"
    header = ["bucket", "model", "mode", "games", "trials", "valid", "mean gap", "95% CI",
              "median", "mean expl."]
    masses = any(r.get("mean_label_mass") is not None for r in records)
    if masses:
        header.append("label mass")
    rows = []
    for r in records:
        ci = r.get("nash_gap_ci95")

        def fmt(x: float | None) -> str:
            return "-" if x is None else f"{x:.4g}"

        rows.append([
            r["bucket"], f"{r['provider']}:{r['model']}", r["mode"], str(r["num_games"]),
            str(r["total_trials"]), f"{100 * (r['valid_rate'] or 0):.1f}%",
            fmt(r["mean_nash_gap"]),
            "-" if not ci else f"[{ci[0]:.4g}, {ci[1]:.4g}]",
            fmt(r["median_nash_gap"]), fmt(r["mean_exploitability"]),
        ])
        if masses:
            rows[-1].append(fmt(r.get("mean_label_mass")))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)
