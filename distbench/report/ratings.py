"""Ratings of a population from pairwise matches: Bradley–Terry, Elo, Nash averaging.

A *match* is one game between two players ``a`` and ``b``; it gives ``outcome`` (``a``'s result:
1 a win, 0.5 a tie, 0 a loss, decided by the two players' scores in that game) and ``margin``
(``a``'s score minus ``b``'s, in the family's units).

- **Bradley–Terry** (:func:`fit_bradley_terry`): maximum likelihood over the outcomes, a tie
  counted as half a win for each player (not Davidson's tie parameter: a tie is evidence that
  the two are equal, and half-wins keep the likelihood the plain Bradley–Terry one, which
  ``choix`` fits from the same counts). Strengths are natural-log odds, centred (mean 0). An
  optional L2 penalty ``alpha`` (``choix.opt_pairwise``'s convention, ``alpha * sum theta**2``)
  keeps them finite when a player won or lost every match; a tournament uses
  :data:`DEFAULT_ALPHA`.
- **Intervals** (:func:`bootstrap_bradley_terry`): a *simultaneous* band from the bootstrap over
  matches (resampled within each pair of players, so the schedule is kept; seeded): every
  player's interval is ``theta_i +- c * se_i``, ``se_i`` the bootstrap standard deviation of
  ``theta_i`` and ``c`` the ``level`` quantile of ``max_i |theta*_i - theta_i| / se_i`` over the
  resamples (a max-|t| band). All the players' intervals hold at once with probability about
  ``level``, which is what a reader of a ranking wants; per-player percentile intervals at 95%
  each covered the five planted strengths of the test all at once in only 76-79 of 100
  repetitions, the band in 98-100 (``tests/report/test_ratings.py``). The intervals cover the
  centred strengths (mean 0, the fit's convention), so a truth is compared centred too.
  Per-player percentile intervals stay available (:attr:`BradleyTerry.pointwise_low`).
- **Elo** (:func:`elo`): a display of the same fit, ``1500 + 400 / ln 10 * theta``; nothing
  is fitted on the Elo scale.
- **Nash averaging** (:func:`nash_average`, Balduzzi et al. 2018): the meta-game is the
  antisymmetric matrix ``A[i, j]`` of the mean margin of ``i`` against ``j``; it is a symmetric
  zero-sum game of value 0, solved by :func:`distbench.kernels.zero_sum.solve_zero_sum`. Among
  its optimal strategies the maximum-entropy one is selected, exactly up to rounding: linear
  programs find the players that carry mass in some optimal strategy, and the entropy is
  maximised over the equilibrium face ``{p in simplex : A p <= 0}`` through its smooth dual,
  polished by Newton steps (see :func:`nash_average`). A player's *mass* is its probability in that
  strategy, its *rating* ``(A p)_i`` its expected margin against the equilibrium mixture
  (``<= 0``, 0 on the support). Adding an exact copy of a player splits its mass between the
  copies and leaves every rating unchanged, so a population cannot be tilted by packing it
  with one style.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from distbench.kernels.bradley_terry import fit_bradley_terry_batch
from distbench.kernels.zero_sum import solve_zero_sum

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_ALPHA", "ELO_BASE", "ELO_SCALE", "BradleyTerry", "NashAveraging",
           "PairStats", "RankingEvents", "RatingComparison", "bootstrap_bradley_terry", "compare_ratings", "elo", "fit_bradley_terry", "meta_game",
           "nash_average", "pair_stats", "bootstrap_plackett_luce", "fit_plackett_luce",
           "ranking_events", "resample_wins", "simultaneous_band", "win_matrix"]

#: The tournament's Bradley–Terry penalty: a Gaussian prior of variance 50 on each
#: log-strength (``choix``'s ``alpha``), negligible against tens of matches per pair but enough
#: to keep a player who won every match finite.
DEFAULT_ALPHA = 0.01
MAX_RESAMPLES = 10_000
"""Most bootstrap resamples of a rating's intervals: the resamples' win matrices are held
together (R x n x n numbers), and beyond this the interval's digits no longer move."""
ELO_BASE = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)
#: A maximum-entropy candidate is accepted when ``max(A p) <= NASH_TOL * max(1, max |A|)``.
NASH_TOL = 1e-7


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


