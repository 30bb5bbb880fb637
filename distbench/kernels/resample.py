"""Cluster bootstrap resampling of a mean, in batch.

A resample draws ``G`` clusters (games) with replacement from the ``G`` observed ones and
takes the ratio mean ``sum(sums[drawn]) / sum(counts[drawn])``. Resample ``r`` draws from its
own counter-based stream (SplitMix64 keyed by ``seed`` and ``r``), so any range of resamples
can be computed anywhere, in any split, and gives the same numbers: the driver may cut the
2,000 resamples of a summary into parts for the cluster's warm workers, or run them all
here. Indices come from 32-bit halves by Lemire's multiply-and-reject method, so every cluster
is drawn with exactly equal probability.

Two implementations give the same bits: a numba kernel (:mod:`.resample_jit`) for large
bootstraps, and numpy over whole arrays for small ones (up to :data:`NUMPY_DRAWS` draws), which
spares a short run's summary numba's import (about half a second). Sums are taken in draw order
from ``0.0``, as the kernel does (``np.cumsum`` adds in order; ``np.sum`` would pair them).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["NUMPY_DRAWS", "cluster_resample_means"]


def cluster_resample_means(sums: np.ndarray, counts: np.ndarray, start: int, stop: int,
                           seed: int) -> np.ndarray:
    """Bootstrap means of resamples ``start .. stop-1``.

    Args:
        sums: (G,) sum of the values of each cluster; 0 < G < 2**32.
        counts: (G,) number of values of each cluster, all > 0.
        start: First resample index.
        stop: One past the last resample index.
        seed: Seed of the resampling (0 <= seed < 2**64).

    Returns:
        (stop - start,) float64: ``sum(sums[drawn]) / sum(counts[drawn])`` for each resample.
    """
    sums = np.ascontiguousarray(sums, dtype=np.float64)
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    if sums.ndim != 1 or sums.shape != counts.shape:
        raise ValueError(f"sums and counts must be equal-length vectors, got {sums.shape} "
                         f"and {counts.shape}")
    if not 0 < len(sums) < 2**32:
        raise ValueError(f"need between 1 and 2**32 - 1 clusters, got {len(sums)}")
    if not (counts > 0).all():
        raise ValueError("every cluster needs a positive count")
    if not 0 <= start <= stop:
        raise ValueError(f"bad resample range {start}..{stop}")
    if (stop - start) * len(sums) <= NUMPY_DRAWS and _JIT not in sys.modules:
        return _numpy_means(sums, counts, int(start), int(stop), int(seed))
    from distbench.kernels.resample_jit import means

    out = np.empty(stop - start, dtype=np.float64)
    means(sums, counts, int(start), int(stop), np.uint64(seed), out)
    return out


NUMPY_DRAWS = 1_000_000
"""Bootstraps of at most this many draws (resamples x clusters: about 0.07 s) take the numpy
path while numba is not loaded (a run of a family whose games use numba kernels has it)."""
_JIT = "distbench.kernels.resample_jit"

_GOLDEN = 0x9E3779B97F4A7C15
_LOW32 = np.uint64(0xFFFFFFFF)
_ROWS_DRAWS = 500_000
"""Draws per block of resamples on the numpy path (bounds its arrays to tens of MB)."""


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function over an array (uint64 arithmetic wraps)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _numpy_means(sums: np.ndarray, counts: np.ndarray, start: int, stop: int,
                 seed: int) -> np.ndarray:
    """The kernel's means computed with numpy, block by block of resamples."""
    g = len(sums)
    rows = max(1, _ROWS_DRAWS // g)
    return np.concatenate([_numpy_block(sums, counts, lo, min(stop, lo + rows), seed)
                           for lo in range(start, stop, rows)] or [np.empty(0)])


def _numpy_block(sums: np.ndarray, counts: np.ndarray, start: int, stop: int,
                 seed: int) -> np.ndarray:
    picks = _picks(len(sums), seed, start, stop, (len(sums) + 1) // 2 + 2)
    return _ordered_sum(sums[picks]) / _ordered_sum(counts[picks])


def _picks(g: int, seed: int, start: int, stop: int, steps: int) -> np.ndarray:
    """(stop - start, g): the clusters each resample draws, from the first ``steps`` numbers
    of its stream (two draws each); a resample whose rejected draws (rare) leave fewer than
    ``g`` takes twice the numbers."""
    ug = np.uint64(g)
    golden = np.uint64(_GOLDEN)
    r = np.arange(start, stop, dtype=np.uint64)
    base = _mix(np.uint64(seed) + golden * (r + np.uint64(1)))
    z = _mix(base[:, None] + golden * np.arange(1, steps + 1, dtype=np.uint64)[None, :])
    halves = np.stack([z >> np.uint64(32), z & _LOW32], axis=2).reshape(len(r), 2 * steps)
    m = halves * ug
    accepted = (m & _LOW32) >= np.uint64(_reject_below(g))
    drawn = (m >> np.uint64(32)).astype(np.intp)
    if accepted[:, :g].all():
        return drawn[:, :g]
    picks = np.empty((len(r), g), dtype=np.intp)
    for row in range(len(r)):
        taken = drawn[row][accepted[row]][:g]
        if len(taken) < g:
            taken = _picks(g, seed, start + row, start + row + 1, 2 * steps)[0]
        picks[row] = taken
    return picks


def _reject_below(g: int) -> int:
    """The low products that would bias a draw among ``g``: ``2**32 mod g``."""
    return (1 << 32) % g


def _ordered_sum(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right from 0.0 (the kernel's order and its sign of zero)."""
    values[:, 0] += 0.0
    return np.cumsum(values, axis=1)[:, -1]
