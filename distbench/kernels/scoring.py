"""Batch scoring of answers in zero-sum matrix games against a solved equilibrium.

For a trial in game ``g`` with the model's row strategy ``x`` (one-hot for a pure action), the
column player's Nash strategy ``y*`` and the value ``v`` (see ``GAMES.md`` at the
repository root, section 1):

- ``llm_value = x^T U y*``
- ``br_value = max_a (U y*)_a``
- ``nash_gap = br_value - llm_value``
- ``exploitability = v - min_j (x^T U)_j``

An invalid answer (a strategy row holding NaN, or the action -1) scores NaN in all four.
Differences that come out negative only by rounding (at most ``1e-9 * max(1, max |U_g|)``) are
clipped to 0; larger negative differences are kept, since they reveal inconsistent inputs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numba import njit

logger = logging.getLogger(__name__)

__all__ = ["INVALID_ACTION", "TrialScores", "score_actions", "score_strategies"]

#: The action code of an answer that could not be parsed.
INVALID_ACTION = -1

# Relative tolerance (times max(1, max|U|)) within which a gap or an exploitability is rounding
# noise and reads as exactly 0, and for checking that strategies are
# probability vectors.
_CLIP_TOL = 1e-9
_SIMPLEX_TOL = 1e-6


@dataclass(frozen=True)
class TrialScores:
    """Scores of a batch of trials; NaN where the answer was invalid.

    Attributes:
        llm_value: (T,) float64, ``x^T U y*``.
        br_value: (T,) float64, ``max_a (U y*)_a``.
        nash_gap: (T,) float64, ``br_value - llm_value`` (>= 0).
        exploitability: (T,) float64, ``value - min_j (x^T U)_j`` (>= 0).
    """

    llm_value: np.ndarray
    br_value: np.ndarray
    nash_gap: np.ndarray
    exploitability: np.ndarray

    def __len__(self) -> int:
        return int(self.llm_value.shape[0])


def score_strategies(
    payoffs: np.ndarray,
    col: np.ndarray,
    value: np.ndarray,
    game_index: np.ndarray,
    strategies: np.ndarray,
) -> TrialScores:
    """Score mixed-strategy answers.

    Args:
        payoffs: (G, m, n) payoffs to the row player.
        col: (G, n) column player's Nash strategy per game (``ZeroSumSolution.col``).
        value: (G,) value of each game (``ZeroSumSolution.value``).
        game_index: (T,) integer index into the G games, one per trial.
        strategies: (T, m) the model's row strategy per trial. A row holding any NaN marks an
            invalid answer; other rows must be probability vectors (non-negative, summing to 1
            within 1e-6).

    Returns:
        (T,) arrays of scores; NaN for invalid answers.

    Raises:
        TypeError: game_index is not an integer array.
        ValueError: shapes disagree, inputs are not finite, a game index is out of range, or
            a strategy row is not a probability vector.
    """
    u, y, v = _check_games(payoffs, col, value)
    n_games, m, _ = u.shape
    gi = _check_game_index(game_index, n_games)
    x = np.asarray(strategies)
    if x.dtype == np.bool_ or not (
        np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)
    ):
        raise TypeError(f"strategies must be a real numeric array, got dtype {x.dtype}")
    if x.shape != (gi.shape[0], m):
        raise ValueError(
            f"strategies must have shape (T, m) = ({gi.shape[0]}, {m}) to match game_index and "
            f"payoffs, got {x.shape}"
        )
    x = np.ascontiguousarray(x, dtype=np.float64)
    invalid = np.isnan(x).any(axis=1)
    ok = x[~invalid]
    if ok.size:
        if not np.isfinite(ok).all():
            raise ValueError("strategies must be finite (use a row of NaN for an invalid answer)")
        if (ok < 0).any():
            t = int(np.flatnonzero(~invalid)[np.argmax((ok < 0).any(axis=1))])
            raise ValueError(f"strategies[{t}] has a negative probability: {x[t].tolist()}")
        sums = ok.sum(axis=1)
        bad = np.abs(sums - 1.0) > _SIMPLEX_TOL
        if bad.any():
            t = int(np.flatnonzero(~invalid)[np.argmax(bad)])
            raise ValueError(
                f"strategies[{t}] sums to {x[t].sum()!r}, not 1 (tolerance {_SIMPLEX_TOL}); "
                "normalise it or mark the answer invalid with NaN"
            )
    out = _allocate(gi.shape[0])
    _score_strategies_kernel(u, y, v, gi, x, *out)
    return TrialScores(*out)


def score_actions(
    payoffs: np.ndarray,
    col: np.ndarray,
    value: np.ndarray,
    game_index: np.ndarray,
    actions: np.ndarray,
) -> TrialScores:
    """Score pure-action answers (the same as one-hot strategies, computed directly).

    Args:
        payoffs: (G, m, n) payoffs to the row player.
        col: (G, n) column player's Nash strategy per game (``ZeroSumSolution.col``).
        value: (G,) value of each game (``ZeroSumSolution.value``).
        game_index: (T,) integer index into the G games, one per trial.
        actions: (T,) integer 0-based row action per trial; :data:`INVALID_ACTION` (-1) marks
            an invalid answer.

    Returns:
        (T,) arrays of scores; NaN for invalid answers.

    Raises:
        TypeError: game_index or actions is not an integer array.
        ValueError: shapes disagree, inputs are not finite, or an index is out of range.
    """
    u, y, v = _check_games(payoffs, col, value)
    n_games, m, _ = u.shape
    gi = _check_game_index(game_index, n_games)
    a = np.asarray(actions)
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(
            f"actions must be an integer array (use {INVALID_ACTION} for an invalid answer), "
            f"got dtype {a.dtype}"
        )
    if a.shape != gi.shape:
        raise ValueError(
            f"actions must have shape (T,) = {gi.shape} to match game_index, got {a.shape}"
        )
    bad = (a != INVALID_ACTION) & ((a < 0) | (a >= m))
    if bad.any():
        t = int(np.argmax(bad))
        raise ValueError(
            f"actions[{t}] = {int(a[t])} is out of range for {m} row actions "
            f"(valid: 0..{m - 1}, or {INVALID_ACTION} for an invalid answer)"
        )
    a = np.ascontiguousarray(a, dtype=np.int64)
    out = _allocate(gi.shape[0])
    _score_actions_kernel(u, y, v, gi, a, *out)
    return TrialScores(*out)


# --------------------------------------------------------------------------------------------
# validation helpers


def _check_games(
    payoffs: np.ndarray, col: np.ndarray, value: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u = np.asarray(payoffs)
    if u.ndim != 3:
        hint = " (for a single game pass payoffs[None])" if u.ndim == 2 else ""
        raise ValueError(f"payoffs must have shape (G, m, n), got shape {u.shape}{hint}")
    n_games, m, n = u.shape
    if m < 1 or n < 1:
        raise ValueError(f"payoffs must have at least one row and one column, got {u.shape}")
    y = np.asarray(col)
    if y.shape != (n_games, n):
        raise ValueError(
            f"col must have shape (G, n) = ({n_games}, {n}) to match payoffs, got {y.shape}"
        )
    v = np.asarray(value)
    if v.shape != (n_games,):
        raise ValueError(f"value must have shape (G,) = ({n_games},), got {v.shape}")
    arrays = []
    for name, arr in (("payoffs", u), ("col", y), ("value", v)):
        if arr.dtype == np.bool_ or not (
            np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
        ):
            raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        arrays.append(arr)
    return arrays[0], arrays[1], arrays[2]


def _check_game_index(game_index: np.ndarray, n_games: int) -> np.ndarray:
    gi = np.asarray(game_index)
    if gi.dtype == np.bool_ or not np.issubdtype(gi.dtype, np.integer):
        raise TypeError(f"game_index must be an integer array, got dtype {gi.dtype}")
    if gi.ndim != 1:
        raise ValueError(f"game_index must have shape (T,), got {gi.shape}")
    bad = (gi < 0) | (gi >= n_games)
    if bad.any():
        t = int(np.argmax(bad))
        raise ValueError(f"game_index[{t}] = {int(gi[t])} is out of range for {n_games} games")
    return np.ascontiguousarray(gi, dtype=np.int64)


def _allocate(n_trials: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.empty(n_trials, dtype=np.float64),
        np.empty(n_trials, dtype=np.float64),
        np.empty(n_trials, dtype=np.float64),
        np.empty(n_trials, dtype=np.float64),
    )


# --------------------------------------------------------------------------------------------
# kernels (no per-trial helper calls but the inlined _clip, see zero_sum._solve_range)


@njit(cache=True)
def _game_terms(payoffs, col):
    """Per game, once: (U y*) (G, m), the best response value max_i (U y*)_i (G,) and the
    clipping tolerance (G,) (_CLIP_TOL times the largest payoff size, at least 1)."""
    n_games, m, n = payoffs.shape
    uy = np.empty((n_games, m), dtype=np.float64)
    br = np.empty(n_games, dtype=np.float64)
    tol = np.empty(n_games, dtype=np.float64)
    for g in range(n_games):
        best = -np.inf
        amax = 1.0
        for i in range(m):
            s = 0.0
            for j in range(n):
                p = payoffs[g, i, j]
                s += p * col[g, j]
                if abs(p) > amax:
                    amax = abs(p)
            uy[g, i] = s
            if s > best:
                best = s
        br[g] = best
        tol[g] = _CLIP_TOL * amax
    return uy, br, tol


@njit(cache=True, inline="always")
def _clip(x, tol):
    """``x`` with float noise within ``tol`` of 0 made 0 (inlined into the trial loops)."""
    return 0.0 if -tol <= x <= tol else x


@njit(cache=True)
def _score_strategies_kernel(
    payoffs, col, value, game_index, strategies, llm_value, br_value, nash_gap, exploitability
):
    """Fill the four (T,) outputs for mixed strategies; NaN rows give NaN."""
    n_games, m, n = payoffs.shape
    uy, br, tol = _game_terms(payoffs, col)
    for t in range(game_index.shape[0]):
        g = game_index[t]
        invalid = False
        for i in range(m):
            if np.isnan(strategies[t, i]):
                invalid = True
        if invalid:
            llm_value[t] = np.nan
            br_value[t] = np.nan
            nash_gap[t] = np.nan
            exploitability[t] = np.nan
            continue
        lv = 0.0
        for i in range(m):
            lv += strategies[t, i] * uy[g, i]
        worst = np.inf
        for j in range(n):
            s = 0.0
            for i in range(m):
                s += strategies[t, i] * payoffs[g, i, j]
            if s < worst:
                worst = s
        llm_value[t] = lv
        br_value[t] = br[g]
        nash_gap[t] = _clip(br[g] - lv, tol[g])
        exploitability[t] = _clip(value[g] - worst, tol[g])


@njit(cache=True)
def _score_actions_kernel(
    payoffs, col, value, game_index, actions, llm_value, br_value, nash_gap, exploitability
):
    """Fill the four (T,) outputs for pure actions; action -1 gives NaN."""
    n_games, m, n = payoffs.shape
    uy, br, tol = _game_terms(payoffs, col)
    for t in range(game_index.shape[0]):
        g = game_index[t]
        a = actions[t]
        if a < 0:
            llm_value[t] = np.nan
            br_value[t] = np.nan
            nash_gap[t] = np.nan
            exploitability[t] = np.nan
            continue
        lv = uy[g, a]
        worst = np.inf
        for j in range(n):
            if payoffs[g, a, j] < worst:
                worst = payoffs[g, a, j]
        llm_value[t] = lv
        br_value[t] = br[g]
        nash_gap[t] = _clip(br[g] - lv, tol[g])
        exploitability[t] = _clip(value[g] - worst, tol[g])