@dataclass(frozen=True)
class NashAveraging:
    """The maximum-entropy Nash equilibrium of a meta-game and the ratings it gives.

    Attributes:
        mass: (n,) the equilibrium's probability of each player.
        rating: (n,) ``A @ mass``: each player's mean margin against the equilibrium mixture.
        entropy: natural-log entropy of ``mass``.
        max_entropy: True when the entropy step was accepted; False: the kernel's equilibrium.
    """

    mass: np.ndarray
    rating: np.ndarray
    entropy: float
    max_entropy: bool


@dataclass(frozen=True)
class PairStats:
    """Per unordered pair ``i < j`` with at least one match.

    Attributes:
        i, j: (P,) player indices.
        matches: (P,) matches played.
        diff: (P,) mean margin of ``i`` against ``j``.
        low, high: (P,) its percentile bootstrap interval (over the pair's matches).
        wins_i: (P,) ``i``'s wins, a tie counted as half.
    """

    i: np.ndarray
    j: np.ndarray
    matches: np.ndarray
    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    wins_i: np.ndarray


def _check_matches(n: int, a: np.ndarray, b: np.ndarray, values: np.ndarray,
                   name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if not (a.shape == b.shape == v.shape) or a.ndim != 1:
        raise ValueError(f"a, b and {name} must be 1-d arrays of one length, got "
                         f"{a.shape}, {b.shape}, {v.shape}")
    if a.size and (a.min() < 0 or b.min() < 0 or a.max() >= n or b.max() >= n):
        raise ValueError(f"player indices must lie in [0, {n})")
    if np.any(a == b):
        raise ValueError("a player cannot play itself in a rated match")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite")
    return a, b, v


def win_matrix(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """(n, n) wins of ``i`` over ``j``, a tie (outcome 0.5) counted as half a win each way.

    Args:
        n: players.
        a, b: (M,) player indices of each match.
        outcome: (M,) ``a``'s result in [0, 1].
    """
    a, b, o = _check_matches(n, a, b, outcome, "outcome")
    if np.any((o < 0) | (o > 1)):
        raise ValueError("outcome must lie in [0, 1] (1 a win, 0.5 a tie, 0 a loss)")
    wins = np.zeros((n, n))
    np.add.at(wins, (a, b), o)
    np.add.at(wins, (b, a), 1.0 - o)
    return wins


def _strongly_connected(wins: np.ndarray) -> bool:
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


def fit_bradley_terry(wins: np.ndarray, *, alpha: float = 0.0) -> np.ndarray:
    """Centred Bradley–Terry log-strengths of one win matrix.

    Args:
        wins: (n, n) wins of ``i`` over ``j`` (fractional counts allowed).
        alpha: L2 penalty (``choix``'s convention); 0: maximum likelihood.

    Returns:
        (n,) float64, mean 0.

    Raises:
        ValueError: a bad matrix; with ``alpha = 0``, data for which the maximum does not
            exist (someone never won or never lost within a part of the population).
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2:
        raise ValueError(f"wins must be an (n, n) matrix, got shape {w.shape}")
    if alpha == 0 and not _strongly_connected(w):
        raise ValueError("the maximum-likelihood strengths do not exist: some players never "
                         "lost (or never won) against the rest; play more matches or pass "
                         "alpha > 0")
    theta, converged = fit_bradley_terry_batch(w[None], alpha)
    if not converged[0]:
        raise ValueError("the Bradley–Terry fit did not converge")
    return theta[0]


def elo(theta: np.ndarray) -> np.ndarray:
    """The Elo display of Bradley–Terry log-strengths: ``1500 + 400 / ln 10 * theta``."""
    return ELO_BASE + ELO_SCALE * np.asarray(theta, dtype=np.float64)


def _pair_groups(a: np.ndarray, b: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    groups: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        groups.setdefault(key, []).append(k)
    return {key: np.asarray(idx) for key, idx in sorted(groups.items())}


def bootstrap_bradley_terry(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, *,
                            seed: int, alpha: float = DEFAULT_ALPHA, resamples: int = 1000,
                            level: float = 0.95) -> BradleyTerry:
    """Bradley–Terry strengths with a simultaneous bootstrap band over matches.

    Each resample draws, for every pair of players, as many of that pair's matches as it
    played, with replacement; the win matrices of all resamples are fitted in one batch. The
    band is :func:`simultaneous_band` of the converged resamples (see the module docstring).

    Args:
        n: players.
        a, b: (M,) player indices of each match.
        outcome: (M,) ``a``'s result (1, 0.5, 0).
        seed: the resampling seed.
        alpha: the L2 penalty (0: maximum likelihood; refused when it does not exist).
        resamples: bootstrap resamples (0: no intervals).
        level: confidence level of the intervals, in (0, 1).

    Raises:
        ValueError: bad inputs (see :func:`win_matrix`, :func:`fit_bradley_terry`).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if not 0 <= resamples <= MAX_RESAMPLES:
        raise ValueError(f"resamples must be from 0 to {MAX_RESAMPLES:,}, got {resamples:,}")
    a, b, o = _check_matches(n, a, b, outcome, "outcome")
    theta = fit_bradley_terry(win_matrix(n, a, b, o), alpha=alpha)
    nan = np.full(n, np.nan)
    if resamples == 0:
        return BradleyTerry(theta, nan, nan.copy(), level, 0, 0, se=nan.copy(),
                            pointwise_low=nan.copy(), pointwise_high=nan.copy())
    boot, converged = fit_bradley_terry_batch(
        resample_wins(n, a, b, o, seed=seed, resamples=resamples), alpha)
    return _banded(theta, boot[converged], level, resamples, int((~converged).sum()))


def _banded(theta: np.ndarray, kept: np.ndarray, level: float, resamples: int,
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


def resample_wins(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, *, seed: int,
                  resamples: int) -> np.ndarray:
    """(R, n, n) win matrices of bootstrap resamples of the matches, drawn within each pair.

    Args:
        n: players.
        a, b: (M,) player indices of each match (checked by the caller).
        outcome: (M,) ``a``'s result.
        seed: the resampling seed.
        resamples: R.
    """
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 28])))
    wins = np.zeros((resamples, n, n))
    for (i, j), idx in _pair_groups(a, b).items():
        draw = idx[rng.integers(0, idx.size, size=(resamples, idx.size))]
        # outcome from i's side
        o_i = np.where(a[draw] == i, outcome[draw], 1.0 - outcome[draw]).sum(axis=1)
        wins[:, i, j] = o_i
        wins[:, j, i] = idx.size - o_i
    return wins


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


