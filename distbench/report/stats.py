"""Paired bootstrap comparisons of models played on identical instances.

Models in a run meet the same games (matrix), instances (negotiation) or game seeds (fog), so
the difference between two models is measured unit by unit: the per-unit differences are
resampled (whole units, with replacement) and the percentile interval of their mean is the
95% confidence interval. Seeded and vectorized, so a report is reproducible.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from distbench.report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED


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
    """

    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float

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
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"diffs must be a non-empty 1-D array, got shape {d.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = d.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, 2_000_000 // n)
    for lo in range(0, resamples, step):
        hi = min(resamples, lo + step)
        means[lo:hi] = d[rng.integers(0, n, size=(hi - lo, n))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


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
    low, high = bootstrap_diff_ci(a - b, resamples=resamples, level=level, seed=seed)
    return PairedDifference(labels[0], labels[1], int(a.size), float(a.mean()), float(b.mean()),
                            float((a - b).mean()), low, high)


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
