"""Percentile bootstrap confidence intervals of a mean over clusters (games).

The resampling is :func:`distbench.kernels.resample.cluster_resample_means` (numpy for a
small bootstrap, a numba kernel for a large one, the same bits): every resample has its own
counter-based stream, so the resamples can be cut into parts and run anywhere (here, or on
the cluster's warm workers, which have the kernels loaded) and the interval is the same. A
run's driver passes an :class:`Offload` that runs the parts on the cluster: loading numba
would cost a new driver more than a second, and the workers already have it. This module
itself imports no numba.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240917
_MIN_DRAWS_PER_PART = 1 << 21  # about 7 ms of the kernel here

CiResult = Callable[[], "tuple[float, float] | None"]


class Offload(Protocol):
    """Runs calls elsewhere: ``submit(fn, *args)`` starts ``fn(*args)`` and returns a function
    that waits for its result; ``width`` calls can run at once."""

    width: int

    def submit(self, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]: ...


class _Here:
    """Runs calls at once, in this process."""

    width = 1

    @staticmethod
    def submit(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        value = fn(*args)
        return lambda: value


def resample_means(sums: np.ndarray, counts: np.ndarray, start: int, stop: int,
                   seed: int) -> np.ndarray:
    """Means of resamples ``start .. stop-1``: what an :class:`Offload` runs (by reference, so
    the worker imports the kernel, not the caller)."""
    from distbench.kernels.resample import cluster_resample_means

    return cluster_resample_means(sums, counts, start, stop, seed)


def warm_kernel() -> None:
    """Loads the resampling module and runs it once, so that a summary run here later finds
    it loaded. The driver of a run played in its own process calls it on a thread while the
    shards play. (A small bootstrap runs on numpy; numba's kernel, most of a second to load, is
    loaded by the first large one: :mod:`distbench.kernels.resample`.)"""
    try:
        from distbench.kernels.resample import cluster_resample_means

        cluster_resample_means(np.ones(1), np.ones(1), 0, 1, 0)
    except Exception as exc:  # noqa: BLE001 - the summary loads it again and reports why
        log.debug("the resampling kernel did not load ahead: %s", exc)


def start_bootstrap_ci(
    sums: np.ndarray,
    counts: np.ndarray,
    calls: Offload | None = None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> CiResult:
    """Starts the bootstrap of :func:`bootstrap_mean_ci` on ``calls`` (cut into
    ``calls.width`` parts; default: run now, here); returns a function that waits and gives
    the interval."""
    calls = calls or _Here()
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    keep = counts > 0
    sums, counts = sums[keep], counts[keep]
    if len(sums) == 0 or resamples < 1:
        return lambda: None
    # Parts of at least _MIN_DRAWS_PER_PART draws: a remote call costs a few milliseconds,
    # so a small group's bootstrap is one call (the groups of a sweep spread over the workers).
    parts = max(1, min(int(calls.width), resamples * len(sums) // _MIN_DRAWS_PER_PART))
    bounds = np.linspace(0, resamples, parts + 1).astype(int)
    waits = [calls.submit(resample_means, sums, counts, int(lo), int(hi), seed)
             for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]
    alpha = (1.0 - level) / 2.0

    def result() -> tuple[float, float]:
        ordered = np.sort(np.concatenate([wait() for wait in waits]))
        return _quantile(ordered, alpha), _quantile(ordered, 1.0 - alpha)

    return result


def finish_intervals(pending: list[tuple[dict[str, Any], dict[str, CiResult]]],
                     names: Sequence[str]) -> list[dict[str, Any]]:
    """The records of ``pending`` (record, started intervals by metric name), each given
    ``<name>_lo`` / ``<name>_hi`` of every metric of ``names`` (None where none was started or
    it has none), once every group's bootstrap was started (they run meanwhile)."""
    for out, waits in pending:
        for name in names:
            ci = waits[name]() if name in waits else None
            out[f"{name}_lo"], out[f"{name}_hi"] = ci if ci else (None, None)
    return [out for out, _ in pending]


def bootstrap_mean_ci(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
    offload: Offload | None = None,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of a mean over clusters: resamples draw whole clusters with
    replacement and take ``sum(sums[drawn]) / sum(counts[drawn])``.

    Args:
        sums: (G,) sum of the values of each cluster (game).
        counts: (G,) number of values of each cluster; clusters with none are left out.
        resamples: Bootstrap resamples.
        level: Confidence level.
        seed: Seed of the resampling.
        offload: Where to run the resampling (default: here).

    Returns:
        (low, high), or None when there are no values.
    """
    return start_bootstrap_ci(sums, counts, offload, resamples=resamples,
                              level=level, seed=seed)()


def _quantile(ordered: np.ndarray, q: float) -> float:
    """The q-quantile of sorted values, linear between order statistics (numpy's default
    method; written out because ``np.quantile`` imports ``numpy.ma``, 16 ms of a driver's
    start)."""
    position = q * (len(ordered) - 1)
    lo = int(math.floor(position))
    hi = min(lo + 1, len(ordered) - 1)
    frac = position - lo
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)
