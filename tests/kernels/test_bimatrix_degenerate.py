"""Degenerate bimatrix games list every extreme equilibrium (issue 33: 218 of gambit's extreme
equilibria and 10 whole components were missing in 306 held-out degenerate games).

The sample is held-out style: drawn with a seed no other test uses, of the kinds where ties
make games degenerate (ordinal 2x2 with ties, small integer payoffs, duplicated rows and
columns, constant payoffs). The reference is pygambit's ``enummixed_solve`` (exact rational
vertex enumeration), or nashpy's ``vertex_enumeration`` where pygambit is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from distbench.kernels.bimatrix import extreme_equilibria, solve_bimatrix

TOL = 1e-9
SEED = 33_0603  # used by no other test

try:
    import pygambit as gbt
except ImportError:  # pragma: no cover - the test extra installs it
    gbt = None
nashpy = pytest.importorskip("nashpy")


def reference(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    if gbt is not None:
        game = gbt.StrategicGame.from_arrays(a.astype(int) if (a == a.round()).all() else a,
                                             b.astype(int) if (b == b.round()).all() else b)
        res = gbt.nash.enummixed_solve(game, rational=True)
        return [(np.array([float(p) for _, p in eq["1"]]),
                 np.array([float(p) for _, p in eq["2"]])) for eq in res.equilibria]
    return list(nashpy.Game(a, b).vertex_enumeration())


def same_set(mine, ref) -> bool:
    """The two lists hold the same equilibria within TOL (order free)."""
    if len(mine) != len(ref):
        return False
    left = list(ref)
    for x, y in mine:
        hit = [k for k, (rx, ry) in enumerate(left)
               if np.abs(rx - x).max() <= TOL and np.abs(ry - y).max() <= TOL]
        if not hit:
            return False
        left.pop(hit[0])
    return True


def sample() -> list[tuple[str, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(SEED)
    games = []
    for _ in range(120):  # ordinal 2x2 with ties: ranks 1..3 for four outcomes
        games.append(("ordinal 2x2 with ties", rng.integers(1, 4, (2, 2)).astype(float),
                      rng.integers(1, 4, (2, 2)).astype(float)))
    for m, n, hi, count in ((3, 3, 3, 80), (2, 3, 3, 40), (3, 4, 2, 40), (4, 4, 3, 30),
                            (5, 5, 2, 10), (2, 5, 2, 20)):
        for _ in range(count):
            games.append((f"integer {m}x{n} in 0..{hi - 1}",
                          rng.integers(0, hi, (m, n)).astype(float),
                          rng.integers(0, hi, (m, n)).astype(float)))
    for _ in range(40):  # a duplicated row and a duplicated column of a continuous game
        a = rng.uniform(-5, 5, (3, 3))
        b = rng.uniform(-5, 5, (3, 3))
        i, j = rng.integers(0, 3, 2)
        a, b = np.vstack([a, a[i:i + 1]]), np.vstack([b, b[i:i + 1]])
        a, b = np.hstack([a, a[:, j:j + 1]]), np.hstack([b, b[:, j:j + 1]])
        games.append(("duplicated row and column", a.round(3), b.round(3)))
    for m, n in ((2, 2), (2, 3), (3, 3)):  # constant payoffs for one or both players
        games.append(("constant", np.zeros((m, n)), np.zeros((m, n))))
        games.append(("constant row payoffs", np.ones((m, n)),
                      rng.integers(0, 3, (m, n)).astype(float)))
    # Nisan et al. (2007) example 3.5 (von Stengel): a continuum of equilibria
    games.append(("textbook continuum", np.array([[3.0, 3.0], [2.0, 5.0], [0.0, 6.0]]),
                  np.array([[3.0, 3.0], [2.0, 6.0], [3.0, 1.0]])))
    return games


def test_every_extreme_equilibrium_of_degenerate_games_equals_the_reference():
    games = sample()
    by_shape: dict[tuple[int, int], list[int]] = {}
    for k, (_, a, _) in enumerate(games):
        by_shape.setdefault(a.shape, []).append(k)
    degenerate = missing = 0
    for idx in by_shape.values():
        a = np.stack([games[k][1] for k in idx])
        b = np.stack([games[k][2] for k in idx])
        sol = solve_bimatrix(a, b)
        for g, k in enumerate(idx):
            what, ga, gb = games[k]
            ref = reference(ga, gb)
            mine = sol.equilibria(g)
            degenerate += bool(sol.degenerate[g])
            assert not sol.truncated[g]
            assert same_set(mine, ref), (what, ga.tolist(), gb.tolist(), mine, ref)
            missing += len(ref) - len(mine)
    assert degenerate >= 250  # the sample is mostly degenerate (most games have ties)
    assert missing == 0


def test_the_textbook_continuum_is_listed_by_its_extreme_points():
    a = np.array([[3.0, 3.0], [2.0, 5.0], [0.0, 6.0]])
    b = np.array([[3.0, 3.0], [2.0, 6.0], [3.0, 1.0]])
    eqs = extreme_equilibria(a, b)
    # the component {top row} x {y : y_left >= 2/3} has extreme points y = (1, 0), (2/3, 1/3);
    # and the isolated mixed equilibrium ((0, 1/3, 2/3), (1/3, 2/3))
    want = [([1, 0, 0], [1, 0]), ([1, 0, 0], [2 / 3, 1 / 3]), ([0, 1 / 3, 2 / 3], [1 / 3, 2 / 3])]
    assert len(eqs) == 3
    for x, y in want:
        assert any(np.abs(ex - x).max() <= TOL and np.abs(ey - y).max() <= TOL for ex, ey in eqs)
    sol = solve_bimatrix(a[None], b[None])
    assert sol.degenerate[0] and sol.num_eq[0] == 3
    assert sol.eq_row[0, 0].tolist() == [1.0, 0.0, 0.0]  # pure ones first


def test_nondegenerate_games_keep_support_enumerations_list_and_order():
    rng = np.random.default_rng(SEED + 1)
    a = rng.uniform(-1, 1, (50, 3, 3))
    b = rng.uniform(-1, 1, (50, 3, 3))
    sol = solve_bimatrix(a, b)
    assert not sol.degenerate.any()
    for g in range(50):
        assert same_set(sol.equilibria(g), extreme_equilibria(a[g], b[g]))
