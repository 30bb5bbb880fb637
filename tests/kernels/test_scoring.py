"""Tests for the batch scoring kernels (llm_value, br_value, nash_gap, exploitability)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from distbench.kernels import TrialScores, score_actions, score_strategies, solve_zero_sum

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
# saddle point at (0, 0) with value 3; row 1 earns 1 against column 0
SADDLE = np.array([[3.0, 5.0], [1.0, 4.0]])


def solved(payoffs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sol = solve_zero_sum(payoffs)
    return payoffs, sol.col, sol.value


def numpy_scores(payoffs, col, value, game_index, strategies) -> dict[str, np.ndarray]:
    """The definitions of GAMES.md section 1, written out with numpy."""
    u = payoffs[game_index]
    uy = np.einsum("tij,tj->ti", u, col[game_index])
    llm = np.einsum("ti,ti->t", strategies, uy)
    br = uy.max(axis=1)
    worst = np.einsum("ti,tij->tj", strategies, u).min(axis=1)
    return {
        "llm_value": llm,
        "br_value": br,
        "nash_gap": br - llm,
        "exploitability": value[game_index] - worst,
    }


def random_setting(seed: int, n_games: int = 60, m: int = 4, n: int = 6, n_trials: int = 700):
    rng = np.random.default_rng(seed)
    payoffs = rng.integers(-50, 51, size=(n_games, m, n)).astype(np.float64)
    payoffs, col, value = solved(payoffs)
    game_index = rng.integers(0, n_games, size=n_trials)
    return rng, payoffs, col, value, game_index


def assert_scores_close(got: TrialScores, want: dict[str, np.ndarray], atol: float) -> None:
    for name, expected in want.items():
        assert_allclose(getattr(got, name), expected, rtol=1e-12, atol=atol, err_msg=name)


# --------------------------------------------------------------------------------------------
# agreement with the definitions


def test_mixed_scores_match_numpy_on_random_data() -> None:
    rng, payoffs, col, value, game_index = random_setting(1)
    strategies = rng.dirichlet(np.full(4, 0.7), size=len(game_index))
    got = score_strategies(payoffs, col, value, game_index, strategies)
    want = numpy_scores(payoffs, col, value, game_index, strategies)
    assert_scores_close(got, want, atol=1e-10)
    assert (got.nash_gap >= 0).all()
    assert (got.exploitability >= 0).all()
    # random play is exploitable in most of these games: the scores are not trivially zero
    assert (got.exploitability > 1e-6).mean() > 0.5


def test_pure_scores_match_numpy_on_random_data() -> None:
    rng, payoffs, col, value, game_index = random_setting(2)
    actions = rng.integers(0, 4, size=len(game_index))
    got = score_actions(payoffs, col, value, game_index, actions)
    want = numpy_scores(payoffs, col, value, game_index, np.eye(4)[actions])
    assert_scores_close(got, want, atol=1e-10)


def test_pure_action_equals_one_hot_mixed_strategy_exactly() -> None:
    rng, payoffs, col, value, game_index = random_setting(3)
    actions = rng.integers(0, 4, size=len(game_index))
    pure = score_actions(payoffs, col, value, game_index, actions)
    mixed = score_strategies(payoffs, col, value, game_index, np.eye(4)[actions])
    for name in ("llm_value", "br_value", "nash_gap", "exploitability"):
        assert_array_equal(getattr(pure, name), getattr(mixed, name), err_msg=name)


def test_nash_row_strategy_scores_zero_gap_and_zero_exploitability() -> None:
    rng = np.random.default_rng(4)
    payoffs = rng.normal(0.0, 20.0, size=(500, 5, 5))
    sol = solve_zero_sum(payoffs)
    idx = np.arange(500)
    got = score_strategies(payoffs, sol.col, sol.value, idx, sol.row)
    assert_allclose(got.nash_gap, 0.0, atol=1e-9 * 100)
    assert_allclose(got.exploitability, 0.0, atol=1e-9 * 100)
    assert_allclose(got.llm_value, sol.value, rtol=1e-12, atol=1e-10)
    assert_allclose(got.br_value, sol.value, rtol=1e-12, atol=1e-10)


# --------------------------------------------------------------------------------------------
# known games


def test_rock_paper_scissors_gap_is_zero_for_every_pure_action() -> None:
    # the degenerate-gap phenomenon: against uniform y*, every row earns the value 0
    payoffs, col, value = solved(RPS[None])
    got = score_actions(payoffs, col, value, np.zeros(3, dtype=np.int64), np.arange(3))
    assert_allclose(got.nash_gap, 0.0, atol=1e-12)
    assert_allclose(got.llm_value, 0.0, atol=1e-12)
    # ... while every pure action can be exploited for 1
    assert_allclose(got.exploitability, 1.0, rtol=1e-12)


def test_rock_paper_scissors_uniform_strategy_is_unexploitable() -> None:
    payoffs, col, value = solved(RPS[None])
    strategies = np.array([[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    got = score_strategies(payoffs, col, value, np.zeros(3, dtype=np.int64), strategies)
    assert_allclose(got.exploitability, [0.0, 0.5, 0.2], atol=1e-12)
    assert_allclose(got.nash_gap, 0.0, atol=1e-12)


def test_saddle_point_game_gap_and_exploitability() -> None:
    payoffs, col, value = solved(SADDLE[None])
    got = score_actions(payoffs, col, value, np.array([0, 0]), np.array([0, 1]))
    assert_allclose(got.llm_value, [3.0, 1.0], rtol=1e-12)
    assert_allclose(got.br_value, [3.0, 3.0], rtol=1e-12)
    assert_allclose(got.nash_gap, [0.0, 2.0], atol=1e-12)
    assert_allclose(got.exploitability, [0.0, 3.0 - 1.0], atol=1e-12)


def test_exploitability_does_not_depend_on_which_column_equilibrium_is_given() -> None:
    # row 0 dominates, value 1, every column strategy is optimal
    payoffs = np.array([[[1.0, 1.0], [0.0, -2.0]]] * 2)
    col = np.array([[1.0, 0.0], [0.3, 0.7]])
    value = np.array([1.0, 1.0])
    strategies = np.array([[0.6, 0.4], [0.6, 0.4]])
    got = score_strategies(payoffs, col, value, np.array([0, 1]), strategies)
    assert got.exploitability[0] == pytest.approx(got.exploitability[1], abs=1e-12)
    # x^T U = [0.6, -0.2]: exploitability = 1 - (-0.2)
    assert got.exploitability[0] == pytest.approx(1.2, abs=1e-12)
    assert got.nash_gap[0] != pytest.approx(got.nash_gap[1])  # the gap does depend on y*


def test_rounding_negatives_are_clipped_to_zero() -> None:
    # identical rows: every strategy earns exactly the value, but x summing to 1 +- 1 ulp
    # makes the plain formulas come out at -2e-16 for some trials
    payoffs = np.tile([0.3, 0.7, 1.1, -0.9], (3, 1))[None]
    sol = solve_zero_sum(payoffs)
    x = np.random.default_rng(5).dirichlet(np.ones(3), size=2000)
    idx = np.zeros(2000, dtype=np.int64)
    plain = numpy_scores(payoffs, sol.col, sol.value, idx, x)
    assert (plain["nash_gap"] < 0).any() and (plain["exploitability"] < 0).any()
    got = score_strategies(payoffs, sol.col, sol.value, idx, x)
    assert (got.nash_gap >= 0).all()
    assert (got.exploitability >= 0).all()
    assert_allclose(got.nash_gap, 0.0, atol=1e-15)
    assert_allclose(got.exploitability, 0.0, atol=1e-15)


def test_rounding_noise_on_best_responses_reads_as_exactly_zero() -> None:
    # In a full-support game every row earns the value against y* exactly; in floating point
    # the rows differ by ~1e-15, which must not show up as a positive gap (users query
    # `nash_gap = 0`).
    rng = np.random.default_rng(11)
    payoffs = rng.integers(-50, 51, size=(400, 3, 3)).astype(float)
    sol = solve_zero_sum(payoffs)
    full = sol.row_support == 3
    assert full.sum() > 20
    games = np.flatnonzero(full)
    idx = np.repeat(games, 3)
    actions = np.tile(np.arange(3), len(games))
    got = score_actions(payoffs, sol.col, sol.value, idx, actions)
    assert (got.nash_gap == 0.0).all()
    # ... while a real gap survives.
    uy = (payoffs @ sol.col[:, :, None])[:, :, 0]
    spread = np.flatnonzero(uy.max(axis=1) - uy.min(axis=1) > 1e-6)
    assert len(spread) > 20
    real = score_actions(payoffs, sol.col, sol.value, spread, uy[spread].argmin(axis=1))
    assert (real.nash_gap > 1e-6).all()


def test_large_negatives_from_inconsistent_inputs_are_kept() -> None:
    # a value that is off by one is an input error; clipping must not hide it
    payoffs, col, value = solved(SADDLE[None])
    got = score_actions(payoffs, col, value - 1.0, np.array([0]), np.array([0]))
    assert_allclose(got.exploitability, [-1.0])


# --------------------------------------------------------------------------------------------
# invalid answers


def test_nan_strategy_rows_give_nan_scores() -> None:
    rng, payoffs, col, value, game_index = random_setting(6, n_trials=10)
    strategies = rng.dirichlet(np.ones(4), size=10)
    strategies[[2, 7]] = np.nan
    strategies[5, 1] = np.nan  # a single NaN entry is enough
    got = score_strategies(payoffs, col, value, game_index, strategies)
    invalid = np.zeros(10, dtype=bool)
    invalid[[2, 5, 7]] = True
    for name in ("llm_value", "br_value", "nash_gap", "exploitability"):
        arr = getattr(got, name)
        assert_array_equal(np.isnan(arr), invalid, err_msg=name)


def test_invalid_action_minus_one_gives_nan_scores() -> None:
    rng, payoffs, col, value, game_index = random_setting(7, n_trials=8)
    actions = np.array([0, -1, 3, 2, -1, 1, 0, 0])
    got = score_actions(payoffs, col, value, game_index, actions)
    for name in ("llm_value", "br_value", "nash_gap", "exploitability"):
        assert_array_equal(np.isnan(getattr(got, name)), actions == -1, err_msg=name)


def test_empty_trial_batch() -> None:
    payoffs, col, value = solved(RPS[None])
    got = score_actions(payoffs, col, value, np.zeros(0, dtype=np.int64), np.zeros(0, np.int64))
    assert len(got) == 0
    got = score_strategies(payoffs, col, value, np.zeros(0, dtype=np.int64), np.zeros((0, 3)))
    assert got.exploitability.shape == (0,)


# --------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize("action", [3, -2, 100])
def test_out_of_range_action_is_rejected(action: int) -> None:
    payoffs, col, value = solved(RPS[None])
    with pytest.raises(ValueError, match=rf"actions\[1\] = {action} is out of range"):
        score_actions(payoffs, col, value, np.array([0, 0]), np.array([0, action]))


def test_float_actions_are_rejected() -> None:
    payoffs, col, value = solved(RPS[None])
    with pytest.raises(TypeError, match="integer"):
        score_actions(payoffs, col, value, np.array([0]), np.array([1.0]))


def test_out_of_range_game_index_is_rejected() -> None:
    payoffs, col, value = solved(np.stack([RPS, RPS]))
    with pytest.raises(ValueError, match=r"game_index\[2\] = 2 is out of range for 2 games"):
        score_actions(payoffs, col, value, np.array([0, 1, 2]), np.array([0, 0, 0]))
    with pytest.raises(TypeError, match="game_index must be an integer"):
        score_actions(payoffs, col, value, np.array([0.0]), np.array([0]))


@pytest.mark.parametrize(
    ("col_shape", "value_shape", "match"),
    [((1, 2), (1,), "col must have shape"), ((1, 3), (2,), "value must have shape")],
)
def test_mismatched_game_shapes_are_rejected(col_shape, value_shape, match) -> None:
    with pytest.raises(ValueError, match=match):
        score_actions(RPS[None], np.ones(col_shape) / 3, np.zeros(value_shape), [0], [0])


def test_two_dimensional_payoffs_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"payoffs\[None\]"):
        score_actions(RPS, np.ones((1, 3)) / 3, np.zeros(1), np.array([0]), np.array([0]))


def test_mismatched_strategy_and_action_shapes_are_rejected() -> None:
    payoffs, col, value = solved(RPS[None])
    with pytest.raises(ValueError, match=r"strategies must have shape \(T, m\) = \(1, 3\)"):
        score_strategies(payoffs, col, value, np.array([0]), np.array([[0.5, 0.5]]))
    with pytest.raises(ValueError, match="actions must have shape"):
        score_actions(payoffs, col, value, np.array([0]), np.array([0, 1]))


def test_non_finite_payoffs_are_rejected() -> None:
    payoffs = RPS[None].copy()
    payoffs[0, 1, 1] = np.nan
    with pytest.raises(ValueError, match="payoffs must be finite"):
        score_actions(payoffs, np.ones((1, 3)) / 3, np.zeros(1), np.array([0]), np.array([0]))


@pytest.mark.parametrize(
    ("strategy", "match"),
    [
        ([0.5, 0.6, -0.1], "negative probability"),
        ([0.5, 0.4, 0.0], "sums to"),
        ([np.inf, 0.0, 0.0], "finite"),
    ],
)
def test_strategies_that_are_not_distributions_are_rejected(strategy, match) -> None:
    payoffs, col, value = solved(RPS[None])
    strategies = np.array([[1.0, 0.0, 0.0], strategy])
    with pytest.raises(ValueError, match=match):
        score_strategies(payoffs, col, value, np.array([0, 0]), strategies)
