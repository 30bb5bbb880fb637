"""Tests for the batch zero-sum solver, against scipy's HiGHS and against textbook games."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from scipy.optimize import linprog

from distbench.kernels import ZeroSumSolution, solve_zero_sum
from distbench.kernels.zero_sum import RESIDUAL_TOL, STATUS_INACCURATE, _solve

# The numba kernel without the Bland/HiGHS fallback: the correctness tests use it, so that a
# kernel bug cannot hide behind the fallback.
kernel_only = functools.partial(_solve, fallback=False)

# --------------------------------------------------------------------------------------------
# helpers


def reference_value(u: np.ndarray) -> float:
    """Value of one game by scipy HiGHS: maximize v s.t. U^T x >= v, sum x = 1, x >= 0."""
    m, n = u.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-u.T, np.ones((n, 1))])
    a_eq = np.append(np.ones(m), 0.0)[None, :]
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(n),
        A_eq=a_eq,
        b_eq=[1.0],
        bounds=[(0.0, None)] * m + [(None, None)],
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun


def reference_values(payoffs: np.ndarray, block: int = 50) -> np.ndarray:
    """Values of many games by scipy HiGHS, ``block`` games per call.

    The row LPs of ``block`` games are stacked into one block-diagonal LP (the blocks share no
    variable, so the joint optimum is optimal in every block). This removes most of linprog's
    ~1-4 ms per-call overhead; ``test_block_reference_equals_one_game_reference`` checks it
    against :func:`reference_value`.
    """
    out = []
    for start in range(0, len(payoffs), block):
        chunk = payoffs[start : start + block]
        k, m, n = chunk.shape
        c = np.tile(np.append(np.zeros(m), -1.0), k)
        a_ub = sparse.block_diag([np.hstack([-u.T, np.ones((n, 1))]) for u in chunk], "csr")
        a_eq = sparse.block_diag([np.append(np.ones(m), 0.0)[None, :]] * k, "csr")
        res = linprog(
            c,
            A_ub=a_ub,
            b_ub=np.zeros(k * n),
            A_eq=a_eq,
            b_eq=np.ones(k),
            bounds=([(0.0, None)] * m + [(None, None)]) * k,
            method="highs",
        )
        assert res.status == 0, res.message
        out.append(res.x.reshape(k, m + 1)[:, -1])
    return np.concatenate(out) if out else np.zeros(0)


def test_block_reference_equals_one_game_reference() -> None:
    rng = np.random.default_rng(1)
    for m, n in [(2, 2), (4, 7), (10, 10)]:
        payoffs = random_games(rng, 120, m, n)
        single = np.array([reference_value(u) for u in payoffs])
        assert_allclose(reference_values(payoffs), single, rtol=1e-12, atol=1e-12 * 100)


def scale_of(payoffs: np.ndarray) -> np.ndarray:
    """max(1, max |U|) per game, the unit of the absolute tolerances."""
    return np.maximum(1.0, np.abs(payoffs).max(axis=(1, 2)))


def assert_values_match(got: np.ndarray, want: np.ndarray, payoffs: np.ndarray) -> None:
    """Value agreement: rtol 1e-9 with atol 1e-9 * max(1, max |U|), per game."""
    tol = 1e-9 * scale_of(payoffs) + 1e-9 * np.abs(want)
    err = np.abs(got - want)
    worst = int(np.argmax(err - tol))
    assert (err <= tol).all(), (
        f"{int((err > tol).sum())} values disagree; worst game {worst}: got {got[worst]!r}, "
        f"reference {want[worst]!r}, payoffs\n{payoffs[worst]}"
    )


def assert_valid_solution(sol: ZeroSumSolution, payoffs: np.ndarray) -> None:
    """Strategies are distributions, the residual is tiny, the diagnostics are consistent."""
    n_games, m, n = payoffs.shape
    assert sol.row.shape == (n_games, m) and sol.col.shape == (n_games, n)
    assert_array_equal(sol.status, 0)
    assert (sol.row >= 0).all() and (sol.col >= 0).all()
    assert_allclose(sol.row.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_allclose(sol.col.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    tol = 1e-9 * scale_of(payoffs)
    # recompute the residual independently of the kernel
    uy = np.einsum("bij,bj->bi", payoffs, sol.col)
    xu = np.einsum("bi,bij->bj", sol.row, payoffs)
    residual = uy.max(axis=1) - xu.min(axis=1)
    assert (residual <= tol).all(), f"max residual {residual.max()}"
    assert (residual >= -tol).all()
    assert_allclose(sol.residual, residual, rtol=0, atol=1e-12 * scale_of(payoffs).max())
    assert (sol.residual <= tol).all()
    # the value lies between what x guarantees and what y concedes
    assert (xu.min(axis=1) - tol <= sol.value).all()
    assert (sol.value <= uy.max(axis=1) + tol).all()
    assert_array_equal(sol.row_support, (sol.row > 1e-9).sum(axis=1))
    assert_array_equal(sol.col_support, (sol.col > 1e-9).sum(axis=1))
    assert (sol.row_support >= 1).all() and (sol.col_support >= 1).all()


def random_games(rng: np.random.Generator, count: int, m: int, n: int) -> np.ndarray:
    """A quarter each: integers in +-10, +-50, +-100 (as in the buckets), and continuous."""
    q = count // 4
    parts = [
        rng.integers(-10, 11, size=(q, m, n)),
        rng.integers(-50, 51, size=(q, m, n)),
        rng.integers(-100, 101, size=(q, m, n)),
        rng.normal(0.0, 30.0, size=(count - 3 * q, m, n)),
    ]
    return np.concatenate([p.astype(np.float64) for p in parts])


# --------------------------------------------------------------------------------------------
# agreement with scipy HiGHS on random games


@pytest.mark.parametrize("size", range(2, 11))
def test_value_matches_highs_on_1000_random_square_games(size: int) -> None:
    rng = np.random.default_rng([20240611, size])
    payoffs = random_games(rng, 1000, size, size)
    sol = kernel_only(payoffs)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, reference_values(payoffs), payoffs)


@pytest.mark.parametrize("shape", [(2, 5), (7, 3), (1, 4), (4, 1), (3, 10), (10, 2)])
def test_value_matches_highs_on_rectangular_games(shape: tuple[int, int]) -> None:
    m, n = shape
    rng = np.random.default_rng([7, m, n])
    payoffs = random_games(rng, 400, m, n)
    sol = kernel_only(payoffs)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, reference_values(payoffs), payoffs)


@pytest.mark.parametrize("size", [3, 6, 10])
def test_blands_rule_from_the_first_pivot_gives_the_same_values(size: int) -> None:
    # exercises the anti-cycling path that Dantzig's rule normally hides
    rng = np.random.default_rng([99, size])
    payoffs = np.concatenate(
        [random_games(rng, 400, size, size), rng.integers(0, 2, size=(200, size, size))]
    ).astype(np.float64)
    dantzig = kernel_only(payoffs)
    bland = kernel_only(payoffs, bland_after=0)
    assert_valid_solution(bland, payoffs)
    assert_values_match(bland.value, dantzig.value, payoffs)


def test_iteration_cap_sets_status_1() -> None:
    rng = np.random.default_rng(3)
    payoffs = rng.normal(size=(50, 6, 6))
    capped = kernel_only(payoffs, max_iter=0)
    assert_array_equal(capped.status, 1)
    assert_array_equal(capped.iterations, 0)
    one = kernel_only(payoffs, max_iter=1)
    full = kernel_only(payoffs)
    assert_array_equal(one.status == 1, full.iterations > 1)
    assert_array_equal(full.status, 0)
    # an interrupted solve still returns distributions, with an honest (large) residual
    assert_allclose(one.row.sum(axis=1), 1.0, atol=1e-12)
    assert_allclose(one.col.sum(axis=1), 1.0, atol=1e-12)
    uy = np.einsum("bij,bj->bi", payoffs, one.col)
    xu = np.einsum("bi,bij->bj", one.row, payoffs)
    assert_allclose(one.residual, uy.max(axis=1) - xu.min(axis=1), rtol=1e-12, atol=1e-14)
    assert (one.residual[one.status == 1] > 1e-3).all()


def test_fallback_repairs_games_that_hit_the_pivot_cap() -> None:
    rng = np.random.default_rng(3)
    payoffs = random_games(rng, 40, 6, 6)
    # the kernel gives up at once, so does the Bland retry: HiGHS answers every game
    sol = _solve(payoffs, max_iter=0)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, reference_values(payoffs), payoffs)
    assert_array_equal(sol.iterations, 0)


def badly_scaled_games(rng: np.random.Generator, count: int, k: int) -> np.ndarray:
    """Rows scaled by 10^-6 .. 10^6: payoffs spanning twelve orders of magnitude."""
    return rng.normal(size=(count, k, k)) * 10.0 ** rng.integers(-6, 7, size=(count, k, 1))


def test_badly_scaled_games_are_flagged_by_the_kernel_and_repaired() -> None:
    payoffs = badly_scaled_games(np.random.default_rng(123), 1500, 10)
    raw = kernel_only(payoffs)
    flagged = raw.status == STATUS_INACCURATE
    # the kernel alone cannot solve all of these, and says so ...
    assert flagged.sum() >= 5
    assert_array_equal(flagged, raw.residual > RESIDUAL_TOL * scale_of(payoffs))
    # ... the fallback does, leaving the other games as they were
    sol = solve_zero_sum(payoffs)
    assert_valid_solution(sol, payoffs)  # the residual certifies every value
    # HiGHS's default tolerances (1e-7) make it the less accurate one here: on game 455 its
    # strategies bound the value only to [-7.6e-7, -2.3e-7], while ours, checked in exact
    # rational arithmetic, pin it to -6.01728315e-07 +- 1e-15. Compare at HiGHS's accuracy.
    reference = reference_values(payoffs)
    assert (np.abs(sol.value - reference) <= 1e-6 * scale_of(payoffs)).all()
    for name in ("row", "col", "value", "residual", "iterations"):
        assert_array_equal(getattr(sol, name)[~flagged], getattr(raw, name)[~flagged])


# --------------------------------------------------------------------------------------------
# textbook games with known equilibria


def test_matching_pennies() -> None:
    sol = kernel_only(np.array([[[1.0, -1.0], [-1.0, 1.0]]]))
    assert_allclose(sol.value, [0.0], atol=1e-12)
    assert_allclose(sol.row, [[0.5, 0.5]], atol=1e-12)
    assert_allclose(sol.col, [[0.5, 0.5]], atol=1e-12)
    assert_array_equal(sol.row_support, [2])
    assert_array_equal(sol.col_support, [2])
    assert_array_equal(sol.gap_degenerate, [True])


def test_rock_paper_scissors() -> None:
    rps = np.array([[[0, -1, 1], [1, 0, -1], [-1, 1, 0]]])  # integer input is accepted
    sol = kernel_only(rps)
    assert_allclose(sol.value, [0.0], atol=1e-12)
    assert_allclose(sol.row, np.full((1, 3), 1 / 3), atol=1e-12)
    assert_allclose(sol.col, np.full((1, 3), 1 / 3), atol=1e-12)
    assert_array_equal(sol.gap_degenerate, [True])


def test_biased_rock_paper_scissors_from_openspiel() -> None:
    # open_spiel/python/algorithms/lp_solver_test.py
    u = np.array([[0.0, -0.25, 0.5], [0.25, 0.0, -0.05], [-0.5, 0.05, 0.0]])
    sol = kernel_only(u[None])
    expected = np.array([1.0, 10.0, 5.0]) / 16.0
    assert_allclose(sol.value, [0.0], atol=1e-12)
    assert_allclose(sol.row[0], expected, atol=1e-12)
    assert_allclose(sol.col[0], expected, atol=1e-12)  # skew-symmetric: same for both
    assert_array_equal(sol.gap_degenerate, [True])


def test_pure_saddle_point() -> None:
    # (row 1, col 0) is the saddle: 4 is the minimum of its row and the maximum of its column
    u = np.array([[3.0, 7.0, 9.0], [4.0, 6.0, 5.0], [2.0, 8.0, 1.0]])
    sol = kernel_only(u[None])
    assert_allclose(sol.value, [4.0], rtol=1e-12)
    assert_allclose(sol.row[0], [0.0, 1.0, 0.0], atol=1e-12)
    assert_allclose(sol.col[0], [1.0, 0.0, 0.0], atol=1e-12)
    assert_array_equal(sol.row_support, [1])
    assert_array_equal(sol.col_support, [1])
    assert_array_equal(sol.gap_degenerate, [False])  # rows 0 and 2 earn 3 and 2 < 4


def test_value_of_a_known_mixed_2x2_game() -> None:
    # [[a, b], [c, d]] without saddle: v = (ad - bc) / (a + d - b - c), x1 = (d - c) / (a+d-b-c)
    u = np.array([[4.0, -2.0], [-1.0, 3.0]])
    sol = kernel_only(u[None])
    assert_allclose(sol.value, [(12.0 - 2.0) / 10.0], rtol=1e-12)
    assert_allclose(sol.row[0], [0.4, 0.6], atol=1e-12)
    assert_allclose(sol.col[0], [0.5, 0.5], atol=1e-12)


# --------------------------------------------------------------------------------------------
# degenerate games


@pytest.mark.parametrize("constant", [0.0, 3.5, -7.0, 1e6])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5), (6, 2)])
def test_constant_games(constant: float, shape: tuple[int, int]) -> None:
    payoffs = np.full((2, *shape), constant)
    sol = kernel_only(payoffs)
    assert_valid_solution(sol, payoffs)
    assert_array_equal(sol.value, constant)
    assert_array_equal(sol.residual, 0.0)
    assert_array_equal(sol.gap_degenerate, True)


def test_one_by_one_game() -> None:
    sol = kernel_only(np.array([[[-2.5]]]))
    assert_array_equal(sol.value, [-2.5])
    assert_array_equal(sol.row, [[1.0]])
    assert_array_equal(sol.col, [[1.0]])
    assert_array_equal(sol.gap_degenerate, [True])


def hand_made_degenerate_games() -> list[np.ndarray]:
    games = [
        np.zeros((4, 4)),
        np.array([[1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]),  # duplicate rows
        np.array([[1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]),  # duplicate columns
        np.array([[2.0, 0.0], [2.0, 0.0]]),  # every row strategy optimal
        np.array([[1.0, 1.0], [0.0, 0.0]]),  # every column strategy optimal
        np.array([[3.0, 3.0, 3.0], [3.0, 3.0, 3.0], [0.0, 5.0, 1.0]]),  # several equilibria
        np.array([[3.0, 1.0, 4.0], [1.0, 3.0, 4.0], [0.0, 0.0, 5.0]]),  # dominated column 2
        np.array([[5.0, -1.0], [-2.0, 4.0], [-3.0, -3.0]]),  # strictly dominated row 2
        np.array([[1e6, -1e6], [-1e6, 1e6]]),
        np.array([[1e6, -1e6, 3.0], [-1e6, 1e6, -2.0], [0.5, 7.0, -1e6]]),
        np.array([[1e6 + 1.0, 1e6], [1e6, 1e6 + 1.0]]),  # small spread on a large offset
    ]
    for k in (2, 3, 5, 10):
        games.append(np.eye(k))
        games.append(-np.eye(k))
        games.append(np.eye(k)[np.random.default_rng(k).permutation(k)])
        games.append(np.ones((k, k)) - np.eye(k))
        games.append(np.tile(np.eye(k), (2, 1)))  # duplicate rows of the identity
    return games


@pytest.mark.parametrize("game", hand_made_degenerate_games(), ids=lambda g: f"{g.shape}")
@pytest.mark.parametrize("bland_after", [None, 0])
def test_hand_made_degenerate_games_match_highs(game: np.ndarray, bland_after: int | None) -> None:
    payoffs = game[None]
    sol = kernel_only(payoffs, bland_after=bland_after)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, np.array([reference_value(game)]), payoffs)


@pytest.mark.parametrize("k", [2, 3, 4, 7, 10])
def test_identity_and_permutation_games_have_value_one_over_k(k: int) -> None:
    perm = np.eye(k)[np.random.default_rng(k).permutation(k)]
    payoffs = np.stack([np.eye(k), perm])
    sol = kernel_only(payoffs)
    assert_allclose(sol.value, 1.0 / k, rtol=1e-12)
    assert_allclose(sol.row, np.full((2, k), 1.0 / k), atol=1e-12)
    assert_array_equal(sol.gap_degenerate, True)


@pytest.mark.parametrize("size", [3, 5, 8])
def test_zero_one_games_with_many_ratio_ties_match_highs(size: int) -> None:
    rng = np.random.default_rng([5, size])
    payoffs = rng.integers(0, 2, size=(300, size, size)).astype(np.float64)
    sol = kernel_only(payoffs)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, reference_values(payoffs), payoffs)


@pytest.mark.parametrize("shape", [(5, 5), (4, 7)])
def test_large_payoffs_match_highs(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng([11, *shape])
    payoffs = np.concatenate(
        [
            rng.integers(-1_000_000, 1_000_001, size=(200, *shape)).astype(np.float64),
            rng.uniform(-1e6, 1e6, size=(200, *shape)),
            rng.integers(-10, 11, size=(100, *shape)) + 1e6,  # large offset, small spread
        ]
    )
    sol = kernel_only(payoffs)
    assert_valid_solution(sol, payoffs)
    assert_values_match(sol.value, reference_values(payoffs), payoffs)


# --------------------------------------------------------------------------------------------
# gap_degenerate


def test_gap_degenerate_flags_full_support_games_only() -> None:
    payoffs = np.array(
        [
            [[1.0, -1.0], [-1.0, 1.0]],  # matching pennies: degenerate
            [[3.0, 5.0], [1.0, 4.0]],  # saddle at (0, 0), row 1 earns 1 < 3: not degenerate
            [[2.0, 2.0], [2.0, 2.0]],  # constant: degenerate
            [[4.0, -2.0], [-1.0, 3.0]],  # full support mixed: degenerate
        ]
    )
    sol = kernel_only(payoffs)
    assert_array_equal(sol.gap_degenerate, [True, False, True, True])


def test_gap_degenerate_agrees_with_the_spread_of_u_times_col() -> None:
    rng = np.random.default_rng(21)
    payoffs = rng.integers(-10, 11, size=(2000, 4, 4)).astype(np.float64)
    sol = kernel_only(payoffs)
    uy = np.einsum("bij,bj->bi", payoffs, sol.col)
    spread = uy.max(axis=1) - uy.min(axis=1)
    assert_array_equal(sol.gap_degenerate, spread <= 1e-9 * np.ptp(payoffs, axis=(1, 2)))
    # both kinds occur in such a batch, so the test can tell them apart
    assert sol.gap_degenerate.any() and not sol.gap_degenerate.all()
    # full row support implies a degenerate gap
    assert sol.gap_degenerate[sol.row_support == 4].all()


@pytest.mark.parametrize("offset", [1e6, 1e9, -1e12])
def test_large_common_offset_keeps_diagnostics_exact(offset: float) -> None:
    # RPS + offset: the diagnostics are summed over U - min U, so the offset does not cancel
    # their precision away (summing over U itself would leave noise of ulp(offset))
    rps = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    sol = kernel_only((rps + offset)[None])
    assert_allclose(sol.value, [offset], rtol=1e-15)
    assert_allclose(sol.row, np.full((1, 3), 1 / 3), atol=1e-12)
    assert sol.residual[0] <= 1e-12
    assert_array_equal(sol.gap_degenerate, [True])


# --------------------------------------------------------------------------------------------
# batch behaviour


def test_serial_and_parallel_results_are_identical() -> None:
    rng = np.random.default_rng(8)
    for m, n in [(3, 3), (7, 4), (10, 10)]:
        payoffs = random_games(rng, 3001, m, n)
        serial = solve_zero_sum(payoffs)
        parallel = solve_zero_sum(payoffs, parallel=True)
        for field in dataclasses.fields(ZeroSumSolution):
            assert_array_equal(
                getattr(serial, field.name), getattr(parallel, field.name), err_msg=field.name
            )


def test_batch_results_equal_one_game_at_a_time() -> None:
    rng = np.random.default_rng(9)
    payoffs = random_games(rng, 40, 5, 6)
    batch = solve_zero_sum(payoffs)
    for b in range(len(payoffs)):
        single = solve_zero_sum(payoffs[b : b + 1])
        assert_array_equal(single.value, batch.value[b : b + 1])
        assert_array_equal(single.row, batch.row[b : b + 1])
        assert_array_equal(single.col, batch.col[b : b + 1])


def test_output_dtypes_and_shapes() -> None:
    sol = solve_zero_sum(np.zeros((4, 2, 3), dtype=np.int32))
    assert len(sol) == 4
    expected = {
        "row": (np.float64, (4, 2)),
        "col": (np.float64, (4, 3)),
        "value": (np.float64, (4,)),
        "residual": (np.float64, (4,)),
        "iterations": (np.int32, (4,)),
        "status": (np.int8, (4,)),
        "row_support": (np.int32, (4,)),
        "col_support": (np.int32, (4,)),
        "gap_degenerate": (np.bool_, (4,)),
    }
    for name, (dtype, shape) in expected.items():
        arr = getattr(sol, name)
        assert arr.dtype == dtype, name
        assert arr.shape == shape, name
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.value = np.zeros(4)  # type: ignore[misc]


def test_empty_batch() -> None:
    sol = solve_zero_sum(np.zeros((0, 3, 4)))
    assert sol.row.shape == (0, 3)
    assert sol.col.shape == (0, 4)
    assert sol.value.shape == (0,)
    assert sol.status.dtype == np.int8


def test_non_contiguous_and_integer_input() -> None:
    rng = np.random.default_rng(4)
    payoffs = rng.integers(-10, 11, size=(100, 4, 5))
    ref = solve_zero_sum(payoffs.astype(np.float64))
    transposed = np.ascontiguousarray(payoffs.transpose(0, 2, 1)).transpose(0, 2, 1)
    assert not transposed.flags.c_contiguous
    got = solve_zero_sum(transposed)
    assert_array_equal(got.value, ref.value)
    assert_array_equal(got.row, ref.row)


# --------------------------------------------------------------------------------------------
# input validation


def test_two_dimensional_input_is_rejected_with_a_hint() -> None:
    with pytest.raises(ValueError, match=r"payoffs\[None\]"):
        solve_zero_sum(np.eye(3))


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2, 2), ()])
def test_wrong_ndim_is_rejected(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"shape \(B, m, n\)"):
        solve_zero_sum(np.zeros(shape))


@pytest.mark.parametrize("shape", [(2, 0, 3), (2, 3, 0)])
def test_empty_action_axis_is_rejected(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="at least one row and one column"):
        solve_zero_sum(np.zeros(shape))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_payoffs_are_rejected(bad: float) -> None:
    payoffs = np.zeros((3, 2, 2))
    payoffs[1, 0, 1] = bad
    with pytest.raises(ValueError, match=r"finite.*\(1, 0, 1\)"):
        solve_zero_sum(payoffs)


@pytest.mark.parametrize("payoffs", [np.array([[["a"]]]), np.zeros((1, 2, 2), dtype=bool)])
def test_non_numeric_payoffs_are_rejected(payoffs: np.ndarray) -> None:
    with pytest.raises(TypeError, match="real numeric"):
        solve_zero_sum(payoffs)
