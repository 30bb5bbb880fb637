"""The cluster bootstrap kernel: its documented stream, split invariance, uniform draws."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.kernels import resample
from distbench.kernels.resample import cluster_resample_means

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _reference(sums, counts, start, stop, seed, reject_below=None):
    """The documented algorithm in plain Python integers."""
    g = len(sums)
    reject_below = (1 << 32) % g if reject_below is None else reject_below
    out = []
    for r in range(start, stop):
        state = _mix((seed + GOLDEN * (r + 1)) & M64)
        drawn = []
        while len(drawn) < g:
            state = (state + GOLDEN) & M64
            z = _mix(state)
            for half in (z >> 32, z & 0xFFFFFFFF):
                m = half * g
                if (m & 0xFFFFFFFF) >= reject_below and len(drawn) < g:
                    drawn.append(m >> 32)
        total = 0.0
        n = 0.0
        for i in drawn:
            total += sums[i]
            n += counts[i]
        out.append(total / n)
    return np.array(out)


@pytest.mark.parametrize("g", [1, 3, 7, 100])
def test_the_kernel_follows_the_documented_stream(g):
    rng = np.random.default_rng(g)
    sums = rng.normal(size=g) * 10
    counts = rng.integers(1, 9, size=g).astype(float)
    got = cluster_resample_means(sums, counts, 3, 40, seed=12345)
    np.testing.assert_array_equal(got, _reference(sums, counts, 3, 40, 12345))


def test_any_split_of_the_resamples_gives_the_same_means():
    rng = np.random.default_rng(0)
    sums, counts = rng.random(500), rng.integers(1, 5, size=500).astype(float)
    whole = cluster_resample_means(sums, counts, 0, 300, seed=9)
    parts = np.concatenate([cluster_resample_means(sums, counts, lo, hi, seed=9)
                            for lo, hi in ((0, 1), (1, 120), (120, 121), (121, 300))])
    np.testing.assert_array_equal(whole, parts)
    assert not np.array_equal(whole, cluster_resample_means(sums, counts, 0, 300, seed=10))


@pytest.mark.parametrize("g", [5, 7])
def test_every_cluster_is_drawn_with_equal_probability(g):
    resamples = 20_000
    p = 1.0 / g
    sd = np.sqrt(p * (1 - p) / (g * resamples))  # of the mean share of one cluster
    for k in range(g):
        one_hot = np.zeros(g)
        one_hot[k] = 1.0
        share = cluster_resample_means(one_hot, np.ones(g), 0, resamples, seed=k).mean()
        assert abs(share - p) < 4.5 * sd, (k, share)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="positive count"):
        cluster_resample_means(np.ones(3), np.array([1.0, 0.0, 1.0]), 0, 5, seed=1)
    with pytest.raises(ValueError, match="between 1"):
        cluster_resample_means(np.ones(0), np.ones(0), 0, 5, seed=1)
    with pytest.raises(ValueError, match="equal-length"):
        cluster_resample_means(np.ones(3), np.ones(2), 0, 5, seed=1)
    with pytest.raises(ValueError, match="range"):
        cluster_resample_means(np.ones(3), np.ones(3), 5, 2, seed=1)


def _jit(sums, counts, start, stop, seed):
    from distbench.kernels.resample_jit import means

    out = np.empty(stop - start)
    means(np.asarray(sums, float), np.asarray(counts, float), start, stop, np.uint64(seed), out)
    return out


@pytest.mark.parametrize("g", [1, 2, 3, 40, 999, 2500])
@pytest.mark.parametrize("seed", [0, 7, 2**63 + 5, 2**64 - 1])
def test_the_numpy_path_gives_the_kernels_bits(g, seed):
    """Small bootstraps skip numba: the numpy path's means are the kernel's, bit for bit
    (blocks of resamples included: 2,500 clusters take several)."""
    rng = np.random.default_rng(g + seed % 97)
    sums = rng.normal(size=g) * 10
    counts = rng.integers(1, 9, size=g).astype(float)
    if g == 2:
        sums[:] = -0.0  # the kernel's total starts at 0.0: its sign of zero
    got = resample._numpy_means(sums, counts, 3, 503, seed)
    assert got.tobytes() == _jit(sums, counts, 3, 503, seed).tobytes()


def test_the_numpy_path_takes_the_first_accepted_draws(monkeypatch):
    """Rejected draws are rare (2**32 mod g in 2**32): with half of them rejected, every
    resample takes its first g accepted draws, as the documented stream does, also where the
    block's numbers run out (that resample then takes more of its stream)."""
    monkeypatch.setattr(resample, "_reject_below", lambda g: 1 << 31)
    rng = np.random.default_rng(3)
    for g in (1, 5, 64):
        sums, counts = rng.normal(size=g), rng.integers(1, 4, size=g).astype(float)
        np.testing.assert_array_equal(resample._numpy_means(sums, counts, 0, 50, 11),
                                      _reference(sums, counts, 0, 50, 11, reject_below=1 << 31))


def test_a_small_bootstrap_loads_no_numba():
    import subprocess
    import sys

    probe = ("import sys, numpy as np; from distbench.kernels.resample import "
             "cluster_resample_means as f; f(np.ones(40), np.ones(40), 0, 2000, 1); "
             "print('numba' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