def meta_game(n: int, a: np.ndarray, b: np.ndarray, margin: np.ndarray) -> np.ndarray:
    """(n, n) antisymmetric matrix of the mean margin of ``i`` against ``j`` (0 unplayed)."""
    a, b, m = _check_matches(n, a, b, margin, "margin")
    total = np.zeros((n, n))
    count = np.zeros((n, n))
    np.add.at(total, (a, b), m)
    np.add.at(total, (b, a), -m)
    np.add.at(count, (a, b), 1.0)
    np.add.at(count, (b, a), 1.0)
    return np.divide(total, count, out=np.zeros((n, n)), where=count > 0)


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def _equilibrium_support(A: np.ndarray, p0: np.ndarray, tol: float) -> np.ndarray:
    """Which players have positive mass in some optimal strategy of the symmetric zero-sum
    game ``A`` (value 0), as a boolean mask.

    By strict complementarity (Goldman–Tucker) each player ``i`` either has ``p_i > 0`` in some
    optimal ``p`` or slack ``-(A p)_i > 0`` in some optimal ``p``, never both. The kernel's
    solution ``p0`` settles most players; each one it leaves undecided gets one LP, maximising
    ``p_i - (A p)_i`` over the optimal set.
    """
    from scipy.optimize import linprog

    n = A.shape[0]
    positive = p0 > tol
    slack = -(A @ p0) > tol
    for i in range(n):
        if positive[i] or slack[i]:
            continue
        c = A[i].copy()
        c[i] -= 1.0  # minimise -(p_i - (A p)_i)
        res = linprog(c, A_ub=A, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0],
                      bounds=[(0.0, None)] * n, method="highs")
        if res.status == 0:
            positive |= res.x > tol
            slack |= -(A @ res.x) > tol
    return positive


