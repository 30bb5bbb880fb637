"""``eq_consistent`` of a mixed answer inside a continuum of equilibria (issue 33): in a
degenerate game the solver lists a component's extreme points, and a strategy inside the
component (a convex combination) is an equilibrium strategy too; one LP per trial says so
(:func:`~distbench.games.bimatrix.consistency.is_equilibrium_strategy`). Checked on a hand-made
game, against pygambit's extreme equilibria on degenerate games of a seed no other test uses,
and shown to change nothing in non-degenerate games."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from distbench.games.bimatrix.consistency import is_equilibrium_strategy
from distbench.games.bimatrix.runner import score
from distbench.kernels.bimatrix import solve_bimatrix

gbt = pytest.importorskip("pygambit")
SEED = 33_0207  # used by no other test

# The model (rows) is indifferent between its first two actions whatever the other does, and
# its third is never a best response; the other player best-responds to any mix of the first
# two: every x = (a, 1 - a, 0) is an equilibrium strategy, a continuum with extreme points
# a = 0 and a = 1 (and a = 1/2, where the other player may mix).
P = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
Q = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])


def _extremes(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    game = gbt.StrategicGame.from_arrays(a.astype(int), b.astype(int))
    res = gbt.nash.enummixed_solve(game, rational=True)
    return [(np.array([float(p) for _, p in eq["1"]]), np.array([float(p) for _, p in eq["2"]]))
            for eq in res.equilibria]


def test_a_mix_inside_a_continuum_is_consistent_and_one_off_it_is_not():
    sol = solve_bimatrix(P[None], Q[None])
    listed = sol.eq_row[0, :int(sol.num_eq[0])]
    x = np.array([[0.25, 0.75, 0.0], [0.4, 0.4, 0.2], [1.0, 0.0, 0.0], [np.nan] * 3])
    y = np.tile([0.5, 0.5], (4, 1))
    pure = sol.pure_eq[0]
    got = score(P, Q, x, y, listed, pure, 6.0, "mixed", degenerate=True)
    before = score(P, Q, x, y, listed, pure, 6.0, "mixed")  # the extreme points only
    np.testing.assert_array_equal(got["eq_consistent"][:3], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(before["eq_consistent"][:3], [0.0, 0.0, 1.0])
    assert np.isnan(got["eq_consistent"][3])
    assert bool(sol.degenerate[0])


def _degenerate_sample() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    games = []
    for m, n, hi, count in ((2, 2, 3, 30), (3, 3, 3, 30), (2, 3, 2, 20), (3, 4, 2, 15)):
        for _ in range(count):
            games.append((rng.integers(0, hi, (m, n)).astype(float),
                          rng.integers(0, hi, (m, n)).astype(float)))
    return games


def test_mixes_of_gambits_extreme_equilibria_sharing_a_partner_are_consistent():
    # (x1, y) and (x2, y) equilibria => ((x1 + x2) / 2, y) is one: the LP must find a y for
    # every such midpoint, and for every one of gambit's extreme strategies, in both seats
    checked = inside = 0
    for a, b in _degenerate_sample():
        eqs = _extremes(a, b)
        for p, q, seat in ((a, b, 0), (b.T, a.T, 1)):
            own = [e[seat] for e in eqs]
            partner = [e[1 - seat] for e in eqs]
            for x in own:
                assert is_equilibrium_strategy(p, q, x)
            for i, j in itertools.combinations(range(len(eqs)), 2):
                if np.abs(partner[i] - partner[j]).max() < 1e-12 and \
                        np.abs(own[i] - own[j]).max() > 1e-9:
                    mid = (own[i] + own[j]) / 2
                    assert is_equilibrium_strategy(p, q, mid), (a, b, mid)
                    inside += not any(np.abs(mid - o).max() <= 1e-6 for o in own)
                    checked += 1
    assert checked >= 20 and inside >= 20, (checked, inside)


def test_a_strategy_on_a_never_best_response_is_not_consistent():
    rng = np.random.default_rng(SEED + 1)
    for _ in range(50):
        w = rng.dirichlet(np.ones(3))
        assert not is_equilibrium_strategy(P, Q, w) or w[2] <= 1e-6


def test_non_degenerate_games_keep_the_extreme_point_check():
    # isolated equilibria: the LP agrees with "equals a listed equilibrium within 1e-6" on the
    # listed strategies, on strategies 1e-3 off them and on random ones
    rng = np.random.default_rng(SEED + 2)
    a = rng.normal(size=(60, 3, 3))
    b = rng.normal(size=(60, 3, 3))
    sol = solve_bimatrix(a, b)
    compared = 0
    for g in range(60):
        if sol.degenerate[g]:
            continue
        listed = sol.eq_row[g, :int(sol.num_eq[g])]
        off = np.clip(listed + 1e-3 * rng.normal(size=listed.shape), 0, None)
        off /= off.sum(axis=1, keepdims=True)
        for x in [*listed, *off, *rng.dirichlet(np.ones(3), size=5)]:
            old = any(np.abs(x - e).max() <= 1e-6 for e in listed)
            assert is_equilibrium_strategy(a[g], b[g], x) == old, (g, x)
            compared += 1
    assert compared > 300
