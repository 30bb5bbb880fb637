"""Tests for the batch bimatrix solver, against nashpy and pygambit and textbook games."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from distbench.games.bimatrix.types import NUM_TYPES, draw_type_payoffs, type_ranks
from distbench.kernels import solve_zero_sum
from distbench.kernels.bimatrix import solve_bimatrix, support_pairs

nashpy = pytest.importorskip("nashpy")
gbt = pytest.importorskip("pygambit")
from nashpy.algorithms.support_enumeration import (  # noqa: E402
    obey_support,
    potential_support_pairs,
)

TOL = 1e-9

# --------------------------------------------------------------------------------------------
# references


def _solve_indifference(a: np.ndarray, rows, columns) -> np.ndarray | None:
    """nashpy's ``solve_indifference`` (the same linear system: differences of consecutive
    support rows, the unit rows of the columns off the support, and the sum), accepting
    probabilities down to -1e-12 instead of 0 and setting them to 0."""
    m = (a[np.array(rows)] - np.roll(a[np.array(rows)], 1, axis=0))[:-1]
    zero = sorted(set(range(a.shape[1])) - set(columns))
    if zero:
        m = np.append(m, np.eye(a.shape[1])[zero], axis=0)
    m = np.append(m, np.ones((1, a.shape[1])), axis=0)
    rhs = np.zeros(len(m))
    rhs[-1] = 1.0
    try:
        prob = np.linalg.solve(m, rhs)
    except np.linalg.LinAlgError:
        return None
    if (prob < -1e-12).any():
        return None
    prob[list(zero)] = 0.0
    return prob


def nashpy_equilibria(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """nashpy's support enumeration (``nashpy.Game.support_enumeration``) made tolerant of
    rounding: its support pairs (``potential_support_pairs``, equal sizes), its indifference
    systems, its support and best-response tests, with every comparison at a tolerance.

    nashpy compares floats exactly: ``solve_indifference`` refuses a probability solved as
    -1e-17 instead of 0; with equal-size supports ``obey_support`` needs off-support
    probabilities ``<= 0`` exactly; ``is_ne`` is ``row_payoffs.max() ==
    row_support_payoffs.max()``. Each drops true equilibria by rounding (in 51 of 200 games
    at 3x3: see ``test_every_equilibrium_of_nashpys_own_support_enumeration_is_found``).
    Here supports are tested at 1e-12 and best responses at 1e-9 of the payoff range.
    """
    out = []
    ta = 1e-9 * max(1.0, np.ptp(a))
    tb = 1e-9 * max(1.0, np.ptp(b))
    for sup_x, sup_y in potential_support_pairs(a, b, non_degenerate=True):
        x = _solve_indifference(b.T, sup_y, sup_x)
        y = _solve_indifference(a, sup_x, sup_y)
        if x is None or y is None:
            continue
        if not (obey_support(x, sup_x, tol=1e-12) and obey_support(y, sup_y, tol=1e-12)):
            continue
        ay = a @ y
        xb = x @ b
        if ay.max() <= ay[list(sup_x)].max() + ta and xb.max() <= xb[list(sup_y)].max() + tb:
            out.append((x, y))
    return out


def gambit_equilibria(a: np.ndarray, b: np.ndarray,
                      rational: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """pygambit's ``enummixed_solve``: the extreme equilibria by vertex enumeration."""
    game = gbt.StrategicGame.from_arrays(a, b)
    res = gbt.nash.enummixed_solve(game, rational=rational)
    return [(np.array([float(p) for _, p in eq["1"]]), np.array([float(p) for _, p in eq["2"]]))
            for eq in res.equilibria]


