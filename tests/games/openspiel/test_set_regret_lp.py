"""``set_regret`` of Leduc poker and Liar's Dice by the sequence form (issue 33): the widest
equilibrium (an LP on each player's optimal face) is an exact equilibrium that plays every
move some equilibrium plays; a move's set_regret is never above its regret against the stored
reference, and is 0 for the moves of that equilibrium; on Kuhn poker the same method bounds
the exact least regret from above."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspiel")

from distbench.games.openspiel.reference import (  # noqa: E402
    as_pyspiel,
    kuhn_policy,
    reference,
    sampled_set_regret,
)
from distbench.games.openspiel.sequence_form import (  # noqa: E402
    sequence_form,
    widest_equilibrium,
)
from distbench.games.openspiel.spiel import load_game, pyspiel  # noqa: E402


def _reached(game, policy) -> set[str]:
    """Information states some history of which the policy reaches, its mover's own plays
    with weight 1e-3 at least, its opponent's too (an equilibrium leaves states its player
    never reaches unconstrained, and the LP's precision, about 1e-9 in a plan's weights, makes
    a regret at a state of weight w exact to about 1e-9 / w)."""
    out: set[str] = set()
    stack = [(game.new_initial_state(), [1.0, 1.0])]
    while stack:
        state, reach = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend((state.child(a), reach) for a, _ in state.chance_outcomes())
            continue
        player = state.current_player()
        key = state.information_state_string(player)
        if min(reach) >= 1e-3:
            out.add(key)
        for a in state.legal_actions():
            child = list(reach)
            child[player] *= policy[key].get(a, 0.0)
            stack.append((state.child(a), child))
    return out


def _check(game_string: str) -> int:
    ref = reference(game_string)
    game = load_game(game_string)
    widest, value = widest_equilibrium(sequence_form(game), ref.policy)
    conv = pyspiel().nash_conv(game, as_pyspiel(widest, ref.infostates))
    assert conv == pytest.approx(0.0, abs=1e-6)
    assert set(ref.set_regret) == set(ref.infostates)
    reached = _reached(game, widest)
    zeros = 0
    for key, row in ref.set_regret.items():
        regret = {a: max(ref.q[key].values()) - v for a, v in ref.q[key].items()}
        for a, least in row.items():
            assert 0.0 <= least <= regret[a] + 1e-9, (key, a)
            if widest[key].get(a, 0.0) >= 1e-3 and key in reached:
                assert least <= 1e-4, (key, a, least)
                zeros += 1
    return zeros


def test_leduc_set_regret_is_at_most_the_regret_and_zero_on_the_widest_equilibrium():
    assert _check("leduc_poker") > 400


def test_liars_dice_set_regret_is_at_most_the_regret_and_zero_on_the_widest_equilibrium():
    assert _check("liars_dice(dice_sides=4)") > 50


def test_on_kuhn_poker_the_method_bounds_the_exact_least_regret_from_above():
    ref = reference("kuhn_poker")
    game = load_game("kuhn_poker")
    bound = sampled_set_regret(game, ref)
    widest, value = widest_equilibrium(sequence_form(game), ref.policy)
    assert value == pytest.approx(-1 / 18, abs=1e-9)
    worst = 0.0
    for key, row in ref.set_regret.items():  # Kuhn's exact least regrets
        for a, exact in row.items():
            assert bound[key][a] >= exact - 1e-6, (key, a)
            worst = max(worst, bound[key][a] - exact)
    assert worst <= 0.15
    # every move that some Kuhn equilibrium plays, the widest one plays
    for alpha in np.linspace(0.0, 1 / 3, 5):
        for key, probs in kuhn_policy(alpha).items():
            for a, p in probs.items():
                assert p == 0.0 or widest[key][a] >= 1e-4, (alpha, key, a)


def test_leduc_rows_carry_the_set_regret():
    from distbench.games.openspiel.plan import OpenSpielShard
    from distbench.games.openspiel.runner import run_shard
    from distbench.llm.dummy import DummyBackend
    from distbench.llm.registry import make_spec

    dummy = make_spec("dummy")
    shard = OpenSpielShard(
        shard_id="t", game="leduc_poker", mode="play", seed=33_0611, start=0, stop=6,
        player=dummy, opponent="random", seat_orders=(0, 1), llm_seed=1, temperature=1.0,
        max_tokens=None, mcts_simulations=20, specs=(dummy,), run_id="r")
    result = run_shard(shard, {dummy: DummyBackend(dummy)})
    moves = [m for m in result.tables["moves"][1].to_pylist() if m["action"] is not None]
    assert moves and all(m["set_regret"] is not None for m in moves)
    assert all(m["set_regret"] <= m["regret"] + 1e-9 for m in moves)
