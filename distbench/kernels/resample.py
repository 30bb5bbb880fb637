"""Cluster bootstrap of a mean, with its own counter-based random draws.

The draws are splitmix64 of a counter (integer arithmetic only), so a seed gives the same
resamples on every platform and numba or numpy version.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def bootstrap_ratio_means(
    sums: np.ndarray, counts: np.ndarray, resamples: int, seed: int
) -> np.ndarray:
    """Means of ``resamples`` cluster bootstrap resamples.

    Each resample draws ``G = len(sums)`` clusters with replacement and returns
    ``sum(sums[drawn]) / sum(counts[drawn])`` (NaN when the drawn counts sum to 0).

    Args:
        sums: (G,) float64, the sum of each cluster's values.
        counts: (G,) float64, the number of values of each cluster.
        resamples: Number of resamples B.
        seed: Seed of the draws (any integer; used modulo 2**64).

    Returns:
        (B,) float64 resample means.
    """
    sums = np.ascontiguousarray(sums, dtype=np.float64)
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    if sums.shape != counts.shape or sums.ndim != 1:
        raise ValueError("sums and counts must be 1-D arrays of the same length")
    if len(sums) >= 2**32:
        raise ValueError("at most 2**32 - 1 clusters")
    out = np.empty(int(resamples), dtype=np.float64)
    if len(sums) == 0:
        out[:] = np.nan
        return out
    _bootstrap_kernel(sums, counts, np.uint64(int(seed) % 2**64), out)
    return out


@njit(cache=True)
def _bootstrap_kernel(sums, counts, seed, out):
    g = sums.shape[0]
    state = seed
    golden = np.uint64(0x9E3779B97F4A7C15)
    m1 = np.uint64(0xBF58476D1CE4E5B9)
    m2 = np.uint64(0x94D049BB133111EB)
    s30, s27, s31, s32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
    width = np.uint64(g)
    for b in range(out.shape[0]):
        total = 0.0
        n = 0.0
        for _ in range(g):
            state += golden
            z = state
            z = (z ^ (z >> s30)) * m1
            z = (z ^ (z >> s27)) * m2
            z ^= z >> s31
            k = ((z >> s32) * width) >> s32  # Lemire's multiply-shift: uniform in [0, g)
            total += sums[k]
            n += counts[k]
        out[b] = total / n if n > 0 else np.nan