def assert_same_set(mine, ref, what: str) -> None:
    """The two lists of (x, y) hold the same equilibria within TOL (order free)."""
    assert len(mine) == len(ref), f"{what}: {len(mine)} equilibria vs {len(ref)}"
    left = list(ref)
    for x, y in mine:
        hit = [k for k, (rx, ry) in enumerate(left)
               if np.abs(rx - x).max() <= TOL and np.abs(ry - y).max() <= TOL]
        assert hit, f"{what}: ({x}, {y}) has no match in {ref}"
        left.pop(hit[0])


def random_games(size: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Continuous payoffs in [-10, 10]: nondegenerate with probability 1."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, size]))
    return (rng.uniform(-10, 10, (count, size, size)), rng.uniform(-10, 10, (count, size, size)))


# --------------------------------------------------------------------------------------------
# equilibrium sets


@pytest.mark.slow
@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_equilibria_equal_nashpy_and_gambit_on_1000_random_games(size):
    a, b = random_games(size, 1000, seed=26)
    sol = solve_bimatrix(a, b)
    assert not sol.degenerate.any()
    assert not sol.truncated.any()
    assert (sol.num_eq % 2 == 1).all()
    for g in range(len(sol)):
        mine = sol.equilibria(g)
        assert_same_set(mine, nashpy_equilibria(a[g], b[g]), f"nashpy, game {g}")
        assert_same_set(mine, gambit_equilibria(a[g], b[g]), f"gambit, game {g}")


@pytest.mark.filterwarnings("ignore:An even number:RuntimeWarning")
def test_every_equilibrium_of_nashpys_own_support_enumeration_is_found():
    """nashpy's own function, untouched (all support pairs): everything it finds is found, and
    the sets are equal in most games (the others lose equilibria to nashpy's exact float
    comparisons; pygambit finds them, as the tests above check)."""
    a, b = random_games(3, 200, seed=7)
    sol = solve_bimatrix(a, b)
    equal = 0
    for g in range(len(sol)):
        mine = sol.equilibria(g)
        ref = list(nashpy.Game(a[g], b[g]).support_enumeration())
        for x, y in ref:
            assert any(np.abs(x - mx).max() <= TOL and np.abs(y - my).max() <= TOL
                       for mx, my in mine)
        equal += len(ref) == len(mine)
        assert len(mine) == len(gambit_equilibria(a[g], b[g]))
    assert equal >= 140  # 149 of 200 measured


def test_equilibria_equal_nashpy_and_gambit_on_all_144_types():
    rng = np.random.default_rng(144)
    a = np.empty((NUM_TYPES, 2, 2))
    b = np.empty((NUM_TYPES, 2, 2))
    for t in range(1, NUM_TYPES + 1):
        a[t - 1], b[t - 1] = draw_type_payoffs(t, rng)
    sol = solve_bimatrix(a, b)
    assert not sol.degenerate.any()
    for g in range(NUM_TYPES):
        mine = sol.equilibria(g)
        assert_same_set(mine, nashpy_equilibria(a[g], b[g]), f"nashpy, type {g + 1}")
        assert_same_set(mine, gambit_equilibria(a[g], b[g], rational=True), f"gambit, type {g + 1}")


def test_the_144_types_are_distinct_games_each_in_its_canonical_layout():
    def canon(ra, rb):
        # every relabelling by row and column swaps, as one sorted key
        keys = []
        for rs in (False, True):
            for cs in (False, True):
                xa, xb = ra, rb
                if rs:
                    xa, xb = xa[::-1], xb[::-1]
                if cs:
                    xa, xb = xa[:, ::-1], xb[:, ::-1]
                keys.append((tuple(xa.ravel()), tuple(xb.ravel())))
        return min(keys)

    seen = set()
    for t in range(1, NUM_TYPES + 1):
        ra, rb = type_ranks(t)
        assert sorted(ra.ravel()) == [1, 2, 3, 4] == sorted(rb.ravel())
        assert ra[:, 1].max() == 4 and rb[0].max() == 4
        seen.add(canon(ra, rb))
    assert len(seen) == NUM_TYPES


def test_integer_games_not_flagged_equal_gambit_and_flagged_ones_list_true_equilibria():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, (400, 3, 3)).astype(float)
    b = rng.integers(0, 4, (400, 3, 3)).astype(float)
    sol = solve_bimatrix(a, b)
    assert 0 < sol.degenerate.sum() < len(sol)  # small integer payoffs: many ties
    for g in range(len(sol)):
        mine = sol.equilibria(g)
        if not sol.degenerate[g]:
            assert_same_set(mine, gambit_equilibria(a[g], b[g], rational=True), f"game {g}")
        for x, y in mine:  # every listed profile is an equilibrium
            assert (a[g] @ y).max() <= x @ a[g] @ y + 1e-9
            assert (x @ b[g]).max() <= x @ b[g] @ y + 1e-9


