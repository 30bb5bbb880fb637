"""The numba kernel of :mod:`distbench.kernels.resample` (loaded only for large bootstraps: the
numpy path of small ones needs no numba)."""

from __future__ import annotations

import numpy as np
from numba import njit

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
def means(sums, counts, start, stop, seed, out):  # pragma: no cover - compiled
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
