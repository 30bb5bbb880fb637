"""Bootstrap intervals: coverage on data with a known mean, determinism, pairing."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.report.bootstrap import bootstrap_mean_ci
from distbench.report.stats import bootstrap_diff_ci, paired_bootstrap, pairwise_differences

REPS = 200


def test_report_plain_bootstrap_ci_covers_the_true_mean_at_about_95_percent():
    rng = np.random.default_rng(7)
    hits = 0
    for rep in range(REPS):
        x = rng.normal(3.0, 2.0, size=40)
        low, high = bootstrap_mean_ci(x, np.ones_like(x), resamples=1000, seed=rep)
        hits += low <= 3.0 <= high
    assert 0.90 <= hits / REPS <= 0.99


def test_report_paired_bootstrap_ci_covers_the_true_difference_at_about_95_percent():
    rng = np.random.default_rng(11)
    hits = 0
    for rep in range(REPS):
        shared = rng.normal(0.0, 5.0, size=40)  # instance difficulty, common to both models
        a = shared + 1.0 + rng.normal(0.0, 1.0, size=40)
        b = shared + rng.normal(0.0, 1.0, size=40)
        d = paired_bootstrap(a, b, resamples=1000, seed=rep)
        hits += d.ci_low <= 1.0 <= d.ci_high
    assert 0.90 <= hits / REPS <= 0.99


def test_report_pairing_removes_the_shared_instance_noise():
    rng = np.random.default_rng(3)
    shared = rng.normal(0.0, 10.0, size=30)
    a, b = shared + 1.0 + rng.normal(0, 0.3, 30), shared + rng.normal(0, 0.3, 30)
    d = paired_bootstrap(a, b)
    assert d.significant and d.ci_low > 0.5 and d.ci_high < 1.5
    assert d.diff == pytest.approx(a.mean() - b.mean())


def test_report_bootstrap_is_deterministic_and_checks_its_input():
    d = np.arange(10.0)
    assert bootstrap_diff_ci(d, seed=1) == bootstrap_diff_ci(d, seed=1)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_diff_ci(np.array([]))
    with pytest.raises(ValueError, match="aligned"):
        paired_bootstrap(np.ones(3), np.ones(4))
    assert paired_bootstrap(np.array([]), np.array([])) is None


def test_report_pairwise_differences_use_only_common_units():
    labels = ["m1", "m1", "m1", "m2", "m2", "m3"]
    units = ["g1", "g2", "g3", "g2", "g3", "g9"]
    values = [1.0, 2.0, 3.0, 0.0, 1.0, 5.0]
    (d,) = pairwise_differences(labels, units, values)
    assert (d.a, d.b, d.n) == ("m1", "m2", 2)
    assert d.diff == pytest.approx(2.0) and d.mean_a == pytest.approx(2.5)
    assert not d.significant or d.ci_low > 0
