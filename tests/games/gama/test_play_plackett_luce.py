"""Plackett–Luce from the finishing orders of n-player games: equal to ``choix`` on the same
rankings (maximum likelihood and penalised), ties as the mean over their orders (for two seats,
Bradley–Terry's half a win each way), several seats of one player, and the simultaneous band."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.report.ratings import (
    bootstrap_plackett_luce,
    fit_bradley_terry,
    fit_plackett_luce,
    ranking_events,
    win_matrix,
)

choix = pytest.importorskip("choix")


def _rankings(seed: int, n: int = 6, games: int = 200, seats: int = 4) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    out = []
    for _ in range(games):
        table = rng.choice(n, size=seats, replace=False)
        order = np.argsort(-(rng.gumbel(size=seats) + truth[table]))
        out.append([int(x) for x in table[order]])
    return out


def _games(rankings: list[list[int]]) -> list[tuple[list[int], list[float]]]:
    # the first of a ranking scores highest
    return [(r, [float(len(r) - k) for k in range(len(r))]) for r in rankings]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plackett_luce_equals_choix_maximum_likelihood(seed: int) -> None:
    rankings = _rankings(seed)
    ref = choix.ilsr_rankings(6, rankings, alpha=0.0, max_iter=10_000, tol=1e-13)
    mine = fit_plackett_luce(6, _games(rankings))
    np.testing.assert_allclose(mine, ref - ref.mean(), atol=1e-6)


def test_plackett_luce_equals_choix_penalised() -> None:
    rankings = _rankings(5, games=40)
    ref = choix.opt_rankings(6, rankings, alpha=0.3, method="Newton-CG", tol=1e-12)
    mine = fit_plackett_luce(6, _games(rankings), alpha=0.3)
    np.testing.assert_allclose(mine, ref - ref.mean(), atol=1e-6)


def test_a_tie_counts_as_every_order_at_equal_weight() -> None:
    tied = [([0, 1, 2], [2.0, 1.0, 1.0]), ([1, 2, 0], [3.0, 3.0, 1.0]),
            ([2, 0, 1], [5.0, 4.0, 3.0]), ([0, 2, 1], [1.0, 2.0, 3.0])]
    # choix has no ties: each untied ranking twice, each order of a tied pair once
    expanded = [[0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 1, 0], [2, 0, 1], [2, 0, 1],
                [1, 2, 0], [1, 2, 0]]
    ref = choix.ilsr_rankings(3, expanded, alpha=0.0, max_iter=10_000, tol=1e-13)
    np.testing.assert_allclose(fit_plackett_luce(3, tied), ref - ref.mean(), atol=1e-6)


def test_two_seats_is_bradley_terry_with_half_wins() -> None:
    a = np.array([0, 1, 2, 0, 1, 2, 0])
    b = np.array([1, 2, 0, 2, 0, 1, 1])
    outcome = np.array([1.0, 0.5, 0.0, 1.0, 0.5, 1.0, 0.0])
    games = [([i, j], [o, 1.0 - o]) for i, j, o in zip(a, b, outcome, strict=True)]
    np.testing.assert_allclose(fit_plackett_luce(3, games),
                               fit_bradley_terry(win_matrix(3, a, b, outcome)), atol=1e-8)


def test_several_seats_of_one_player_and_a_whole_table_tied() -> None:
    games = [([0, 0, 1, 1], [4.0, 3.0, 2.0, 1.0]), ([0, 1, 1, 0], [1.0, 2.0, 3.0, 4.0]),
             ([1, 0, 0, 1], [1.0, 3.0, 2.0, 4.0]), ([0, 1, 0, 1], [7.0, 7.0, 7.0, 7.0])]
    theta = fit_plackett_luce(2, games)
    assert theta[0] > 0 > theta[1]
    # a table of ten seats of one player, all tied, carries no information about anyone
    events = ranking_events(2, [([0] * 10, [1.0] * 10)])
    assert events.weights.size == 0 or not events.weights.any()


def test_the_band_holds_every_player_at_once_and_is_seeded() -> None:
    games = _games(_rankings(7))
    fit = bootstrap_plackett_luce(6, games, seed=3, resamples=200)
    again = bootstrap_plackett_luce(6, games, seed=3, resamples=200)
    np.testing.assert_array_equal(fit.low, again.low)
    assert np.all(fit.low < fit.theta) and np.all(fit.theta < fit.high)
    assert fit.critical > 1.96  # a simultaneous band is wider than one 95% interval
    assert fit.unconverged == 0 and fit.samples.shape == (200, 6)


def test_bad_games_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="two seats"):
        fit_plackett_luce(3, [([0], [1.0])])
    with pytest.raises(ValueError, match="do not exist"):
        fit_plackett_luce(3, [([0, 1, 2], [3.0, 2.0, 1.0])])