def _max_entropy(A: np.ndarray, support: np.ndarray) -> np.ndarray:
    """The maximum-entropy point of ``{p in simplex : A p <= 0}`` given its support.

    On the support ``S`` the rows of ``S`` hold with equality on the whole optimal set
    (complementarity) and the others are inequalities, so the problem is
    ``max H(p_S)`` subject to ``M p_S = 0``, ``N p_S <= 0``, ``sum p_S = 1``. Its dual is the
    smooth convex ``min_{lam, nu >= 0} log sum_i exp(-(M^T lam + N^T nu)_i)``, whose minimiser
    gives ``p_S`` as the softmax of ``-(M^T lam + N^T nu)``: solved by L-BFGS-B, then polished
    by Newton steps on the active constraints until the step vanishes (the face's equalities
    then hold to rounding, not to a solver's tolerance).
    """
    from scipy.optimize import minimize

    idx = np.flatnonzero(support)
    rows = np.vstack([A[np.ix_(idx, idx)], A[np.ix_(np.flatnonzero(~support), idx)]])
    k = len(idx)

    def softmax(z: np.ndarray) -> tuple[np.ndarray, float]:
        e = -(rows.T @ z)
        top = float(e.max())
        w = np.exp(e - top)
        return w / w.sum(), top + math.log(float(w.sum()))

    def dual(z: np.ndarray) -> tuple[float, np.ndarray]:
        p, value = softmax(z)
        return value, -(rows @ p)

    z = np.zeros(len(rows))
    if len(rows):
        res = minimize(dual, z, jac=True, method="L-BFGS-B",
                       bounds=[(None, None)] * k + [(0.0, None)] * (len(rows) - k),
                       options={"ftol": 0.0, "gtol": 1e-13, "maxiter": 5000, "maxcor": 30})
        z = res.x
        for _ in range(100):
            p, _ = softmax(z)
            active = np.ones(len(rows), dtype=bool)
            active[k:] = z[k:] > 0.0
            r = rows[active]
            hessian = r @ (np.diag(p) - np.outer(p, p)) @ r.T
            step = np.linalg.lstsq(hessian, r @ p, rcond=1e-13)[0]
            z[active] += step
            z[k:] = np.maximum(z[k:], 0.0)
            if np.abs(step).max() <= 1e-15 * max(1.0, float(np.abs(z).max())):
                break
    mass = np.zeros(len(support))
    mass[idx] = softmax(z)[0]
    return mass


def nash_average(meta: np.ndarray) -> NashAveraging:
    """Nash averaging of an antisymmetric meta-game (maximum-entropy equilibrium).

    The maximum-entropy equilibrium is exact up to rounding (about 1e-12 on the tests' games,
    checked to 1e-9 in ``tests/report/test_ratings.py``): the players that can carry mass are
    found by linear programs (:func:`_equilibrium_support`), and the entropy is maximised over
    the equilibrium face by its dual (:func:`_max_entropy`). If that point is not an
    equilibrium within :data:`NASH_TOL` (never seen), the kernel's equilibrium is kept and
    ``max_entropy`` is False.

    Args:
        meta: (n, n) antisymmetric payoffs, ``meta[i, j]`` what ``i`` gains against ``j``.

    Raises:
        ValueError: not square, not finite, or not antisymmetric.
    """
    A = np.asarray(meta, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise ValueError(f"meta must be a square matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("meta must be finite")
    scale = max(1.0, float(np.abs(A).max()))
    if np.abs(A + A.T).max() > 1e-9 * scale:
        raise ValueError("meta must be antisymmetric (meta[i, j] == -meta[j, i])")
    A = 0.5 * (A - A.T)  # exactly antisymmetric
    p0 = solve_zero_sum(A[None]).row[0]
    p0 = np.clip(p0, 0.0, None)
    p0 /= p0.sum()
    tol = NASH_TOL * scale
    mass, accepted = p0, False
    support = _equilibrium_support(A, p0, 1e-9 * scale)
    if support.any():
        cand = _max_entropy(A, support)
        if (A @ cand).max() <= tol and _entropy(cand) >= _entropy(p0) - 1e-12:
            mass, accepted = cand, True
    if not accepted:
        logger.info("Nash averaging: the maximum-entropy equilibrium was not found; kept the "
                    "kernel's equilibrium")
    return NashAveraging(mass, A @ mass, _entropy(mass), accepted)


def pair_stats(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, margin: np.ndarray,
               *, seed: int, resamples: int = 1000, level: float = 0.95) -> PairStats:
    """Per pair of players: matches, mean margin and its percentile bootstrap interval.

    Raises:
        ValueError: bad inputs.
    """
    a, b, o = _check_matches(n, a, b, outcome, "outcome")
    _, _, m = _check_matches(n, a, b, margin, "margin")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 29])))
    tail = (1.0 - level) / 2.0
    rows: list[tuple[int, int, int, float, float, float, float]] = []
    for (i, j), idx in _pair_groups(a, b).items():
        sign = np.where(a[idx] == i, 1.0, -1.0)
        margins = sign * m[idx]
        wins_i = float(np.where(a[idx] == i, o[idx], 1.0 - o[idx]).sum())
        if resamples > 0:
            means = margins[rng.integers(0, idx.size, size=(resamples, idx.size))].mean(axis=1)
            low, high = np.quantile(means, [tail, 1.0 - tail])
        else:
            low = high = math.nan
        rows.append((i, j, idx.size, float(margins.mean()), float(low), float(high), wins_i))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 7
    return PairStats(np.asarray(cols[0], dtype=np.int64), np.asarray(cols[1], dtype=np.int64),
                     np.asarray(cols[2], dtype=np.int64), np.asarray(cols[3], dtype=np.float64),
                     np.asarray(cols[4], dtype=np.float64), np.asarray(cols[5], dtype=np.float64),
                     np.asarray(cols[6], dtype=np.float64))


