"""Cluster bootstrap resampling of a mean, in batch.

A resample draws ``G`` clusters (games) with replacement from the ``G`` observed ones and
takes the ratio mean ``sum(sums[drawn]) / sum(counts[drawn])``. Resample ``r`` draws from its
own counter-based stream (SplitMix64 keyed by ``seed`` and ``r``), so any range of resamples
can be computed anywhere, in any split, and gives the same numbers: the driver may cut the
2,000 resamples of a summary into parts for the cluster's warm workers, or run them all
here. Indices come from 32-bit halves by Lemire's multiply-and-reject method, so every cluster
is drawn with exactly equal probability.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cluster_resample_means"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_S27, _S30, _S31, _S32 = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(32)


@njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:
    """The SplitMix64 output function."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _means(sums, counts, start, stop, seed, out):  # pragma: no cover - compiled
    g = sums.shape[0]
    ug = np.uint64(g)
    reject_below = (_TWO32 - ug) % ug  # 2^32 mod g: the low products that would bias
    for r in range(start, stop):
        state = _mix(np.uint64(seed) + _GOLDEN * np.uint64(r + 1))
        total = 0.0
        n = 0.0
        j = 0
        while j < g:
            state += _GOLDEN
            z = _mix(state)
            m = (z >> _S32) * ug
            if (m & _LOW32) >= reject_below:
                i = m >> _S32
                total += sums[i]
                n += counts[i]
                j += 1
            if j < g:
                m = (z & _LOW32) * ug
                if (m & _LOW32) >= reject_below:
                    i = m >> _S32
                    total += sums[i]
                    n += counts[i]
                    j += 1
        out[r - start] = total / n


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
    out = np.empty(stop - start, dtype=np.float64)
    _means(sums, counts, int(start), int(stop), np.uint64(seed), out)
    return out
