"""Exact batch solver for two-player general-sum (bimatrix) games, sizes up to 5x5.

A game is a pair of payoff matrices ``A`` (row player) and ``B`` (column player), both
``m x n``. For each game of a batch, :func:`solve_bimatrix` finds

- **every Nash equilibrium by support enumeration** (Nisan et al. 2007, algorithm 3.4; the
  algorithm of ``nashpy.support_enumeration``): for each support size ``k`` and each pair of
  supports ``I`` (rows) and ``J`` (columns) with ``|I| = |J| = k``, solve the indifference
  systems

      sum_{j in J} (A[i, j] - A[I0, j]) y_j = 0  (i in I),   sum_j y_j = 1
      sum_{i in I} (B[i, j] - B[i, J0]) x_i = 0  (j in J),   sum_i x_i = 1

  and keep ``(x, y)`` when both are strictly positive on their supports and every pure
  strategy outside a support earns at most what the support earns. Equilibria are listed in
  the order nashpy yields them: by support size, then row support, then column support (each
  support in lexicographic order of its action indices). In a nondegenerate game this is the
  whole equilibrium set, and it is finite and odd.
- **pure equilibria** ``pure_eq[g, i, j]``: cell ``(i, j)`` is a weak pure equilibrium
  (``A[i, j] = max_k A[k, j]`` and ``B[i, j] = max_l B[i, l]``, exactly);
- **maximin values** (security levels in mixed strategies): the value of the zero-sum game
  ``A`` for the row player and of ``B^T`` for the column player, with the strategies that
  secure them (solved by :func:`distbench.kernels.zero_sum.solve_zero_sum`), and the pure
  maximin values ``max_i min_j A[i, j]`` and ``max_j min_i B[i, j]``;
- **Pareto-optimal outcomes** ``pareto[g, i, j]``: no other cell gives both players at least
  as much and one of them more (exact comparisons);
- **maximal welfare** ``max_i,j A[i, j] + B[i, j]``: the welfare ``x^T (A + B) y`` is bilinear,
  so its maximum over mixed profiles is attained at a cell.

Degenerate games. Support enumeration over equal-size supports is complete only for
nondegenerate games (no mixed strategy with ``k`` actions in its support has more than ``k``
pure best responses). ``degenerate[g]`` is set when the kernel sees degeneracy or cannot rule
it out: a pure strategy with tied best responses; an equilibrium where a player has more
pure best responses than the other player's support size; an indifference system that is
singular yet solvable (a continuum of candidates); an even number of equilibria. The
equilibria of such a game are then listed by **vertex enumeration** instead
(:func:`extreme_equilibria`, the algorithm of ``nashpy.vertex_enumeration`` and gambit's
``enummixed``): every vertex of the two best-response polytopes, and every completely
labelled pair of them, so the list is every *extreme* equilibrium (a continuum of equilibria
is listed by its extreme points; every equilibrium is a convex combination of listed ones
within a component, and an action is in some equilibrium's support exactly when it is in
some listed one's). They are ordered by the sum of the support sizes (pure ones first), row
support, column support, then strategy. Games drawn from continuous distributions are nondegenerate with probability 1;
integer payoffs with ties often are not.

Numerics. Each player's matrix is mapped to ``(M - min M) / (max M - min M)`` (an affine
map, which leaves equilibria unchanged) before solving, so the tolerances below are in units
of the player's payoff range; equilibrium payoffs are reported in the original units.
The public wrapper validates and allocates; the private ``@njit(cache=True)`` kernel fills the
outputs in place (one function: numba reference-counts arrays passed to helpers, which costs
more than a small system).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from functools import cache

import numba
import numpy as np
from numba import njit, prange

from distbench.kernels.zero_sum import solve_zero_sum

logger = logging.getLogger(__name__)

__all__ = ["BR_TOL", "MAX_ACTIONS", "POSITIVE_TOL", "BimatrixSolution", "extreme_equilibria",
           "solve_bimatrix", "support_pairs"]

#: Largest number of actions of either player.
MAX_ACTIONS = 5
#: A candidate strategy must exceed this on every action of its support (normalised units).
POSITIVE_TOL = 1e-12
#: A pure strategy outside a support may earn at most this much more than the support;
#: pure strategies within it of the best count as tied best responses (normalised units).
BR_TOL = 1e-9
# Pivot below which an indifference system counts as singular, and the residual above which
# a singular system counts as unsolvable (normalised units).
_PIVOT_TOL = 1e-12
_CONSISTENT_TOL = 1e-9


@dataclass(frozen=True)
class BimatrixSolution:
    """Equilibria and reference points of a batch of bimatrix games (batch axis first).

    Attributes:
        eq_row: (B, E, m) float64, the row strategy of each equilibrium (NaN past ``num_eq``).
        eq_col: (B, E, n) float64, the column strategy of each equilibrium (NaN past it).
        eq_row_value: (B, E) float64, ``x^T A y`` of each equilibrium (NaN past it).
        eq_col_value: (B, E) float64, ``x^T B y`` of each equilibrium (NaN past it).
        num_eq: (B,) int32, equilibria listed (at most ``E``).
        truncated: (B,) bool, the game has more equilibria than ``E`` (only the first ``E``
            are listed; possible only in degenerate games or with a small ``max_equilibria``).
        degenerate: (B,) bool, degeneracy seen or not ruled out (see the module docstring).
        pure_eq: (B, m, n) bool, weak pure equilibria.
        maximin_row: (B,) float64, the row player's security level in mixed strategies.
        maximin_col: (B,) float64, the column player's security level in mixed strategies.
        maximin_row_strategy: (B, m) float64, a row strategy securing ``maximin_row``.
        maximin_col_strategy: (B, n) float64, a column strategy securing ``maximin_col``.
        maximin_row_pure: (B,) float64, ``max_i min_j A[i, j]``.
        maximin_col_pure: (B,) float64, ``max_j min_i B[i, j]``.
        pareto: (B, m, n) bool, Pareto-optimal cells.
        max_welfare: (B,) float64, ``max_{i,j} A[i, j] + B[i, j]``.
    """

    eq_row: np.ndarray
    eq_col: np.ndarray
    eq_row_value: np.ndarray
    eq_col_value: np.ndarray
    num_eq: np.ndarray
    truncated: np.ndarray
    degenerate: np.ndarray
    pure_eq: np.ndarray
    maximin_row: np.ndarray
    maximin_col: np.ndarray
    maximin_row_strategy: np.ndarray
    maximin_col_strategy: np.ndarray
    maximin_row_pure: np.ndarray
    maximin_col_pure: np.ndarray
    pareto: np.ndarray
    max_welfare: np.ndarray

    def __len__(self) -> int:
        return int(self.num_eq.shape[0])

    def equilibria(self, g: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The listed equilibria of game ``g`` as ``(x, y)`` pairs, in order."""
        k = int(self.num_eq[g])
        return [(self.eq_row[g, e].copy(), self.eq_col[g, e].copy()) for e in range(k)]