@dataclass(frozen=True)
class RatingComparison:
    """Two tournaments' ratings of the players they share, second minus first.

    Bradley–Terry strengths are re-centred over the shared players in each run before they are
    subtracted (each fit is centred over its own population, which may differ); Nash-averaging
    ratings are each run's own (a mean margin against that run's equilibrium mixture). Every
    interval comes from one bootstrap over the matches of both runs (each resampled within its
    pairs of players, as :func:`bootstrap_bradley_terry` does) and is a simultaneous band over
    the shared players (:func:`simultaneous_band`), like the ratings' own intervals.

    Attributes:
        players: Labels of the shared players, in the first run's order.
        only_a, only_b: Players of one run only.
        matches_a, matches_b: (S,) games of each shared player in each run.
        bt_a, bt_b: (S,) re-centred strengths.
        bt_diff, bt_low, bt_high: (S,) ``bt_b - bt_a`` and its band (NaN: no resamples).
        nash_a, nash_b: (S,) Nash-averaging ratings.
        nash_diff, nash_low, nash_high: (S,) ``nash_b - nash_a`` and its band.
        level: the bands' confidence level.
        resamples: bootstrap resamples drawn (per run).
    """

    players: list[str]
    only_a: list[str]
    only_b: list[str]
    matches_a: np.ndarray
    matches_b: np.ndarray
    bt_a: np.ndarray
    bt_b: np.ndarray
    bt_diff: np.ndarray
    bt_low: np.ndarray
    bt_high: np.ndarray
    nash_a: np.ndarray
    nash_b: np.ndarray
    nash_diff: np.ndarray
    nash_low: np.ndarray
    nash_high: np.ndarray
    level: float
    resamples: int


Matches = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""(a, b, outcome, margin) of a set of matches."""


def _resampled_ratings(n: int, matches: Matches, *, seed: int, resamples: int,
                       alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R, n) strengths, (R, n) Nash ratings of resamples of ``matches`` (drawn within each
    pair) and (R,) whether the strength fit converged."""
    a, b, o, m = matches
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 30])))
    wins = np.zeros((resamples, n, n))
    metas = np.zeros((resamples, n, n))
    for (i, j), idx in _pair_groups(a, b).items():
        draw = idx[rng.integers(0, idx.size, size=(resamples, idx.size))]
        from_i = a[draw] == i
        o_i = np.where(from_i, o[draw], 1.0 - o[draw]).sum(axis=1)
        wins[:, i, j] = o_i
        wins[:, j, i] = idx.size - o_i
        mean = np.where(from_i, m[draw], -m[draw]).mean(axis=1)
        metas[:, i, j] = mean
        metas[:, j, i] = -mean
    theta, converged = fit_bradley_terry_batch(wins, alpha)
    nash = np.stack([nash_average(meta).rating for meta in metas]) if resamples else \
        np.zeros((0, n))
    return theta, nash, converged


