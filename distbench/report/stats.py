"""The statistics of distbench: intervals, the verdicts read from them, and rankings.

One module, so a printout, a query and a report state the same numbers:

* **Rates** (a share of games won, draws counting half; a share of valid answers) get the
  Wilson score interval (:func:`wilson_interval`, :func:`rate_interval`), which never leaves
  [0, 1] and is not degenerate at 0/n or n/n (a normal interval is [1, 1] at n/n and can
  leave [0, 1]). For a score in [0, 1] with draws the variance is at most p(1 - p), so the
  Wilson interval is conservative there. The shipped SQL (``queries/fog_summary.sql``) writes
  the same formula with the same ``Z95``.
* **Verdicts** come from intervals, never from a point estimate (:func:`verdict`): a claim
  "above the threshold" holds when the whole interval lies above it, fails when the whole
  interval lies below it, and is inconclusive otherwise.
* **Rankings** (:func:`overlap_ranks`) give each entry 1 + the number of entries whose
  interval lies entirely better than its own, so entries whose intervals overlap share a rank
  (two identical models are never ranked 1 and 2 on float noise).
* **Paired comparisons** of models played on identical instances: models in a run meet the
  same games (matrix), instances (negotiation) or game seeds (fog), so the difference between
  two models is measured unit by unit: the per-unit differences are resampled (whole units,
  with replacement) and the percentile interval of their mean is the 95% confidence interval.
  Seeded and vectorized, so a report is reproducible. ``PairedDifference.significant`` (the
  verdict "A differs from B") is the interval excluding 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np

from distbench.report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

Z95 = 1.959963984540054
"""The standard normal quantile of 0.975: the z of every 95% interval here and in the SQL."""

Verdict = Literal["holds", "fails", "inconclusive"]


def wilson_interval(successes: float, n: int, *, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a rate ``successes / n``, clipped to [0, 1].

    Args:
        successes: Number of successes; may be fractional (draws counting half).
        n: Number of trials; 0 gives (nan, nan).
        z: Normal quantile (default: 95%).

    Returns:
        (low, high) with 0 <= low <= successes / n <= high <= 1; low is exactly 0 at 0/n and
        high exactly 1 at n/n.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return math.nan, math.nan
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high


def rate_interval(scores: np.ndarray, *, z: float = Z95) -> tuple[float, float, float]:
    """Mean of per-unit scores in [0, 1] (1 win, 0.5 draw, 0 loss) with its Wilson interval.

    Args:
        scores: (n,) scores in [0, 1].
        z: Normal quantile (default: 95%).

    Returns:
        (mean, low, high); all nan when there is no score.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return math.nan, math.nan, math.nan
    if np.any(~np.isfinite(s)) or s.min() < 0.0 or s.max() > 1.0:
        raise ValueError("scores must be finite and in [0, 1]")
    total = float(s.sum())
    low, high = wilson_interval(min(total, float(s.size)), int(s.size), z=z)
    return total / s.size, low, high


def verdict(low: float, high: float, threshold: float) -> Verdict:
    """Whether an interval shows a quantity above ``threshold``.

    Returns:
        ``"holds"`` when the whole interval lies above the threshold, ``"fails"`` when it
        lies wholly below, ``"inconclusive"`` when it contains the threshold or is undefined
        (nan).
    """
    if low > threshold:
        return "holds"
    if high < threshold:
        return "fails"
    return "inconclusive"


def overlap_ranks(lows: Sequence[float | None], highs: Sequence[float | None], *,
                  lower_is_better: bool = True) -> list[int | None]:
    """Ranks in which entries whose intervals overlap tie.

    An entry's rank is 1 + the number of entries whose interval lies entirely on the better
    side of its own (their high below its low when lower is better). Identical entries get
    the same rank; an entry without an interval gets None. The SQL of
    ``queries/leaderboard.sql`` ranks the same way.

    Args:
        lows: (n,) lower ends of the intervals.
        highs: (n,) upper ends.
        lower_is_better: Lower values are better (exploitability); else higher.
    """
    lo = [math.nan if x is None else float(x) for x in lows]
    hi = [math.nan if x is None else float(x) for x in highs]
    out: list[int | None] = []
    for i in range(len(lo)):
        if math.isnan(lo[i]) or math.isnan(hi[i]):
            out.append(None)
            continue
        if lower_is_better:
            better = sum(1 for j in range(len(lo)) if hi[j] < lo[i])
        else:
            better = sum(1 for j in range(len(lo)) if lo[j] > hi[i])
        out.append(1 + better)
    return out


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """The paired difference A - B of two models' means over their common units.

    Attributes:
        a: Label of model A.
        b: Label of model B.
        n: Number of common units.
        mean_a: A's mean over the common units.
        mean_b: B's mean over the common units.
        diff: mean_a - mean_b (the mean of the per-unit differences).
        ci_low: Lower end of the paired bootstrap confidence interval of ``diff``.
        ci_high: Upper end.
        p_value: Two-sided bootstrap p-value of ``diff = 0`` (:func:`bootstrap_p_value`).
    """

    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float = 1.0

    @property
    def significant(self) -> bool:
        """The interval excludes 0 (and there are at least two units)."""
        return self.n >= 2 and (self.ci_low > 0 or self.ci_high < 0)


