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

GROUP_KEYS: tuple[str, ...] = ("bucket", "provider", "model", "tier", "mode")
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240917


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


_BOOTSTRAP_PARTS = 4
_BLOCK = 1 << 17  # draws per step: the drawn indices and gathered values stay in cache


def _resample_means(sums: np.ndarray, counts: np.ndarray, resamples: int,
                    seed: int) -> np.ndarray:
    """``resamples`` cluster-bootstrap means sum(sums[drawn]) / sum(counts[drawn]).

    The resamples are cut into a fixed number of parts, each with its own generator spawned
    from ``seed``, so the result does not depend on how many threads run them; numpy releases
    the GIL while drawing and gathering, so two threads take about half the time. (A numba
    kernel would be faster per draw, but loading numba costs a fresh driver about a second.)
    """
    from concurrent.futures import ThreadPoolExecutor

    g = len(sums)
    # Equal counts (every game kept all its trials: the common case) make the denominator a
    # constant, so only the sums are gathered; otherwise one complex gather fetches a
    # cluster's sum and count together. Both give the same means up to rounding.
    equal = bool(np.all(counts == counts[0]))
    both = sums if equal else sums + 1j * counts
    bounds = np.linspace(0, resamples, _BOOTSTRAP_PARTS + 1).astype(int)
    seqs = np.random.SeedSequence(seed).spawn(_BOOTSTRAP_PARTS)
    means = np.empty(resamples)

    def part(k: int) -> None:
        rng = np.random.default_rng(seqs[k])
        step = max(1, _BLOCK // g)
        for lo in range(bounds[k], bounds[k + 1], step):
            hi = min(bounds[k + 1], lo + step)
            idx = rng.integers(0, g, size=(hi - lo, g), dtype=np.int32)
            total = np.take(both, idx).sum(axis=1)
            means[lo:hi] = total / (counts[0] * g) if equal else total.real / total.imag

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(part, range(_BOOTSTRAP_PARTS)))
    return means


def bootstrap_mean_ci(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of a mean over clusters.

    Args:
        sums: (G,) sum of the values of each cluster (game).
        counts: (G,) number of values of each cluster.
        resamples: Bootstrap resamples.
        level: Confidence level.
        seed: Seed of the resampling.

    Returns:
        (low, high), or None when there are no values.
    """
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    keep = counts > 0
    sums, counts = sums[keep], counts[keep]
    g = len(sums)
    if g == 0:
        return None
    means = _resample_means(sums, counts, resamples, seed)
    alpha = (1.0 - level) / 2.0
    ordered = np.sort(means)
    return _quantile(ordered, alpha), _quantile(ordered, 1.0 - alpha)


def _quantile(ordered: np.ndarray, q: float) -> float:
    """The q-quantile of sorted values, linear between order statistics (numpy's default
    method; written out because ``np.quantile`` imports ``numpy.ma``, 16 ms of a driver's
    start)."""
    position = q * (len(ordered) - 1)
    lo = int(math.floor(position))
    hi = min(lo + 1, len(ordered) - 1)
    frac = position - lo
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)


_GAMES_SQL = """
WITH per_game AS (
    SELECT bucket, provider, model, tier, mode, game_id, trials AS n, valid AS nv,
           coalesce(mean_nash_gap * valid, 0) AS s, var_nash_gap AS v,
           min_nash_gap AS lo, max_nash_gap AS hi,
           mean_llm_value * valid AS s_llm, mean_br_value * valid AS s_br,
           mean_abs_br_value * valid AS s_abs_br, mean_exploitability * valid AS s_expl,
           gap_degenerate AS deg
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
       sum(s_expl ORDER BY game_id) AS sum_expl
FROM per_game GROUP BY ALL
ORDER BY bucket, provider, model, tier NULLS FIRST, mode
"""

_MEDIANS_SQL = """
SELECT bucket, provider, model, tier, mode, median(nash_gap) AS median_gap
FROM trials WHERE family = 'matrix' AND parse_status = 'ok' GROUP BY ALL
"""


def matrix_summary(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Summary records of a matrix run, one per group, in a stable order.

    Per-game statistics come from ``game_scores`` (computed by each shard from its trials),
    combined in ``game_id`` order: the same numbers on any number of DuckDB threads. Only the
    median reads every trial (an exact median is order-free). The per-game figures come to
    Python for the bootstrap and the pooled variance.
    """
    from concurrent.futures import ThreadPoolExecutor

    result = con.execute(_GAMES_SQL)
    columns = [d[0] for d in result.description]
    groups = [dict(zip(columns, row, strict=True)) for row in result.fetchall()]
    # The bootstraps (numpy) run beside DuckDB's scan for the medians: both release the GIL.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="distbench-bootstrap") as pool:
        cis = [pool.submit(bootstrap_mean_ci, np.asarray(r["sums"], dtype=np.float64),
                           np.asarray(r["counts"], dtype=np.float64)) if r["valid"] else None
               for r in groups]
        medians = {tuple(row[:5]): row[5] for row in con.execute(_MEDIANS_SQL).fetchall()}
        records = []
        for r, ci_future in zip(groups, cis, strict=True):
            r["median_gap"] = medians.get(tuple(r[k] for k in GROUP_KEYS))
            records.append(_record(r, ci_future.result() if ci_future else None))
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
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)