def test_degenerate_games_are_flagged_and_never_crash():
    games = [
        (np.zeros((2, 2)), np.zeros((2, 2))),  # every profile an equilibrium
        (np.array([[1.0, 1.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]])),  # tied replies
        # Nisan et al. (2007) example 3.5 (von Stengel): a continuum of equilibria
        (np.array([[3.0, 3.0], [2.0, 5.0], [0.0, 6.0]]),
         np.array([[3.0, 3.0], [2.0, 6.0], [3.0, 1.0]])),
    ]
    for a, b in games:
        sol = solve_bimatrix(a[None], b[None])
        assert sol.degenerate[0]
    a, b = random_games(3, 50, seed=1)
    assert not solve_bimatrix(a, b).degenerate.any()


# --------------------------------------------------------------------------------------------
# textbook games


def test_prisoners_dilemma_has_one_equilibrium_mutual_defection():
    a = np.array([[3.0, 0.0], [5.0, 1.0]])  # action 0 cooperate, 1 defect
    sol = solve_bimatrix(a[None], a.T[None])
    assert sol.num_eq[0] == 1
    assert_allclose(sol.eq_row[0, 0], [0, 1])
    assert_allclose(sol.eq_col[0, 0], [0, 1])
    assert_array_equal(sol.pure_eq[0], [[False, False], [False, True]])
    assert_array_equal(sol.pareto[0], [[True, True], [True, False]])
    assert sol.max_welfare[0] == 6.0
    assert sol.maximin_row[0] == pytest.approx(1.0)
    assert sol.maximin_row_pure[0] == 1.0


def test_battle_of_the_sexes_has_two_pure_and_one_mixed_equilibrium():
    a = np.array([[2.0, 0.0], [0.0, 1.0]])
    b = np.array([[1.0, 0.0], [0.0, 2.0]])
    sol = solve_bimatrix(a[None], b[None])
    assert sol.num_eq[0] == 3
    assert_allclose(sol.eq_row[0, 2], [2 / 3, 1 / 3], atol=1e-12)
    assert_allclose(sol.eq_col[0, 2], [1 / 3, 2 / 3], atol=1e-12)
    assert_allclose(sol.eq_row_value[0, :3], [2.0, 1.0, 2 / 3], atol=1e-12)
    assert_allclose(sol.eq_col_value[0, :3], [1.0, 2.0, 2 / 3], atol=1e-12)
    assert sol.maximin_row[0] == pytest.approx(2 / 3)


def test_matching_pennies_has_the_uniform_equilibrium_only():
    a = np.array([[1.0, -1.0], [-1.0, 1.0]])
    sol = solve_bimatrix(a[None], -a[None])
    assert sol.num_eq[0] == 1
    assert_allclose(sol.eq_row[0, 0], [0.5, 0.5], atol=1e-12)
    assert not sol.pure_eq.any()


# --------------------------------------------------------------------------------------------
# reference points against brute force