def compare_ratings(labels_a: Sequence[str], matches_a: Matches, labels_b: Sequence[str],
                    matches_b: Matches, *, seed: int, resamples: int = 500,
                    level: float = 0.95, alpha: float = DEFAULT_ALPHA) -> RatingComparison:
    """The rating differences of the players two tournaments share (see
    :class:`RatingComparison`).

    Args:
        labels_a, labels_b: each run's players (indices of its matches).
        matches_a, matches_b: each run's (a, b, outcome, margin) arrays.
        seed: the resampling seed.
        resamples: bootstrap resamples per run (0: no intervals).
        level: confidence level of the bands.
        alpha: the Bradley–Terry penalty (the tournament's by default).

    Raises:
        ValueError: bad inputs, or no player in both runs.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    runs = []
    for labels, matches in ((labels_a, matches_a), (labels_b, matches_b)):
        n = len(labels)
        a, b, o = _check_matches(n, matches[0], matches[1], matches[2], "outcome")
        _, _, m = _check_matches(n, a, b, matches[3], "margin")
        runs.append((list(labels), (a, b, o, m)))
    (la, ma), (lb, mb) = runs
    shared = [p for p in la if p in lb]
    if not shared:
        raise ValueError("the two tournaments have no player in common")
    ia = np.array([la.index(p) for p in shared])
    ib = np.array([lb.index(p) for p in shared])

    def centred(theta: np.ndarray, idx: np.ndarray) -> np.ndarray:
        sub = theta[..., idx]
        return sub - sub.mean(axis=-1, keepdims=True)

    points, boots = [], []
    for k, ((labels, matches), idx) in enumerate(((runs[0], ia), (runs[1], ib))):
        n = len(labels)
        a, b, o, m = matches
        theta = fit_bradley_terry(win_matrix(n, a, b, o), alpha=alpha)
        nash = nash_average(meta_game(n, a, b, m)).rating
        games = np.array([int(((a == q) | (b == q)).sum()) for q in idx])
        points.append((centred(theta, idx), nash[idx], games))
        if resamples:
            t, r, ok = _resampled_ratings(n, matches, seed=seed + k, resamples=resamples,
                                          alpha=alpha)
            boots.append((centred(t, idx), r[:, idx], ok))
    (bt_a, nash_a, games_a), (bt_b, nash_b, games_b) = points
    bt_diff, nash_diff = bt_b - bt_a, nash_b - nash_a
    nan = np.full(len(shared), np.nan)
    bt_low = bt_high = nash_low = nash_high = nan
    if resamples:
        ok = boots[0][2] & boots[1][2]
        if ok.sum() >= 2:
            bt_low, bt_high, _, _ = simultaneous_band(bt_diff, (boots[1][0] - boots[0][0])[ok],
                                                      level)
            nash_low, nash_high, _, _ = simultaneous_band(
                nash_diff, (boots[1][1] - boots[0][1])[ok], level)
    return RatingComparison(
        shared, [p for p in la if p not in lb], [p for p in lb if p not in la], games_a,
        games_b, bt_a, bt_b, bt_diff, bt_low, bt_high, nash_a, nash_b, nash_diff, nash_low,
        nash_high, level, resamples)


# -- Plackett–Luce: ratings from the finishing orders of games of any number of players ------
#
# A game of n seats gives a finishing order by score (higher first; equal scores tie). Under
# Plackett–Luce the order is drawn top down: the first is seat s with probability
# exp(theta_s) / sum over the seats still in play of exp(theta), then the next among the rest,
# and so on. For two seats it is Bradley–Terry. A player may fill several seats of one game
# (ten seats of one model, or five and five): each seat enters with its player's strength.
#
# Ties as ties: a group of k tied seats counts as the mean over its k! orders of the
# log-likelihood of each (every tie-break equally likely), which for two seats is Bradley–Terry's
# "half a win each way" (``win_matrix``). The mean is exact and cheap: after (k - m) of the group
# have been drawn, the m left are a uniformly random sub-multiset of it (hypergeometric over the
# players' seats), and each of them is drawn next with probability 1/m; the choice events
# (winner, the seats still in play, weight) of all those stages are summed with their
# probabilities (:func:`ranking_events`). Without ties it is the plain likelihood, equal to
# ``choix``'s ``opt_rankings`` / ``ilsr_rankings`` on the same rankings (tests).
#
# Nash averaging for n players: it rates from an antisymmetric two-player meta-game, and a game
# of n seats is not one. From n-player games one can still form the pairwise meta-game of
# mean score differences between two players at the same table, but that averages over
# whoever else sat there, so its "does not reward beating copies of one style" guarantee holds
# only for the pairwise projection, not for the n-player game. The tournament reports
# Plackett–Luce for n-player games and leaves Nash averaging to two-seat families.


@dataclass(frozen=True)
class RankingEvents:
    """The choice events of a set of games, merged (see :func:`ranking_events`).

    Attributes:
        winner: (U,) the player drawn at each distinct event.
        counts: (U, n) the seats of each player still in play at that event.
        weights: (G, U) each game's weight on each event (0 when it has none).
    """

    winner: np.ndarray
    counts: np.ndarray
    weights: np.ndarray


Game = tuple[Sequence[int], Sequence[float]]
"""One game: the player of each seat (indices, repeats allowed) and each seat's score."""


