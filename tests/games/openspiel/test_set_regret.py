"""Which equilibrium a regret is measured against, and the least regret over Kuhn poker's
whole equilibrium set (issue 33)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspiel")

from distbench.games.openspiel import reference as reference_mod  # noqa: E402
from distbench.games.openspiel.plan import OpenSpielShard  # noqa: E402
from distbench.games.openspiel.reference import (  # noqa: E402
    _action_values,
    as_pyspiel,
    kuhn_policy,
    reference,
)
from distbench.games.openspiel.runner import run_shard  # noqa: E402
from distbench.games.openspiel.spiel import load_game, pyspiel  # noqa: E402
from distbench.llm.dummy import DummyBackend  # noqa: E402
from distbench.llm.registry import make_spec  # noqa: E402

DUMMY = make_spec("dummy")


def _regrets(policy, game):
    q = _action_values(game, policy)
    return {k: {a: max(0.0, max(v.values()) - x) for a, x in v.items()} for k, v in q.items()}


def test_every_member_of_the_family_is_an_equilibrium():
    ref = reference("kuhn_poker")
    game = load_game("kuhn_poker")
    for alpha in np.linspace(0.0, 1 / 3, 7):
        conv = pyspiel().nash_conv(game, as_pyspiel(kuhn_policy(alpha), ref.infostates))
        assert conv == pytest.approx(0.0, abs=1e-12), alpha


def test_set_regret_is_the_least_regret_over_a_fine_grid_of_the_equilibrium_set():
    ref = reference("kuhn_poker")
    game = load_game("kuhn_poker")
    grid = [_regrets(kuhn_policy(alpha), game) for alpha in np.linspace(0.0, 1 / 3, 601)]
    grid.append(_regrets(kuhn_policy(1e-12), game))  # the limit at 0 from above
    differ = 0
    for key, row in ref.set_regret.items():
        for a, least in row.items():
            best = min(g[key][a] for g in grid)
            assert least == pytest.approx(best, abs=1e-6), (key, a)
            regret = max(ref.q[key].values()) - ref.q[key][a]
            assert least <= regret + 1e-9, (key, a)
            differ += regret - least > 1e-3
    assert len(ref.set_regret) == 12
    assert differ > 0  # the reference equilibrium alone overstates some regrets


def test_rows_name_the_reference_and_carry_the_set_regret():
    ref = reference("kuhn_poker")
    alpha = ref.policy["0"][1]
    assert f"alpha = {alpha:.4f}" in ref.name and "CFR+" in ref.name
    shard = OpenSpielShard(
        shard_id="t", game="kuhn_poker", mode="play", seed=33_0605, start=0, stop=30,
        player=DUMMY, opponent="random", seat_orders=(0, 1), llm_seed=1, temperature=1.0,
        max_tokens=None, mcts_simulations=20, specs=(DUMMY,), run_id="r")
    result = run_shard(shard, {DUMMY: DummyBackend(DUMMY)})
    matches = result.tables["matches"][1].to_pylist()
    assert {m["reference_name"] for m in matches} == {ref.name}
    moves = [m for m in result.tables["moves"][1].to_pylist() if m["action"] is not None]
    assert moves and all(m["set_regret"] is not None for m in moves)
    assert all(m["set_regret"] <= m["regret"] + 1e-9 for m in moves)
    assert any(m["set_regret"] < m["regret"] - 1e-3 for m in moves)


def test_other_games_name_their_reference_and_leave_set_regret_null():
    ttt = reference_mod.compute("tic_tac_toe")
    assert ttt.name == "minimax values (unique)" and not ttt.set_regret
    rps = reference_mod.compute("matrix_rps")
    assert rps.kind == "equilibrium" and not rps.set_regret
    assert rps.name.startswith("equilibrium: CFR+") and "alpha" not in rps.name