def test_pure_equilibria_pareto_welfare_and_maximin_match_brute_force():
    rng = np.random.default_rng(11)
    a = rng.integers(-3, 4, (300, 3, 4)).astype(float)
    b = rng.integers(-3, 4, (300, 3, 4)).astype(float)
    sol = solve_bimatrix(a, b)
    for g in range(300):
        pure = (a[g] == a[g].max(axis=0)) & (b[g] == b[g].max(axis=1, keepdims=True))
        assert_array_equal(sol.pure_eq[g], pure)
        pareto = np.ones((3, 4), bool)
        for i in range(3):
            for j in range(4):
                better = (a[g] >= a[g, i, j]) & (b[g] >= b[g, i, j]) & (
                    (a[g] > a[g, i, j]) | (b[g] > b[g, i, j]))
                pareto[i, j] = not better.any()
        assert_array_equal(sol.pareto[g], pareto)
        assert sol.max_welfare[g] == (a[g] + b[g]).max()
        assert sol.maximin_row_pure[g] == a[g].min(axis=1).max()
        assert sol.maximin_col_pure[g] == b[g].min(axis=0).max()
    assert_allclose(sol.maximin_row, solve_zero_sum(a).value)
    assert_allclose(sol.maximin_col, solve_zero_sum(b.transpose(0, 2, 1)).value)
    # the maximin strategy secures the value against every column
    secured = np.einsum("gi,gij->gj", sol.maximin_row_strategy, a).min(axis=1)
    assert_allclose(secured, sol.maximin_row, atol=1e-9)


def test_non_square_games_match_gambit():
    rng = np.random.default_rng(3)
    for m, n in [(2, 5), (5, 3), (4, 2), (1, 3)]:
        a = rng.uniform(-1, 1, (60, m, n))
        b = rng.uniform(-1, 1, (60, m, n))
        sol = solve_bimatrix(a, b)
        assert not sol.degenerate.any()
        for g in range(60):
            assert_same_set(sol.equilibria(g), gambit_equilibria(a[g], b[g]), f"{m}x{n} game {g}")


# --------------------------------------------------------------------------------------------
# batch behaviour and input checks


def test_parallel_equals_serial_and_results_are_deterministic():
    a, b = random_games(4, 300, seed=2)
    s1 = solve_bimatrix(a, b)
    s2 = solve_bimatrix(a, b, parallel=True)
    for f in ("eq_row", "eq_col", "num_eq", "degenerate", "pure_eq", "pareto", "max_welfare"):
        assert_array_equal(getattr(s1, f), getattr(s2, f))


def test_max_equilibria_truncates_and_says_so():
    a = np.array([[2.0, 0.0], [0.0, 1.0]])
    b = np.array([[1.0, 0.0], [0.0, 2.0]])
    sol = solve_bimatrix(a[None], b[None], max_equilibria=2)
    assert sol.num_eq[0] == 2 and sol.truncated[0]
    assert sol.eq_row.shape == (1, 2, 2)


def test_support_pairs_count_and_order():
    rows, cols, size = support_pairs(3, 3)
    assert len(size) == 19  # C(6, 3) - 1
    assert list(rows[3, :1]) == [1] and list(cols[3, :1]) == [0]
    assert list(size) == sorted(size)


def test_empty_batch_and_bad_input():
    sol = solve_bimatrix(np.zeros((0, 2, 3)), np.zeros((0, 2, 3)))
    assert len(sol) == 0
    with pytest.raises(ValueError, match=r"pass row_payoffs\[None\]"):
        solve_bimatrix(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="same shape"):
        solve_bimatrix(np.zeros((1, 2, 2)), np.zeros((1, 2, 3)))
    with pytest.raises(ValueError, match="limited to 5x5"):
        solve_bimatrix(np.zeros((1, 6, 2)), np.zeros((1, 6, 2)))
    with pytest.raises(ValueError, match="finite"):
        solve_bimatrix(np.full((1, 2, 2), np.nan), np.zeros((1, 2, 2)))
    with pytest.raises(TypeError, match="real numeric"):
        solve_bimatrix(np.zeros((1, 2, 2), bool), np.zeros((1, 2, 2)))
