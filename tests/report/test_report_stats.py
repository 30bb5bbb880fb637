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


def test_report_wilson_interval_is_bounded_at_zero_and_all():
    from distbench.report.stats import wilson_interval

    for n in (1, 3, 10, 200):
        low, high = wilson_interval(0, n)
        assert low == 0.0 and 0.0 < high < 1.0
        low, high = wilson_interval(n, n)
        assert high == 1.0 and 0.0 < low < 1.0
        assert wilson_interval(0, n)[1] == pytest.approx(1.0 - wilson_interval(n, n)[0])
    # textbook value: 0 of 10 -> [0, 0.2775]
    assert wilson_interval(0, 10)[1] == pytest.approx(0.27753, abs=1e-5)
    low, high = wilson_interval(5, 10)
    assert (low, high) == pytest.approx((0.23659, 0.76341), abs=1e-5)
    assert all(np.isnan(wilson_interval(0, 0)))
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)


def test_report_rate_interval_never_leaves_zero_one_where_the_normal_one_does():
    from distbench.report.stats import rate_interval

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        scores = rng.choice([0.0, 0.5, 1.0], size=n, p=rng.dirichlet([1, 1, 1]))
        mean, low, high = rate_interval(scores)
        assert 0.0 <= low <= mean <= high <= 1.0
    mean, low, high = rate_interval(np.array([1.0, 1.0, 1.0, 0.5]))
    assert mean == 0.875 and high <= 1.0 and low > 0.3


def test_report_verdict_reads_the_interval_not_the_point():
    from distbench.report.stats import verdict

    assert verdict(0.413, 0.837, 0.5) == "inconclusive"
    assert verdict(0.51, 0.9, 0.5) == "holds"
    assert verdict(0.1, 0.49, 0.5) == "fails"
    assert verdict(float("nan"), float("nan"), 0.5) == "inconclusive"


def test_report_overlap_ranks_tie_identical_and_overlapping_entries():
    from distbench.report.stats import overlap_ranks

    # identical entries (up to float noise) tie; a clearly worse one ranks after both
    lows, highs = [1.0, 1.0 + 1e-15, 3.0, None], [2.0, 2.0 + 1e-15, 4.0, None]
    assert overlap_ranks(lows, highs) == [1, 1, 3, None]
    assert overlap_ranks(lows, highs, lower_is_better=False) == [2, 2, 1, None]
    # overlap is not transitive: B overlaps A and C, A and C do not overlap
    assert overlap_ranks([0.0, 0.5, 1.1], [1.0, 1.5, 2.0]) == [1, 1, 2]


def test_one_paired_bootstrap_serves_the_report_and_compare():
    """``paired_bootstrap`` (report tables) and ``headline.paired_difference`` (compare) are one
    bootstrap: the same interval and the same p-value from the same seed."""
    from distbench.report.headline import paired_difference
    from distbench.report.stats import paired_bootstrap

    rng = np.random.default_rng(7)
    a, b = rng.normal(size=40), rng.normal(0.3, size=40)
    one, other = paired_bootstrap(a, b, seed=11), paired_difference(list(a), list(b), seed=11)
    assert (one.diff, one.ci_low, one.ci_high, one.p_value) == \
        (other.diff, other.ci_low, other.ci_high, other.p_value)
    assert 0.0 <= one.p_value < 0.2
