"""The headline: one score per answer in [0, 1] that no failure can improve, comparable across
modes and families, and the helpers that aggregate and compare it.

**Quality** (per trial, episode or game: each family defines its own, GAMES.md): 1 is the best
answer, 0 the worst valid one; an **invalid answer scores 0**, so replacing any valid answer by
an invalid one never raises a mean. The matrix family's is :func:`matrix_quality`
(1 - exploitability / the worst pure action's exploitability on that game).

**Calls that failed at the server are not the model's**: they are left out of every model
metric (neither 0 nor chance); a summary counts them as missing. The headline of a group is
the mean quality over its **answered** units (the call did not fail); beside it the valid
rate (valid / answered) and the quality of the valid answers, so that, as clembench's
clemscore = % played x quality, ``headline = valid_rate x quality_of_valid`` exactly. With no
answered unit there is no headline (None, and no interval over nothing).

Intervals are percentile bootstraps over units (games, instances) with the fixed seed of
:mod:`distbench.report.bootstrap`; paired comparisons resample shared units
(:func:`paired_difference`) and give a two-sided bootstrap p-value, corrected across the
metrics tested together by :func:`holm` (Holm-Bonferroni). :func:`rounded` prints a value to
the digits its interval supports. These are the functions other parts call (the perturbation
report's "headline by perturbation with paired intervals", ``distbench compare``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.report.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_mean_ci
from distbench.report.stats import PairedDifference, paired_bootstrap

QUALITY_TOLERANCE = 1e-9
"""A worst pure exploitability at or below this means every action guarantees the value (all
are optimal): every valid answer then has quality 1 (the 0/0 of the normalisation)."""

MIN_SHARED_UNITS = 30
"""Below this many shared units a comparison warns that its interval is not to be trusted
(a bootstrap over few clusters is too narrow)."""


def matrix_quality(exploitability: np.ndarray, worst: np.ndarray,
                   valid: np.ndarray) -> np.ndarray:
    """Quality of matrix answers: ``1 - exploitability / worst`` clipped to [0, 1] for a valid
    answer, 1 when ``worst <= QUALITY_TOLERANCE`` (every action optimal), 0 for an invalid one.

    The SQL of the ``matrix_scored`` view computes the same (``quality``).

    Args:
        exploitability: (N,) each answer's exploitability (ignored when invalid; may be NaN).
        worst: (N,) the worst pure action's exploitability on the answer's game,
            max_i (value - min_j U_ij).
        valid: (N,) bool, the answer parsed.

    Returns:
        (N,) float64 in [0, 1].
    """
    e = np.asarray(exploitability, dtype=np.float64)
    w = np.asarray(worst, dtype=np.float64)
    ok = np.asarray(valid, dtype=bool)
    if not (e.shape == w.shape == ok.shape):
        raise ValueError(f"exploitability, worst and valid must have one shape, got {e.shape}, "
                         f"{w.shape} and {ok.shape}")
    trivial = w <= QUALITY_TOLERANCE
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(1.0 - e / np.where(trivial, 1.0, w), 0.0, 1.0)
    q = np.where(trivial, 1.0, q)
    return np.where(ok & np.isfinite(q), q, 0.0)


@dataclass(frozen=True, slots=True)
class Headline:
    """A group's headline and its components (module docstring).

    Attributes:
        quality: Mean quality over answered units' trials (invalid = 0); None with none.
        quality_ci95: Its bootstrap 95% interval over units, or None.
        valid_rate: Valid / answered; None with none answered.
        valid_rate_ci95: Its bootstrap 95% interval over units.
        quality_of_valid: Mean quality over valid answers; None without one.
        quality_of_valid_ci95: Its bootstrap 95% interval over units.
        answered: Trials (episodes, games) whose call did not fail.
        valid: Valid answers among them.
        missing: Trials left out because a call failed (not the model's).
        units: Units (games, instances) with at least one answered trial.
    """

    quality: float | None
    quality_ci95: tuple[float, float] | None
    valid_rate: float | None
    valid_rate_ci95: tuple[float, float] | None
    quality_of_valid: float | None
    quality_of_valid_ci95: tuple[float, float] | None
    answered: int
    valid: int
    missing: int
    units: int

    def record(self, prefix: str = "") -> dict[str, object]:
        """The fields as summary-record keys (intervals as [low, high] lists)."""
        out: dict[str, object] = {}
        for name in ("quality", "valid_rate", "quality_of_valid"):
            ci = getattr(self, f"{name}_ci95")
            out[f"{prefix}{name}"] = getattr(self, name)
            out[f"{prefix}{name}_ci95"] = list(ci) if ci else None
        out.update({f"{prefix}answered": self.answered, f"{prefix}missing": self.missing})
        return out


def headline(quality_sums: Sequence[float], valid_counts: Sequence[float],
             answered_counts: Sequence[float], missing: int = 0, *,
             resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Headline:
    """The headline of a group from per-unit sums (module docstring).

    Args:
        quality_sums: (G,) per unit, the sum of the quality of its answered trials (an
            invalid answer adds 0).
        valid_counts: (G,) per unit, its valid answers.
        answered_counts: (G,) per unit, its answered trials (failed calls left out); a unit
            with none is left out.
        missing: Trials left out because their call failed.
        resamples: Bootstrap resamples.
        seed: Seed of the bootstrap.
    """
    q = np.asarray(quality_sums, dtype=np.float64)
    v = np.asarray(valid_counts, dtype=np.float64)
    n = np.asarray(answered_counts, dtype=np.float64)
    if not (q.shape == v.shape == n.shape) or q.ndim != 1:
        raise ValueError("quality_sums, valid_counts and answered_counts must be aligned 1-D")
    keep = n > 0
    q, v, n = q[keep], v[keep], n[keep]
    answered, valid = int(n.sum()), int(v.sum())

    def ci(sums: np.ndarray, counts: np.ndarray) -> tuple[float, float] | None:
        return bootstrap_mean_ci(sums, counts, resamples=resamples, seed=seed)

    if not answered:
        return Headline(None, None, None, None, None, None, 0, 0, int(missing), 0)
    total_q = math.fsum(q)
    return Headline(
        quality=total_q / answered, quality_ci95=ci(q, n),
        valid_rate=valid / answered, valid_rate_ci95=ci(v, n),
        quality_of_valid=total_q / valid if valid else None,
        quality_of_valid_ci95=ci(q, v) if valid else None,
        answered=answered, valid=valid, missing=int(missing), units=int(keep.sum()))


Paired = PairedDifference
"""A paired difference a - b over shared units with its interval and bootstrap p-value (the
one paired bootstrap: :func:`distbench.report.stats.paired_bootstrap`)."""


def paired_difference(a: Sequence[float], b: Sequence[float], *,
                      resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95,
                      seed: int = BOOTSTRAP_SEED) -> Paired | None:
    """Paired bootstrap of mean(a) - mean(b) over aligned units (whole units resampled): (n,)
    values of a and of b on the same units, same order; None without a unit."""
    return paired_bootstrap(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                            resamples=resamples, level=level, seed=seed)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given): the k-th smallest of m is
    multiplied by m - k + 1, made non-decreasing in that order, capped at 1. Rejecting where
    the adjusted p is below alpha keeps the family-wise error rate at alpha."""
    p = [float(x) for x in p_values]
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [1.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def rounded(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """``value`` with the decimals its interval supports (two significant digits of the
    half-width, as the report's tables), else four significant digits; '-' for None."""
    from distbench.report.document import format_cell, interval_decimals

    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    decimals = interval_decimals(low, high) if low is not None and high is not None else None
    return format_cell(float(value), decimals)


def interval(low: float | None, high: float | None) -> str:
    """``[low, high]`` rounded to two significant digits of its half-width; '-' for none."""
    if low is None or high is None:
        return "-"
    return f"[{rounded(low, low, high)}, {rounded(high, low, high)}]"


def headline_cell(record: dict, name: str) -> str:
    """A summary record's field ``name`` rounded to the digits its interval
    (``<name>_ci95``) supports, with the interval; ``-`` when it is None (the console
    summaries of the families)."""
    low, high = record.get(f"{name}_ci95") or (None, None)
    return with_interval(record.get(name), low, high)


def with_interval(value: float | None, low: float | None, high: float | None) -> str:
    """``value [low, high]``, all rounded to the digits the interval supports (the console's
    one interval style); ``value`` alone when there is no interval, ``-`` when there is no
    value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if low is None or high is None:
        return rounded(value)
    return f"{rounded(value, low, high)} {interval(low, high)}"