def _tie_groups(players: np.ndarray, scores: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(-scores, kind="stable")
    groups: list[list[int]] = []
    last = None
    for s in order.tolist():
        if last is None or scores[s] != last:
            groups.append([])
            last = scores[s]
        groups[-1].append(int(players[s]))
    return [np.asarray(g, dtype=np.int64) for g in groups]


def _sub_multisets(tied: dict[int, int]) -> list[tuple[dict[int, int], float]]:
    """Each non-empty sub-multiset of ``tied`` (player -> seats) with its probability of being
    the part left after the rest of the group was drawn in a uniformly random order."""
    from itertools import product
    from math import comb

    players = sorted(tied)
    k = sum(tied.values())
    out = []
    for take in product(*(range(tied[p] + 1) for p in players)):
        m = sum(take)
        if m == 0:
            continue
        ways = 1
        for p, u in zip(players, take, strict=True):
            ways *= comb(tied[p], u)
        out.append(({p: u for p, u in zip(players, take, strict=True) if u}, ways / comb(k, m)))
    return out


def ranking_events(n: int, games: Sequence[Game]) -> RankingEvents:
    """The Plackett–Luce choice events of ``games``, ties as the mean over their orders.

    Args:
        n: players.
        games: each game's (seat players, seat scores); higher scores finish first.

    Raises:
        ValueError: a game of fewer than two seats, a bad player index, a non-finite score.
    """
    keys: dict[tuple[int, tuple[int, ...]], int] = {}
    per_game: list[dict[int, float]] = []
    for players, scores in games:
        p = np.asarray(players, dtype=np.int64)
        s = np.asarray(scores, dtype=np.float64)
        if p.ndim != 1 or p.shape != s.shape or p.size < 2:
            raise ValueError("each game needs at least two seats, one score per seat")
        if p.min() < 0 or p.max() >= n:
            raise ValueError(f"player indices must lie in [0, {n})")
        if not np.all(np.isfinite(s)):
            raise ValueError("scores must be finite")
        left = np.bincount(p, minlength=n)
        events: dict[int, float] = {}
        for group in _tie_groups(p, s):
            tied = np.bincount(group, minlength=n)
            rest = left - tied
            for sub, prob in _sub_multisets({int(q): int(tied[q]) for q in np.flatnonzero(tied)}):
                counts = rest.copy()
                for q, u in sub.items():
                    counts[q] += u
                m = sum(sub.values())
                for q, u in sub.items():
                    if counts.sum() == counts[q]:
                        continue  # only the winner's own seats in play: probability 1
                    key = (q, tuple(counts.tolist()))
                    idx = keys.setdefault(key, len(keys))
                    events[idx] = events.get(idx, 0.0) + prob * u / m
            left = rest
        per_game.append(events)
    weights = np.zeros((len(per_game), len(keys)))
    for g, events in enumerate(per_game):
        for idx, w in events.items():
            weights[g, idx] = w
    winner = np.array([k[0] for k in keys], dtype=np.int64)
    counts = np.array([k[1] for k in keys], dtype=np.float64).reshape(len(keys), n)
    return RankingEvents(winner, counts, weights)


def _fit_events(winner: np.ndarray, counts: np.ndarray, w: np.ndarray, alpha: float, *,
                tol: float = 1e-10, max_iter: int = 200) -> tuple[np.ndarray, bool]:
    """Newton's method with step halving on the penalised Plackett–Luce objective
    ``alpha * sum theta**2 - sum_e w_e (theta_winner - log sum_j counts_ej exp theta_j)``."""
    n = counts.shape[1]
    wins = np.bincount(winner, weights=w, minlength=n)
    theta = np.zeros(n)
    ones = np.full((n, n), 1.0 / n)

    def objective(t: np.ndarray) -> float:
        z = counts @ np.exp(t - t.max())
        return float(alpha * (t ** 2).sum() - wins @ t + w @ (np.log(z) + t.max()))

    f = objective(theta)
    for _ in range(max_iter):
        e = counts * np.exp(theta - theta.max())
        p = e / e.sum(axis=1, keepdims=True)
        grad = 2 * alpha * theta - wins + w @ p
        if np.abs(grad).max() < tol:
            return theta - theta.mean(), True
        hess = (2 * alpha * np.eye(n) + np.diag(w @ p) - (p * w[:, None]).T @ p + ones)
        step = np.linalg.solve(hess, grad)
        size = 1.0
        while size > 1e-10:
            cand = theta - size * step
            cand -= cand.mean()
            fc = objective(cand)
            if fc <= f + 1e-15 * max(1.0, abs(f)):
                theta, f = cand, fc
                break
            size /= 2
        else:
            break
    e = counts * np.exp(theta - theta.max())
    p = e / e.sum(axis=1, keepdims=True)
    grad = 2 * alpha * theta - wins + w @ p
    return theta - theta.mean(), bool(np.abs(grad).max() < tol)


def _beaten(n: int, ev: RankingEvents, w: np.ndarray) -> np.ndarray:
    out = np.zeros((n, n))
    for k in np.flatnonzero(w > 0):
        out[ev.winner[k]] += ev.counts[k] > 0
    np.fill_diagonal(out, 0.0)
    return out


def fit_plackett_luce(n: int, games: Sequence[Game], *, alpha: float = 0.0) -> np.ndarray:
    """Centred Plackett–Luce log-strengths from the finishing orders of ``games``.

    Args:
        n: players.
        games: each game's (seat players, seat scores); see :func:`ranking_events`.
        alpha: L2 penalty ``alpha * sum theta**2`` (``choix``'s); 0: maximum likelihood.

    Returns:
        (n,) float64, mean 0.

    Raises:
        ValueError: bad games; with ``alpha = 0``, data without a maximum (some players
            never finished ahead of, or never behind, the rest); no convergence.
    """
    if n < 2:
        raise ValueError(f"at least 2 players are needed, got {n}")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    ev = ranking_events(n, games)
    w = ev.weights.sum(axis=0)
    if alpha == 0 and not _strongly_connected(_beaten(n, ev, w)):
        raise ValueError("the maximum-likelihood strengths do not exist: some players never "
                         "finished ahead of (or never behind) the rest; play more games or "
                         "pass alpha > 0")
    theta, ok = _fit_events(ev.winner, ev.counts, w, alpha)
    if not ok:
        raise ValueError("the Plackett–Luce fit did not converge")
    return theta


def bootstrap_plackett_luce(n: int, games: Sequence[Game], *, seed: int,
                            alpha: float = DEFAULT_ALPHA, resamples: int = 1000,
                            level: float = 0.95,
                            game_weights: Sequence[float] | None = None) -> BradleyTerry:
    """Plackett–Luce strengths with the simultaneous bootstrap band of
    :func:`bootstrap_bradley_terry`, in the same result type: games are resampled with
    replacement within each table make-up (the multiset of players seated; for two seats a
    pair of players, as the Bradley–Terry bootstrap resamples within each pair), each resample
    is fitted, and the band is :func:`simultaneous_band` of the converged fits.
    ``game_weights`` (one per game, > 0; None: all 1) weigh each game's likelihood term (e.g.
    so that each of several games counts equally, whatever its number of tables).

    Raises:
        ValueError: bad inputs (see :func:`fit_plackett_luce`).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    gw = np.ones(len(games)) if game_weights is None else np.asarray(game_weights, float)
    if gw.shape != (len(games),) or not np.all(gw > 0):
        raise ValueError("game_weights must hold one positive weight per game")
    ev = ranking_events(n, games)
    if game_weights is None:
        theta = fit_plackett_luce(n, games, alpha=alpha)
    else:
        theta, ok = _fit_events(ev.winner, ev.counts, gw @ ev.weights, alpha)
        if not ok:
            raise ValueError("the Plackett–Luce fit did not converge")
    tables: dict[tuple[int, ...], list[int]] = {}
    for g, (players, _) in enumerate(games):
        tables.setdefault(tuple(sorted(int(x) for x in players)), []).append(g)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 31])))
    multiplicity = np.zeros((resamples, len(games)))
    for _, idx in sorted(tables.items()):
        members = np.asarray(idx)
        draw = members[rng.integers(0, members.size, size=(resamples, members.size))]
        for r in range(resamples):
            np.add.at(multiplicity[r], draw[r], 1.0)
    fits = [_fit_events(ev.winner, ev.counts, (multiplicity[r] * gw) @ ev.weights, alpha)
            for r in range(resamples)]
    kept = np.asarray([t for t, ok in fits if ok]).reshape(-1, n)
    return _banded(theta, kept, level, resamples, resamples - kept.shape[0])