def bootstrap_diff_ci(
    diffs: np.ndarray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences.

    Args:
        diffs: (n,) per-unit differences A - B; n >= 1.
        resamples: Bootstrap resamples.
        level: Confidence level in (0, 1).
        seed: Seed of the resampling.

    Returns:
        (low, high).
    """
    low, high, _ = _diff_interval(diffs, resamples, level, seed)
    return low, high


def _diff_interval(diffs: np.ndarray, resamples: int, level: float, seed: int
                   ) -> tuple[float, float, np.ndarray]:
    """(low, high, the resampled means) of :func:`bootstrap_diff_ci`."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"diffs must be a non-empty 1-D array, got shape {d.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    means = bootstrap_means(d, resamples=resamples, seed=seed)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high), means


def bootstrap_p_value(d: np.ndarray, means: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a zero mean difference: twice the smaller share of the
    resampled ``means`` on either side of 0, at most 1; 1 with fewer than 2 units, and for
    constant differences 1 when they are 0, else 0."""
    if d.size < 2:
        return 1.0
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return min(1.0, 2.0 * min(float((means <= 0).mean()), float((means >= 0).mean())))


def bootstrap_means(d: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """(resamples,) means of ``d`` (n,) resampled with replacement, whole units, seeded; in
    blocks of about 2 million draws (bounded memory): the one paired bootstrap of the reports
    (:func:`bootstrap_diff_ci`, :func:`paired_bootstrap`)."""
    n = d.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, 2_000_000 // n)
    for lo in range(0, resamples, step):
        hi = min(resamples, lo + step)
        means[lo:hi] = d[rng.integers(0, n, size=(hi - lo, n))].mean(axis=1)
    return means


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    *,
    labels: tuple[str, str] = ("A", "B"),
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
    seed: int = BOOTSTRAP_SEED,
) -> PairedDifference | None:
    """Paired bootstrap of mean(a) - mean(b) over aligned units.

    Args:
        a: (n,) model A's value per unit.
        b: (n,) model B's value on the same units, same order.
        labels: Names of A and B.
        resamples: Bootstrap resamples.
        level: Confidence level.
        seed: Seed of the resampling.

    Returns:
        The difference with its interval, or None when there is no unit.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be aligned 1-D arrays, got {a.shape} and {b.shape}")
    if a.size == 0:
        return None
    d = a - b
    low, high, means = _diff_interval(d, resamples, level, seed)
    return PairedDifference(labels[0], labels[1], int(a.size), float(a.mean()), float(b.mean()),
                            float(d.mean()), low, high, bootstrap_p_value(d, means))


def pairwise_differences(
    labels: Sequence[str],
    units: Sequence[Hashable],
    values: Sequence[float],
    *,
    seed: int = BOOTSTRAP_SEED,
) -> list[PairedDifference]:
    """Paired differences between every pair of labels (models), over their common units.

    Args:
        labels: (N,) model label of each observation.
        units: (N,) pairing unit of each observation (a game, instance, seed...); one
            observation per (label, unit).
        values: (N,) the value (e.g. a per-game mean).
        seed: Seed of the resampling.

    Returns:
        One difference per pair (a, b) of labels in sorted order that share a unit.
    """
    by_label: dict[str, dict[Hashable, float]] = {}
    for label, unit, value in zip(labels, units, values, strict=True):
        if value is not None:
            by_label.setdefault(label, {})[unit] = float(value)
    out = []
    for a, b in combinations(sorted(by_label), 2):
        common = sorted(set(by_label[a]) & set(by_label[b]), key=repr)
        if not common:
            continue
        xa = np.array([by_label[a][u] for u in common])
        xb = np.array([by_label[b][u] for u in common])
        result = paired_bootstrap(xa, xb, labels=(a, b), seed=seed)
        if result is not None:
            out.append(result)
    return out
