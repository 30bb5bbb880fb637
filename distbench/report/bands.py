"""Bootstrap bands of ratings, shared by the pairwise fits (:mod:`.ratings`) and the n-seat ones
(:mod:`.plackett_luce`): the result type :class:`BradleyTerry` and the simultaneous max-|t| band
(:func:`simultaneous_band`); see :mod:`.ratings` for why a band. :mod:`.ratings` re-exports
every name."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: The tournament's Bradley–Terry penalty: a Gaussian prior of variance 50 on each
#: log-strength (``choix``'s ``alpha``), negligible against tens of matches per pair but enough
#: to keep a player who won every match finite.
DEFAULT_ALPHA = 0.01
MAX_RESAMPLES = 10_000
"""Most bootstrap resamples of a rating's intervals: the resamples' win matrices are held
together (R x n x n numbers), and beyond this the interval's digits no longer move."""


@dataclass(frozen=True)
class BradleyTerry:
    """A Bradley–Terry fit with bootstrap intervals.

    Attributes:
        theta: (n,) centred natural-log strengths.
        low: (n,) lower end of the simultaneous band ``theta - critical * se`` (NaN when not
            bootstrapped): all ``n`` intervals hold at once at ``level``.
        high: (n,) upper end, ``theta + critical * se``.
        level: the intervals' confidence level.
        resamples: bootstrap resamples drawn.
        unconverged: resamples whose fit did not converge (excluded from the intervals).
        samples: (R, n) the converged resamples' strengths (R = 0 without resamples), for
            intervals of differences.
        se: (n,) bootstrap standard deviation of each strength (NaN when not bootstrapped).
        critical: the band's multiplier, the ``level`` quantile of ``max_i |t_i|`` (NaN when
            not bootstrapped).
        pointwise_low: (n,) lower end of each player's own percentile interval at ``level``
            (each holds on its own, not all at once).
        pointwise_high: (n,) upper end of it.
    """

    theta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    resamples: int
    unconverged: int
    samples: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    se: np.ndarray = field(default_factory=lambda: np.zeros(0))
    critical: float = math.nan
    pointwise_low: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pointwise_high: np.ndarray = field(default_factory=lambda: np.zeros(0))


def banded(theta: np.ndarray, kept: np.ndarray, level: float, resamples: int,
            unconverged: int) -> BradleyTerry:
    """The fit ``theta`` with the simultaneous band and percentile intervals of its converged
    resamples ``kept`` (R, n) (NaN intervals with fewer than two)."""
    nan = np.full(theta.shape[0], np.nan)
    if kept.shape[0] < 2:
        return BradleyTerry(theta, nan, nan.copy(), level, resamples, unconverged, kept,
                            se=nan.copy(), pointwise_low=nan.copy(), pointwise_high=nan.copy())
    low, high, se, critical = simultaneous_band(theta, kept, level)
    tail = (1.0 - level) / 2.0
    p_low, p_high = np.quantile(kept, [tail, 1.0 - tail], axis=0)
    return BradleyTerry(theta, low, high, level, resamples, unconverged, kept, se=se,
                        critical=critical, pointwise_low=p_low, pointwise_high=p_high)


def simultaneous_band(estimate: np.ndarray, samples: np.ndarray, level: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A max-|t| bootstrap band: intervals of every coordinate that hold all at once.

    ``se`` is the bootstrap standard deviation of each coordinate and ``c`` the ``level``
    quantile of ``max_k |samples[r, k] - estimate[k]| / se[k]`` over the resamples ``r``; the
    band is ``estimate +- c * se``. A coordinate whose resamples never move (``se = 0``) gets a
    point interval and does not enter the maximum.

    Args:
        estimate: (n,) the point estimates.
        samples: (R, n) bootstrap replicates, R >= 2.
        level: joint confidence level, in (0, 1).

    Returns:
        (low, high, se, c): (n,), (n,), (n,) and the multiplier.
    """
    est = np.asarray(estimate, dtype=np.float64)
    s = np.asarray(samples, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] != est.shape[0] or s.shape[0] < 2:
        raise ValueError(f"samples must have shape (R >= 2, {est.shape[0]}), got {s.shape}")
    se = s.std(axis=0, ddof=1)
    t = np.divide(np.abs(s - est), se, out=np.zeros_like(s), where=se > 0)
    critical = float(np.quantile(t.max(axis=1), level))
    return est - critical * se, est + critical * se, se, critical


def strongly_connected(wins: np.ndarray) -> bool:
    """Whether every player can reach every other along "has beaten" edges."""
    adj = wins > 0
    n = adj.shape[0]
    for graph in (adj, adj.T):
        seen = np.zeros(n, dtype=bool)
        seen[0] = True
        frontier = [0]
        while frontier:
            k = frontier.pop()
            for nxt in np.flatnonzero(graph[k] & ~seen):
                seen[nxt] = True
                frontier.append(int(nxt))
        if not seen.all():
            return False
    return True