@cache
def support_pairs(m: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The equal-size support pairs of an ``m x n`` game, in enumeration order.

    Returns:
        ``(rows, cols, size)``: rows (P, MAX_ACTIONS) int64 and cols (P, MAX_ACTIONS) int64,
        the action indices of each pair's supports (padded with -1), and size (P,) int64.
        ``P = C(m + n, m) - 1``.
    """
    rows, cols, size = [], [], []
    for k in range(1, min(m, n) + 1):
        for i in itertools.combinations(range(m), k):
            for j in itertools.combinations(range(n), k):
                rows.append(list(i) + [-1] * (MAX_ACTIONS - k))
                cols.append(list(j) + [-1] * (MAX_ACTIONS - k))
                size.append(k)
    out = (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
           np.array(size, dtype=np.int64))
    for a in out:
        a.setflags(write=False)
    return out


def solve_bimatrix(row_payoffs: np.ndarray, col_payoffs: np.ndarray, *,
                   max_equilibria: int | None = None, parallel: bool = False) -> BimatrixSolution:
    """Every Nash equilibrium and the reference points of a batch of bimatrix games.

    Args:
        row_payoffs: (B, m, n) real array ``A``, payoffs to the row player; ``1 <= m, n <= 5``.
        col_payoffs: (B, m, n) real array ``B``, payoffs to the column player.
        max_equilibria: equilibria kept per game (``E``); default ``C(m + n, m) - 1``, the
            number of equal-size support pairs, so nothing is ever truncated.
        parallel: solve chunks of games on all numba threads (same results as serial).

    Returns:
        See :class:`BimatrixSolution`.

    Raises:
        TypeError: payoffs are not real numeric arrays.
        ValueError: shapes differ, are not (B, m, n), exceed 5 actions, or hold NaN/inf.
    """
    a = _as_batch(row_payoffs, "row_payoffs")
    b = _as_batch(col_payoffs, "col_payoffs")
    if a.shape != b.shape:
        raise ValueError(f"row_payoffs and col_payoffs must have the same shape, got {a.shape} "
                         f"and {b.shape}")
    n_games, m, n = a.shape
    if m > MAX_ACTIONS or n > MAX_ACTIONS:
        raise ValueError(f"support enumeration is limited to {MAX_ACTIONS}x{MAX_ACTIONS} games, "
                         f"got {m}x{n}")
    rows, cols, size = support_pairs(m, n)
    cap = len(size) if max_equilibria is None else int(max_equilibria)
    if cap < 1:
        raise ValueError(f"max_equilibria must be at least 1, got {max_equilibria}")
    out = {
        "eq_row": np.full((n_games, cap, m), np.nan),
        "eq_col": np.full((n_games, cap, n), np.nan),
        "eq_row_value": np.full((n_games, cap), np.nan),
        "eq_col_value": np.full((n_games, cap), np.nan),
        "num_eq": np.zeros(n_games, dtype=np.int32),
        "truncated": np.zeros(n_games, dtype=np.bool_),
        "degenerate": np.zeros(n_games, dtype=np.bool_),
        "pure_eq": np.zeros((n_games, m, n), dtype=np.bool_),
        "maximin_row_pure": np.zeros(n_games),
        "maximin_col_pure": np.zeros(n_games),
        "pareto": np.zeros((n_games, m, n), dtype=np.bool_),
        "max_welfare": np.zeros(n_games),
    }
    if n_games:
        args = (a, b, rows, cols, size, *out.values())
        if parallel and n_games > 1:
            _solve_parallel(min(n_games, 8 * numba.get_num_threads()), *args)
        else:
            _solve_range(0, n_games, *args)
    for g in np.flatnonzero(out["degenerate"]):
        _list_extreme(int(g), a, b, out)
    zs_row = solve_zero_sum(a, parallel=parallel)
    zs_col = solve_zero_sum(np.ascontiguousarray(b.transpose(0, 2, 1)), parallel=parallel)
    n_deg = int(out["degenerate"].sum())
    if n_deg:
        logger.debug("bimatrix solver: %d of %d games flagged degenerate", n_deg, n_games)
    return BimatrixSolution(maximin_row=zs_row.value, maximin_col=zs_col.value,
                            maximin_row_strategy=zs_row.row, maximin_col_strategy=zs_col.row,
                            **out)


# Feasibility and tight-constraint tolerance of a polytope vertex (normalised units: payoffs
# mapped to [1, 2]); and the smallest |determinant| of a basis counted as regular.
_VERTEX_TOL = 1e-9
_DET_TOL = 1e-12


@cache
def _bases(d: int, k: int) -> np.ndarray:
    out = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64)
    out.setflags(write=False)
    return out


def _vertices(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices other than 0 of ``{z >= 0, g z <= 1}`` (``g``: (r, k), positive) and their
    labels: (V, k) points and (V, k + r) bool, label ``i < k`` for a tight ``z_i >= 0`` and
    ``k + j`` for a tight row ``j``. Every basis (``k`` constraints taken as equalities) is
    solved at once; a degenerate vertex, reached from several bases, is kept once."""
    r, k = g.shape
    rows = np.vstack([-np.eye(k), g])
    rhs = np.concatenate([np.zeros(k), np.ones(r)])
    bases = _bases(k + r, k)
    mats = rows[bases]
    regular = np.abs(np.linalg.det(mats)) > _DET_TOL
    z = np.linalg.solve(mats[regular], rhs[bases[regular]][..., None])[..., 0]
    slack = rhs[None, :] - z @ rows.T
    keep = (slack >= -_VERTEX_TOL).all(axis=1) & (z.sum(axis=1) > _VERTEX_TOL)
    z, tight = z[keep], slack[keep] <= _VERTEX_TOL
    _, first = np.unique(np.round(z, 8), axis=0, return_index=True)
    first = np.sort(first)
    return np.clip(z[first], 0.0, None), tight[first]


def extreme_equilibria(row_payoffs: np.ndarray, col_payoffs: np.ndarray
                       ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every extreme Nash equilibrium of one bimatrix game, by vertex enumeration.

    With ``A`` and ``B`` mapped to [1, 2] (a positive affine map per player, which keeps the
    equilibria), the best-response polytopes are ``P = {x >= 0, B^T x <= 1}`` and
    ``Q = {A y <= 1, y >= 0}``; a pair of vertices ``(x, y)`` other than 0 whose labels (tight
    constraints: action ``i`` for ``x_i = 0`` or ``(A y)_i = 1``, action ``m + j`` for
    ``(B^T x)_j = 1`` or ``y_j = 0``) cover all ``m + n`` actions is, normalised, an extreme
    equilibrium, and every extreme equilibrium is one (as ``nashpy.vertex_enumeration`` and
    gambit's ``enummixed``). Listed by the sum of the support sizes (pure ones first), row
    support, column support, then strategy. Cost: ``C(m + n, m)`` small systems per polytope (5x5: 252 each, about 1 ms).

    Args:
        row_payoffs: (m, n) ``A``.
        col_payoffs: (m, n) ``B``.
    """
    a = np.asarray(row_payoffs, dtype=np.float64)
    b = np.asarray(col_payoffs, dtype=np.float64)
    m, n = a.shape

    def unit(x: np.ndarray) -> np.ndarray:
        span = float(x.max() - x.min())
        return (x - x.min()) / (span if span > 0 else 1.0) + 1.0

    xs, x_tight = _vertices(unit(b).T)  # labels: x_i = 0 (i), (B^T x)_j = 1 (m + j)
    ys, y_tight = _vertices(unit(a))  # labels: y_j = 0 (j), (A y)_i = 1 (n + i)
    y_labels = np.concatenate([y_tight[:, n:], y_tight[:, :n]], axis=1)
    ii, jj = np.nonzero((x_tight[:, None, :] | y_labels[None, :, :]).all(axis=2))
    found = []
    for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
        x = xs[i] / xs[i].sum() + 0.0  # no -0.0
        y = ys[j] / ys[j].sum() + 0.0
        sx, sy = np.flatnonzero(x > POSITIVE_TOL), np.flatnonzero(y > POSITIVE_TOL)
        found.append(((len(sx) + len(sy), tuple(sx), tuple(sy), tuple(x), tuple(y)), x, y))
    found.sort(key=lambda t: t[0])
    return [(x, y) for _, x, y in found]


def _list_extreme(g: int, a: np.ndarray, b: np.ndarray, out: dict[str, np.ndarray]) -> None:
    """Replaces game ``g``'s listed equilibria by its extreme equilibria (a degenerate game)."""
    eqs = extreme_equilibria(a[g], b[g])
    cap = out["eq_row"].shape[1]
    for key in ("eq_row", "eq_col", "eq_row_value", "eq_col_value"):
        out[key][g] = np.nan
    for e, (x, y) in enumerate(eqs[:cap]):
        out["eq_row"][g, e] = x
        out["eq_col"][g, e] = y
        out["eq_row_value"][g, e] = x @ a[g] @ y
        out["eq_col_value"][g, e] = x @ b[g] @ y
    out["num_eq"][g] = min(len(eqs), cap)
    out["truncated"][g] = len(eqs) > cap


def _as_batch(payoffs: np.ndarray, name: str) -> np.ndarray:
    """Validate a (B, m, n) payoff batch and return it as C-contiguous float64."""
    arr = np.asarray(payoffs)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer)
                                     or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real numeric array (int or float), got dtype "
                        f"{arr.dtype}")
    if arr.ndim != 3:
        hint = f" (for a single game pass {name}[None])" if arr.ndim == 2 else ""
        raise ValueError(f"{name} must have shape (B, m, n), got {arr.ndim}-D array of shape "
                         f"{arr.shape}{hint}")
    if arr.shape[1] < 1 or arr.shape[2] < 1:
        raise ValueError(f"{name} must have at least one row and one column action, got shape "
                         f"{arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; found {arr[bad]} at index {bad}")
    return arr


# --------------------------------------------------------------------------------------------
# kernels


@njit(cache=True, parallel=True)
def _solve_parallel(n_chunks, a, b, rows, cols, size, eq_row, eq_col, eq_row_value,
                    eq_col_value, num_eq, truncated, degenerate, pure_eq, maximin_row_pure,
                    maximin_col_pure, pareto, max_welfare):  # pragma: no cover - compiled
    n_games = a.shape[0]
    for c in prange(n_chunks):
        start = c * n_games // n_chunks
        stop = (c + 1) * n_games // n_chunks
        _solve_range(start, stop, a, b, rows, cols, size, eq_row, eq_col, eq_row_value,
                     eq_col_value, num_eq, truncated, degenerate, pure_eq, maximin_row_pure,
                     maximin_col_pure, pareto, max_welfare)


@njit(cache=True)
def _solve_range(start, stop, a, b, rows, cols, size, eq_row, eq_col, eq_row_value,
                 eq_col_value, num_eq, truncated, degenerate, pure_eq, maximin_row_pure,
                 maximin_col_pure, pareto, max_welfare):  # pragma: no cover - compiled
    """Solve games ``start..stop-1``, writing their entries of every output.

    ``an``/``bn`` are the normalised matrices. For a support pair, ``sys`` holds the two
    ``k x (k + 1)`` augmented indifference systems (``s = 0``: the column strategy from ``A``;
    ``s = 1``: the row strategy from ``B``), solved by Gaussian elimination with partial
    pivoting that skips negligible pivots, so that a singular system is told apart as
    solvable (a continuum: degenerate) or not (no candidate).
    """
    m = a.shape[1]
    n = a.shape[2]
    cap = eq_row.shape[1]
    n_pairs = size.shape[0]
    an = np.empty((m, n))
    bn = np.empty((m, n))
    sys = np.empty((2, MAX_ACTIONS, MAX_ACTIONS + 1))
    sol = np.empty((2, MAX_ACTIONS))
    for g in range(start, stop):
        # ---- normalise each player's matrix to [0, 1]
        lo_a = a[g, 0, 0]
        hi_a = a[g, 0, 0]
        lo_b = b[g, 0, 0]
        hi_b = b[g, 0, 0]
        for i in range(m):
            for j in range(n):
                lo_a = min(lo_a, a[g, i, j])
                hi_a = max(hi_a, a[g, i, j])
                lo_b = min(lo_b, b[g, i, j])
                hi_b = max(hi_b, b[g, i, j])
        sa = hi_a - lo_a if hi_a > lo_a else 1.0
        sb = hi_b - lo_b if hi_b > lo_b else 1.0
        for i in range(m):
            for j in range(n):
                an[i, j] = (a[g, i, j] - lo_a) / sa
                bn[i, j] = (b[g, i, j] - lo_b) / sb
        degen = False

        # ---- pure equilibria, pure maximin, Pareto cells, welfare
        best = -np.inf
        for j in range(n):
            col_best = an[0, j]
            for i in range(1, m):
                col_best = max(col_best, an[i, j])
            ties = 0
            for i in range(m):
                if an[i, j] >= col_best - BR_TOL:
                    ties += 1
            if ties > 1:
                degen = True
        for i in range(m):
            row_best = bn[i, 0]
            for j in range(1, n):
                row_best = max(row_best, bn[i, j])
            ties = 0
            for j in range(n):
                if bn[i, j] >= row_best - BR_TOL:
                    ties += 1
            if ties > 1:
                degen = True
        for i in range(m):
            for j in range(n):
                is_eq = True
                for k in range(m):
                    if a[g, k, j] > a[g, i, j]:
                        is_eq = False
                        break
                if is_eq:
                    for k in range(n):
                        if b[g, i, k] > b[g, i, j]:
                            is_eq = False
                            break
                pure_eq[g, i, j] = is_eq
                dominated = False
                for k in range(m):
                    for ll in range(n):
                        if (a[g, k, ll] >= a[g, i, j] and b[g, k, ll] >= b[g, i, j]
                                and (a[g, k, ll] > a[g, i, j] or b[g, k, ll] > b[g, i, j])):
                            dominated = True
                            break
                    if dominated:
                        break
                pareto[g, i, j] = not dominated
                best = max(best, a[g, i, j] + b[g, i, j])
        max_welfare[g] = best
        mm = -np.inf
        for i in range(m):
            worst = a[g, i, 0]
            for j in range(1, n):
                worst = min(worst, a[g, i, j])
            mm = max(mm, worst)
        maximin_row_pure[g] = mm
        mm = -np.inf
        for j in range(n):
            worst = b[g, 0, j]
            for i in range(1, m):
                worst = min(worst, b[g, i, j])
            mm = max(mm, worst)
        maximin_col_pure[g] = mm

        # ---- support enumeration. Size 1 first: the pure equilibria, in pair order.
        count = 0
        for i in range(m):
            for j in range(n):
                if pure_eq[g, i, j]:
                    if count < cap:
                        for r in range(m):
                            eq_row[g, count, r] = 0.0
                        for c in range(n):
                            eq_col[g, count, c] = 0.0
                        eq_row[g, count, i] = 1.0
                        eq_col[g, count, j] = 1.0
                        eq_row_value[g, count] = a[g, i, j]
                        eq_col_value[g, count] = b[g, i, j]
                    else:
                        truncated[g] = True
                    count += 1
        for p in range(n_pairs):
            k = size[p]
            if k == 1:
                continue
            ok = True
            # s = 0: the column strategy y over cols[p] from A, then the rows' best-response
            # check; s = 1: the row strategy x over rows[p] from B, then the columns' check
            for s in range(2):
                for r in range(k - 1):
                    for c in range(k):
                        if s == 0:
                            sys[0, r, c] = an[rows[p, r + 1], cols[p, c]] - an[rows[p, 0], cols[p, c]]
                        else:
                            sys[1, r, c] = bn[rows[p, c], cols[p, r + 1]] - bn[rows[p, c], cols[p, 0]]
                    sys[s, r, k] = 0.0
                for c in range(k):
                    sys[s, k - 1, c] = 1.0
                sys[s, k - 1, k] = 1.0
                # Gaussian elimination with partial pivoting, negligible pivots skipped
                rank = 0
                for c in range(k):
                    piv = rank
                    big = abs(sys[s, rank, c])
                    for r in range(rank + 1, k):
                        if abs(sys[s, r, c]) > big:
                            big = abs(sys[s, r, c])
                            piv = r
                    if big <= _PIVOT_TOL:
                        continue
                    if piv != rank:
                        for cc in range(k + 1):
                            tmp = sys[s, rank, cc]
                            sys[s, rank, cc] = sys[s, piv, cc]
                            sys[s, piv, cc] = tmp
                    for r in range(rank + 1, k):
                        f = sys[s, r, c] / sys[s, rank, c]
                        if f != 0.0:
                            for cc in range(c, k + 1):
                                sys[s, r, cc] -= f * sys[s, rank, cc]
                    rank += 1
                    if rank == k:
                        break
                if rank < k:
                    consistent = True
                    for r in range(rank, k):
                        if abs(sys[s, r, k]) > _CONSISTENT_TOL:
                            consistent = False
                    if consistent:
                        degen = True
                    ok = False
                    break
                for r in range(k - 1, -1, -1):
                    acc = sys[s, r, k]
                    for c in range(r + 1, k):
                        acc -= sys[s, r, c] * sol[s, c]
                    sol[s, r] = acc / sys[s, r, r]
                    if sol[s, r] <= POSITIVE_TOL:
                        ok = False
                        break
                if not ok:
                    break
                if s == 0:  # no row earns more than the support rows against y
                    v = 0.0
                    for c in range(k):
                        v += an[rows[p, 0], cols[p, c]] * sol[0, c]
                    ties = 0
                    for i in range(m):
                        acc = 0.0
                        for c in range(k):
                            acc += an[i, cols[p, c]] * sol[0, c]
                        if acc > v + BR_TOL:
                            ok = False
                            break
                        if acc >= v - BR_TOL:
                            ties += 1
                else:  # no column earns more than the support columns against x
                    w = 0.0
                    for r in range(k):
                        w += bn[rows[p, r], cols[p, 0]] * sol[1, r]
                    ties_col = 0
                    for j in range(n):
                        acc = 0.0
                        for r in range(k):
                            acc += bn[rows[p, r], j] * sol[1, r]
                        if acc > w + BR_TOL:
                            ok = False
                            break
                        if acc >= w - BR_TOL:
                            ties_col += 1
                if not ok:
                    break
            if not ok:
                continue
            if ties > k or ties_col > k:
                degen = True
            if count < cap:
                for i in range(m):
                    eq_row[g, count, i] = 0.0
                for j in range(n):
                    eq_col[g, count, j] = 0.0
                for r in range(k):
                    eq_row[g, count, rows[p, r]] = sol[1, r]
                for c in range(k):
                    eq_col[g, count, cols[p, c]] = sol[0, c]
                va = 0.0
                vb = 0.0
                for r in range(k):
                    for c in range(k):
                        pr = sol[1, r] * sol[0, c]
                        va += pr * a[g, rows[p, r], cols[p, c]]
                        vb += pr * b[g, rows[p, r], cols[p, c]]
                eq_row_value[g, count] = va
                eq_col_value[g, count] = vb
            else:
                truncated[g] = True
            count += 1
        if count % 2 == 0:
            degen = True
        num_eq[g] = min(count, cap)
        degenerate[g] = degen
