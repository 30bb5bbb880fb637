"""Exact batch solver for two-player zero-sum matrix games.

Every game of a batch is solved exactly by a dense primal simplex on a condensed (Tucker)
tableau; one simplex gives both players' equilibrium strategies. The public wrapper
:func:`solve_zero_sum` validates and allocates; the private ``@njit(cache=True)`` kernels fill
the outputs in place.

The linear program. The payoff matrix ``U`` (``m x n``, payoffs to the row player) is mapped to
``U' = (U - min U) / scale + 1`` with ``scale = max U - min U`` (1 for a constant matrix), so
every entry of ``U'`` lies in ``[1, 2]`` and the value of ``U'`` is positive. The column
player's program is::

    maximize 1^T w   subject to   U' w <= 1,  w >= 0,

whose optimum ``w`` gives ``y = w / sum(w)`` and ``value' = 1 / sum(w)``; the dual variables
(the objective-row entries under the slack columns) give the row strategy ``x`` the same way.
Pivots follow Dantzig's rule (most negative reduced cost, ties in the ratio test broken by
the larger pivot element) and switch to Bland's rule (smallest label, ties by smallest label)
after ``3 (m + n)`` pivots, so degenerate games cannot cycle.

The value and the diagnostics (residual, supports, degenerate gap) are computed in the original
units from the strategies, not read from the tableau; sums run over ``U - min U`` so that a
large common offset does not cancel away their precision.

Accuracy guard. Every answer is checked: a game whose residual exceeds
``RESIDUAL_TOL * max(1, max |U|)`` (or that hit the pivot cap) is solved again with Bland's
rule from the first pivot, and if that does not pass either, by scipy's HiGHS (the reference
solver, about a millisecond per game). Games with integer payoffs of moderate size never need
this; badly scaled ones can (payoffs spanning many orders of magnitude, e.g. heavy-tailed
draws), because mapping U into [1, 2] squashes their small entries together. A game that
fails every route keeps ``status = 2``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

logger = logging.getLogger(__name__)

__all__ = [
    "GAP_DEGENERATE_TOL",
    "RESIDUAL_TOL",
    "STATUS_INACCURATE",
    "STATUS_ITERATION_LIMIT",
    "STATUS_OK",
    "SUPPORT_TOL",
    "ZeroSumSolution",
    "solve_zero_sum",
]

#: A probability counts towards a support size when it exceeds this.
SUPPORT_TOL = 1e-9
#: ``gap_degenerate`` holds when ``max_i (U y)_i - min_i (U y)_i <= GAP_DEGENERATE_TOL * scale``
#: with ``scale = max U - min U`` (1 for a constant matrix).
GAP_DEGENERATE_TOL = 1e-9
#: A solution is accepted when ``residual <= RESIDUAL_TOL * max(1, max |U|)``.
RESIDUAL_TOL = 1e-9

#: ``status`` codes.
STATUS_OK = 0
STATUS_ITERATION_LIMIT = 1  # pivot cap hit and no fallback fixed it
STATUS_INACCURATE = 2  # residual above tolerance on every route

# Simplex tolerances, in the normalised units where U' lies in [1, 2] and the tableau's
# right-hand side and objective row are of order 1.
_REDUCED_COST_TOL = 1e-12
_PIVOT_TOL = 1e-11
_RATIO_TIE_TOL = 1e-12


@dataclass(frozen=True)
class ZeroSumSolution:
    """Equilibria of a batch of zero-sum games; every field has the batch axis first.

    Attributes:
        row: (B, m) float64, the row player's Nash (maximin) strategy.
        col: (B, n) float64, the column player's Nash (minimax) strategy.
        value: (B,) float64, value of the game to the row player, ``row^T U col``.
        residual: (B,) float64, duality residual ``max_i (U col)_i - min_j (row^T U)_j``,
            non-negative up to rounding; it bounds how far both strategies are from optimal.
        iterations: (B,) int32, simplex pivots of the numba kernel (both runs added when a
            game was solved again with Bland's rule).
        status: (B,) int8, 0 ok; otherwise the result is unreliable: 1 the pivot cap was
            hit, 2 the residual stays above ``RESIDUAL_TOL * max(1, max |U|)``. With the
            default fallbacks neither occurs in practice.
        row_support: (B,) int32, number of ``row`` entries above :data:`SUPPORT_TOL`.
        col_support: (B,) int32, number of ``col`` entries above :data:`SUPPORT_TOL`.
        gap_degenerate: (B,) bool, every row action earns the value against ``col``
            (``max_i (U col)_i - min_i (U col)_i <= GAP_DEGENERATE_TOL * scale``), so the
            nash gap is 0 for any answer and says nothing about play in this game.
    """

    row: np.ndarray
    col: np.ndarray
    value: np.ndarray
    residual: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    row_support: np.ndarray
    col_support: np.ndarray
    gap_degenerate: np.ndarray

    def __len__(self) -> int:
        return int(self.value.shape[0])


def solve_zero_sum(payoffs: np.ndarray, *, parallel: bool = False) -> ZeroSumSolution:
    """Solve a batch of two-player zero-sum matrix games exactly.

    Args:
        payoffs: (B, m, n) real array, payoffs to the row player; ints or floats, converted to
            C-contiguous float64. ``B`` may be 0; ``m`` and ``n`` must be at least 1; every
            value must be finite.
        parallel: solve chunks of games on all numba threads. The results are identical to
            the serial ones; the default is serial (one core), which suits Ray workers.

    Returns:
        The equilibria and their diagnostics, see :class:`ZeroSumSolution`.

    Raises:
        TypeError: payoffs are not a real numeric array.
        ValueError: payoffs are not 3-D, have an empty action axis, or hold NaN/inf.
    """
    return _solve(payoffs, parallel=parallel)


def _solve(
    payoffs: np.ndarray,
    *,
    parallel: bool = False,
    bland_after: int | None = None,
    max_iter: int | None = None,
    fallback: bool = True,
) -> ZeroSumSolution:
    """:func:`solve_zero_sum` with the pivot-rule knobs exposed (for tests).

    Args:
        payoffs: (B, m, n) payoffs, as in :func:`solve_zero_sum`.
        parallel: as in :func:`solve_zero_sum`.
        bland_after: pivots under Dantzig's rule before switching to Bland's rule;
            default ``3 (m + n)``.
        max_iter: pivot cap per game; default ``100 (m + n) + 1000``.
        fallback: re-solve games with a nonzero status (Bland's rule, then HiGHS).
    """
    u = _as_payoff_batch(payoffs)
    _, m, n = u.shape
    if bland_after is None:
        bland_after = 3 * (m + n)
    if max_iter is None:
        max_iter = 100 * (m + n) + 1000
    if bland_after < 0 or max_iter < 0:
        raise ValueError("bland_after and max_iter must be >= 0")
    out = _run_kernel(u, parallel=parallel, bland_after=bland_after, max_iter=max_iter)
    if fallback:
        _repair(u, out, max_iter=max_iter)
    n_bad = int(np.count_nonzero(out["status"]))
    if n_bad:
        logger.warning(
            "zero-sum solver: %d of %d games have status != 0 (unreliable result)",
            n_bad,
            u.shape[0],
        )
    return ZeroSumSolution(**out)


def _run_kernel(
    u: np.ndarray, *, parallel: bool, bland_after: int, max_iter: int
) -> dict[str, np.ndarray]:
    """Allocate the outputs (in the kernel's argument order) and run the numba kernel."""
    n_games, m, n = u.shape
    out = {
        "row": np.zeros((n_games, m), dtype=np.float64),
        "col": np.zeros((n_games, n), dtype=np.float64),
        "value": np.zeros(n_games, dtype=np.float64),
        "residual": np.zeros(n_games, dtype=np.float64),
        "iterations": np.zeros(n_games, dtype=np.int32),
        "status": np.zeros(n_games, dtype=np.int8),
        "row_support": np.zeros(n_games, dtype=np.int32),
        "col_support": np.zeros(n_games, dtype=np.int32),
        "gap_degenerate": np.zeros(n_games, dtype=np.bool_),
    }
    if n_games == 0:
        return out
    args = (u, bland_after, max_iter, *out.values())
    if parallel and n_games > 1:
        n_chunks = min(n_games, 8 * numba.get_num_threads())
        _solve_batch_parallel(n_chunks, *args)
    else:
        _solve_range(0, n_games, *args)
    return out


def _repair(u: np.ndarray, out: dict[str, np.ndarray], *, max_iter: int) -> None:
    """Re-solve the games with a nonzero status in place: Bland's rule, then HiGHS."""
    bad = np.flatnonzero(out["status"] != STATUS_OK)
    if bad.size == 0:
        return
    retry = _run_kernel(u[bad], parallel=False, bland_after=0, max_iter=max_iter)
    retry["iterations"] += out["iterations"][bad]
    take = (retry["status"] == STATUS_OK) | (retry["residual"] < out["residual"][bad])
    for name, arr in out.items():
        arr[bad[take]] = retry[name][take]
    still = bad[out["status"][bad] != STATUS_OK]
    n_highs = 0
    for b in still:
        strategies = _highs_strategies(u[b])
        if strategies is None:
            continue
        x, y = strategies
        value, residual, gap_degenerate, ok = _diagnostics(u[b], x, y)
        if ok or residual < out["residual"][b]:
            out["row"][b] = x
            out["col"][b] = y
            out["value"][b] = value
            out["residual"][b] = residual
            out["gap_degenerate"][b] = gap_degenerate
            out["row_support"][b] = np.count_nonzero(x > SUPPORT_TOL)
            out["col_support"][b] = np.count_nonzero(y > SUPPORT_TOL)
            if ok:
                out["status"][b] = STATUS_OK
                n_highs += 1
    logger.info(
        "zero-sum solver: %d games re-solved (%d by Bland's rule, %d by HiGHS)",
        bad.size,
        bad.size - still.size,
        n_highs,
    )


def _highs_strategies(u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Both players' strategies of one (m, n) game by HiGHS: the row LP and its duals."""
    from scipy.optimize import linprog  # only needed on this rare path; keeps imports light

    m, n = u.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0  # maximize v
    res = linprog(
        c,
        A_ub=np.hstack([-u.T, np.ones((n, 1))]),  # v - (U^T x)_j <= 0
        b_ub=np.zeros(n),
        A_eq=np.append(np.ones(m), 0.0)[None, :],
        b_eq=[1.0],
        bounds=[(0.0, None)] * m + [(None, None)],
        method="highs",
    )
    if res.status != 0:
        logger.warning("HiGHS fallback failed: %s", res.message)
        return None
    x = np.clip(res.x[:m], 0.0, None)
    y = np.clip(-res.ineqlin.marginals, 0.0, None)
    if x.sum() <= 0.0 or y.sum() <= 0.0:
        return None
    return x / x.sum(), y / y.sum()


def _diagnostics(u: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[float, float, bool, bool]:
    """(value, residual, gap_degenerate, accepted) of strategies x, y in one game, as the kernel."""
    lo = float(u.min())
    hi = float(u.max())
    scale = hi - lo if hi > lo else 1.0
    d = u - lo
    uy = d @ y
    xu = x @ d
    residual = float(uy.max() - xu.min())
    gap_degenerate = bool(uy.max() - uy.min() <= GAP_DEGENERATE_TOL * scale)
    ok = residual <= RESIDUAL_TOL * max(1.0, abs(lo), abs(hi))
    return lo + float(x @ uy), residual, gap_degenerate, ok


def _as_payoff_batch(payoffs: np.ndarray) -> np.ndarray:
    """Validate a (B, m, n) payoff batch and return it as C-contiguous float64."""
    arr = np.asarray(payoffs)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(
            f"payoffs must be a real numeric array (int or float), got dtype {arr.dtype}"
        )
    if arr.ndim != 3:
        hint = " (for a single game pass payoffs[None])" if arr.ndim == 2 else ""
        raise ValueError(
            f"payoffs must have shape (B, m, n), got {arr.ndim}-D array of shape {arr.shape}{hint}"
        )
    if arr.shape[1] < 1 or arr.shape[2] < 1:
        raise ValueError(
            f"payoffs must have at least one row and one column action, got shape {arr.shape}"
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"payoffs must be finite; found {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}"
        )
    return arr


# --------------------------------------------------------------------------------------------
# kernels


@njit(cache=True)
def _solve_range(
    start,
    stop,
    payoffs,
    bland_after,
    max_iter,
    row,
    col,
    value,
    residual,
    iterations,
    status,
    row_support,
    col_support,
    gap_degenerate,
):
    """Solve games ``start..stop-1``, writing their entries of every output.

    One function on purpose: numba reference-counts arrays passed to helper functions, and on
    this hardware those atomic operations cost more than solving a small game, so the
    per-game path calls nothing and allocates nothing (the workspace is allocated once here).

    The tableau ``tab`` is (m+1, n+1): rows 0..m-1 are constraints with the right-hand side in
    column n, row m is the objective row (reduced costs; objective value in column n).
    ``basic[i]`` / ``nonbasic[j]`` label the variable heading row i / column j: ``w_j`` is
    label j, the slack ``s_i`` of constraint i is label ``n + i``.
    """
    m = payoffs.shape[1]
    n = payoffs.shape[2]
    tab = np.empty((m + 1, n + 1), dtype=np.float64)
    basic = np.empty(m, dtype=np.int64)
    nonbasic = np.empty(n, dtype=np.int64)
    for b in range(start, stop):
        # ---- normalise to U' = (U - lo) / scale + 1 in [1, 2] and build the tableau
        lo = payoffs[b, 0, 0]
        hi = lo
        for i in range(m):
            for j in range(n):
                v = payoffs[b, i, j]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
        scale = hi - lo
        if scale <= 0.0:
            scale = 1.0
        inv_scale = 1.0 / scale
        for i in range(m):
            for j in range(n):
                tab[i, j] = (payoffs[b, i, j] - lo) * inv_scale + 1.0
            tab[i, n] = 1.0
            basic[i] = n + i
        for j in range(n):
            tab[m, j] = -1.0
            nonbasic[j] = j
        tab[m, n] = 0.0

        # ---- primal simplex: Dantzig's rule, then Bland's rule after bland_after pivots
        it = 0
        st = STATUS_OK
        while True:
            bland = it >= bland_after
            c = -1
            if bland:
                best_label = m + n
                for j in range(n):
                    if tab[m, j] < -_REDUCED_COST_TOL and nonbasic[j] < best_label:
                        best_label = nonbasic[j]
                        c = j
            else:
                best = -_REDUCED_COST_TOL
                for j in range(n):
                    if tab[m, j] < best:
                        best = tab[m, j]
                        c = j
            if c < 0:
                break  # optimal
            if it >= max_iter:
                st = STATUS_ITERATION_LIMIT
                break
            # ratio test; ties: larger pivot (Dantzig) or smaller basic label (Bland)
            r = -1
            best_ratio = 0.0
            for i in range(m):
                a = tab[i, c]
                if a > _PIVOT_TOL:
                    ratio = tab[i, n] / a
                    if r < 0:
                        r = i
                        best_ratio = ratio
                        continue
                    tie_tol = _RATIO_TIE_TOL * max(1.0, best_ratio)
                    if ratio < best_ratio - tie_tol:
                        r = i
                        best_ratio = ratio
                    elif ratio <= best_ratio + tie_tol:
                        if bland:
                            better = basic[i] < basic[r]
                        else:
                            better = a > tab[r, c]
                        if better:
                            r = i
                            best_ratio = min(ratio, best_ratio)
            if r < 0:
                # Unbounded direction: impossible while U' > 0; a guard against rounding.
                st = STATUS_ITERATION_LIMIT
                break
            # exchange pivot on (r, c)
            inv = 1.0 / tab[r, c]
            for k in range(n + 1):
                tab[r, k] *= inv
            for i in range(m + 1):
                if i == r:
                    continue
                f = tab[i, c]
                if f != 0.0:
                    for k in range(n + 1):
                        tab[i, k] -= f * tab[r, k]
                    tab[i, c] = -f * inv
            tab[r, c] = inv
            lab = basic[r]
            basic[r] = nonbasic[c]
            nonbasic[c] = lab
            it += 1
        iterations[b] = it

        # ---- strategies: primal w from the basic rows, duals from the slack columns
        for j in range(n):
            col[b, j] = 0.0
        for i in range(m):
            row[b, i] = 0.0
        for i in range(m):
            lab = basic[i]
            if lab < n:
                col[b, lab] = max(tab[i, n], 0.0)
        for j in range(n):
            lab = nonbasic[j]
            if lab >= n:
                row[b, lab - n] = max(tab[m, j], 0.0)
        sy = 0.0
        for j in range(n):
            sy += col[b, j]
        sx = 0.0
        for i in range(m):
            sx += row[b, i]
        # Both sums are positive after the first pivot; the guards only matter for status 1.
        if sy > 0.0:
            inv = 1.0 / sy
            for j in range(n):
                col[b, j] *= inv
        else:
            for j in range(n):
                col[b, j] = 1.0 / n
        if sx > 0.0:
            inv = 1.0 / sx
            for i in range(m):
                row[b, i] *= inv
        else:
            for i in range(m):
                row[b, i] = 1.0 / m

        # ---- diagnostics in the original units, computed on U - lo: the same numbers,
        # without the cancellation that a large common offset (e.g. 1e6 + small ints) causes
        uy_max = -np.inf
        uy_min = np.inf
        val = 0.0
        for i in range(m):
            s = 0.0
            for j in range(n):
                s += (payoffs[b, i, j] - lo) * col[b, j]
            val += row[b, i] * s
            if s > uy_max:
                uy_max = s
            if s < uy_min:
                uy_min = s
        xu_min = np.inf
        for j in range(n):
            s = 0.0
            for i in range(m):
                s += row[b, i] * (payoffs[b, i, j] - lo)
            if s < xu_min:
                xu_min = s
        value[b] = lo + val
        residual[b] = uy_max - xu_min
        if st == STATUS_OK and uy_max - xu_min > RESIDUAL_TOL * max(1.0, abs(lo), abs(hi)):
            st = STATUS_INACCURATE
        status[b] = st
        gap_degenerate[b] = uy_max - uy_min <= GAP_DEGENERATE_TOL * scale
        ns = 0
        for i in range(m):
            if row[b, i] > SUPPORT_TOL:
                ns += 1
        row_support[b] = ns
        ns = 0
        for j in range(n):
            if col[b, j] > SUPPORT_TOL:
                ns += 1
        col_support[b] = ns


@njit(cache=True, parallel=True)
def _solve_batch_parallel(
    n_chunks,
    payoffs,
    bland_after,
    max_iter,
    row,
    col,
    value,
    residual,
    iterations,
    status,
    row_support,
    col_support,
    gap_degenerate,
):
    """Solve the batch in ``n_chunks`` contiguous chunks spread over numba threads."""
    n_games = payoffs.shape[0]
    for k in prange(n_chunks):
        start = k * n_games // n_chunks
        stop = (k + 1) * n_games // n_chunks
        _solve_range(
            start,
            stop,
            payoffs,
            bland_after,
            max_iter,
            row,
            col,
            value,
            residual,
            iterations,
            status,
            row_support,
            col_support,
            gap_degenerate,
        )
