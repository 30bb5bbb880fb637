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
from dataclasses import dataclass

import numpy as np

from distbench.kernels.bradley_terry import fit_bradley_terry_batch
from distbench.kernels.zero_sum import solve_zero_sum
from distbench.report.bands import (
    DEFAULT_ALPHA,
    MAX_RESAMPLES,
    BradleyTerry,
    banded,
    simultaneous_band,
    strongly_connected,
)
from distbench.report.plackett_luce import (
    RankingEvents,
    bootstrap_plackett_luce,
    fit_plackett_luce,
    ranking_events,
)

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_ALPHA", "ELO_BASE", "ELO_SCALE", "BradleyTerry", "NashAveraging",
           "PairStats", "RankingEvents", "RatingComparison", "bootstrap_bradley_terry", "compare_ratings", "elo", "fit_bradley_terry", "meta_game",
           "nash_average", "pair_stats", "bootstrap_plackett_luce", "fit_plackett_luce",
           "ranking_events", "resample_wins", "simultaneous_band", "win_matrix"]

ELO_BASE = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)
#: A maximum-entropy candidate is accepted when ``max(A p) <= NASH_TOL * max(1, max |A|)``.
NASH_TOL = 1e-7


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
    if alpha == 0 and not strongly_connected(w):
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
    return banded(theta, boot[converged], level, resamples, int((~converged).sum()))


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
