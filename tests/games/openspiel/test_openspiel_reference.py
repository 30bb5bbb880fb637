"""Exact references: the equilibrium is one (NashConv), NashConv agrees with OpenSpiel's own,
the equilibrium and minimax players have regret 0, and references are cached."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402

from distbench.games.openspiel import reference as reference_mod  # noqa: E402
from distbench.games.openspiel.plan import OpenSpielShard  # noqa: E402
from distbench.games.openspiel.policy import nash_conv  # noqa: E402
from distbench.games.openspiel.reference import reference  # noqa: E402
from distbench.games.openspiel.runner import run_shard  # noqa: E402
from distbench.games.openspiel.spiel import load_game  # noqa: E402
from distbench.llm.dummy import DummyBackend  # noqa: E402
from distbench.llm.registry import make_spec  # noqa: E402

DUMMY = make_spec("dummy")


def _shard(game: str, opponent: str, games: int = 10) -> OpenSpielShard:
    return OpenSpielShard(
        shard_id="t", game=game, mode="play", seed=3, start=0, stop=games, player=DUMMY,
        opponent=opponent, seat_orders=(0, 1), llm_seed=1, temperature=1.0, max_tokens=None,
        mcts_simulations=20, specs=(DUMMY,), run_id="r")


def test_the_kuhn_equilibrium_has_nash_conv_below_1e_3():
    ref = reference("kuhn_poker")
    assert ref.kind == "equilibrium" and len(ref.infostates) == 12
    assert ref.nash_conv < 1e-3
    assert nash_conv(ref, ref.policy) < 1e-3


def test_uniform_random_nash_conv_matches_open_spiel():
    ref = reference("kuhn_poker")
    game = load_game("kuhn_poker")
    expected = exploitability.nash_conv(game, os_policy.UniformRandomPolicy(game))
    assert nash_conv(ref, {}) == pytest.approx(expected, abs=1e-12)  # empty table: uniform
    assert expected == pytest.approx(0.9166666, abs=1e-6)


def test_the_equilibrium_player_has_regret_0_on_every_move():
    result = run_shard(_shard("kuhn_poker", "equilibrium", 40), {DUMMY: DummyBackend(DUMMY)})
    moves = result.tables["moves"][1].to_pylist()
    eq = [m for m in moves if not m["is_a"]]
    assert len(eq) >= 80
    assert all(m["regret"] is not None and m["regret"] < 1e-3 for m in eq)
    # the random dummy makes some mistakes against it
    assert max(m["regret"] for m in moves if m["is_a"]) > 0.1


def test_the_minimax_player_never_loses_tic_tac_toe_and_has_regret_0():
    result = run_shard(_shard("tic_tac_toe", "equilibrium", 10), {DUMMY: DummyBackend(DUMMY)})
    matches = result.tables["matches"][1].to_pylist()
    assert len(matches) == 20 and {m["reference"] for m in matches} == {"minimax"}
    assert all(m["outcome_a"] in ("loss", "draw") for m in matches)  # the dummy never wins
    moves = result.tables["moves"][1].to_pylist()
    assert all(m["regret"] == 0.0 for m in moves if not m["is_a"])


def test_a_reference_is_computed_once_and_read_back_from_the_disk_cache(monkeypatch):
    first = reference("kuhn_poker")
    monkeypatch.setattr(reference_mod, "_MEMO", {})
    monkeypatch.setattr(reference_mod, "compute", lambda game: pytest.fail("recomputed"))
    again = reference("kuhn_poker")
    assert again.q == first.q and again.policy == first.policy
    assert again.infostates == first.infostates


def test_a_game_too_large_has_no_reference_and_null_regrets(monkeypatch):
    monkeypatch.setattr(reference_mod, "MAX_INFOSTATES", 10)
    ref = reference_mod.compute("kuhn_poker")
    assert ref.kind == "none" and not ref.q


def test_a_long_game_has_no_reference_at_once():
    ref = reference_mod.compute("chess")
    assert ref.kind == "none" and "moves" in ref.detail
