"""Playing matches: Leduc and Liar's Dice end to end with the dummy, forfeits are rows and
never a substituted move, chance is deterministic by seed, MCTS plays tic-tac-toe."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

pytest.importorskip("pyspiel")

from distbench.games.openspiel.plan import OpenSpielShard  # noqa: E402
from distbench.games.openspiel.runner import run_shard  # noqa: E402
from distbench.llm.base import Backend, BackendSpec, Request, Response  # noqa: E402
from distbench.llm.dummy import DummyBackend  # noqa: E402
from distbench.llm.registry import make_spec  # noqa: E402

DUMMY = make_spec("dummy")


def _shard(game: str, opponent, games: int = 5, player: BackendSpec = DUMMY,
           seed: int = 3) -> OpenSpielShard:
    specs = (player,) if not isinstance(opponent, BackendSpec) or opponent == player else (
        player, opponent)
    return OpenSpielShard(
        shard_id="t", game=game, mode="play", seed=seed, start=0, stop=games, player=player,
        opponent=opponent, seat_orders=(0, 1), llm_seed=1, temperature=1.0, max_tokens=None,
        mcts_simulations=20, specs=specs, run_id="r")


class _Scripted(Backend):
    """A model that answers from a list of texts, in turn (a unit test's stand-in)."""

    in_process = True

    def __init__(self, spec: BackendSpec, texts: Sequence[str]) -> None:
        super().__init__(spec)
        self.texts = list(texts)
        self.n = 0

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for _ in requests:
            out.append(Response(text=self.texts[self.n % len(self.texts)]))
            self.n += 1
        return out


@pytest.mark.parametrize("game", ["leduc_poker", "liars_dice(numdice=1,dice_sides=4)"])
def test_leduc_and_liars_dice_play_end_to_end_with_the_dummy(game):
    result = run_shard(_shard(game, "random", 4), {DUMMY: DummyBackend(DUMMY)})
    matches = result.tables["matches"][1].to_pylist()
    moves = result.tables["moves"][1].to_pylist()
    assert len(matches) == 8
    assert all(m["outcome_a"] in ("win", "draw", "loss") for m in matches)
    assert all(m["returns"] is not None and sum(m["returns"]) == pytest.approx(0) for m in matches)
    assert {m["reference"] for m in matches} == {"equilibrium"}
    mine = [m for m in moves if m["is_a"]]
    assert mine and all(m["parse_status"] == "ok" and m["raw_text"].startswith("Action: ")
                        for m in mine)
    assert all(m["regret"] is not None and m["regret"] >= 0 for m in moves)


def test_an_unparsable_answer_forfeits_with_its_raw_text_and_no_move_is_substituted():
    spec = BackendSpec("scripted-test", "junk")
    backend = _Scripted(spec, ["I think I should probably fold here"])
    result = run_shard(_shard("kuhn_poker", "random", 5, player=spec), {spec: backend})
    matches = result.tables["matches"][1].to_pylist()
    moves = result.tables["moves"][1].to_pylist()
    assert [m["outcome_a"] for m in matches] == ["forfeit"] * 10
    assert all(m["quality_a"] == 0.0 and m["returns"] is None for m in matches)
    forfeits = [m for m in moves if m["is_a"]]
    assert len(forfeits) == 10  # each match ends at the model's first answer
    for m in forfeits:
        assert m["parse_status"] == "no_answer"
        assert m["raw_text"] == "I think I should probably fold here"
        assert m["action"] is None and m["action_name"] is None
    # after the forfeit nothing more was played in the match
    last = {}
    for m in moves:
        last[m["match_id"]] = m
    assert all(m["is_a"] and m["action"] is None for m in last.values())
    assert result.stats["forfeits"] == 10


def test_an_illegal_number_forfeits_and_a_named_action_is_a_move():
    spec = BackendSpec("scripted-test", "names")
    backend = _Scripted(spec, ["Action: 3", "Bet"])
    result = run_shard(_shard("kuhn_poker", "random", 3, player=spec), {spec: backend})
    moves = [m for m in result.tables["moves"][1].to_pylist() if m["is_a"]]
    statuses = {m["parse_status"] for m in moves}
    assert "out_of_range" in statuses
    assert any(m["parse_status"] == "ok" and m["action_name"] == "Bet" for m in moves)


def test_chance_is_deterministic_by_seed_and_the_same_deal_in_both_seat_orders():
    one = run_shard(_shard("kuhn_poker", "random", 6), {DUMMY: DummyBackend(DUMMY)})
    two = run_shard(_shard("kuhn_poker", "random", 6), {DUMMY: DummyBackend(DUMMY)})
    other = run_shard(_shard("kuhn_poker", "random", 6, seed=4), {DUMMY: DummyBackend(DUMMY)})
    a = one.tables["matches"][1]
    assert a.equals(two.tables["matches"][1])
    assert one.tables["moves"][1].equals(two.tables["moves"][1])
    deals = a.column("chance_outcomes").to_pylist()
    assert deals[0::2] == deals[1::2]  # order 0 and order 1 of each match
    assert deals != other.tables["matches"][1].column("chance_outcomes").to_pylist()


def test_mcts_plays_tic_tac_toe_and_self_play_uses_one_model():
    result = run_shard(_shard("tic_tac_toe", "mcts", 2), {DUMMY: DummyBackend(DUMMY)})
    matches = result.tables["matches"][1].to_pylist()
    assert {m["player_b"] for m in matches} == {"mcts"}
    selfplay = run_shard(_shard("kuhn_poker", DUMMY, 2), {DUMMY: DummyBackend(DUMMY)})
    moves = selfplay.tables["moves"][1].to_pylist()
    assert {m["player_label"] for m in moves} == {"dummy:random"}
    assert {m["is_a"] for m in moves} == {True, False}


def test_a_game_without_rules_text_plays_with_open_spiels_description_and_a_warning(caplog):
    from distbench.games.openspiel.command import check_game

    with caplog.at_level("WARNING"):
        check_game("matrix_rps", "random", "play")
    assert "no rules text of distbench's own" in caplog.text
    result = run_shard(_shard("matrix_rps", "random", 3), {DUMMY: DummyBackend(DUMMY)})
    matches = result.tables["matches"][1].to_pylist()
    assert len(matches) == 6 and all(m["returns"] is not None for m in matches)


def test_another_model_is_an_opponent_with_its_own_backend():
    other = make_spec("dummy", "other")
    shard = _shard("kuhn_poker", other, 3)
    result = run_shard(shard, {DUMMY: DummyBackend(DUMMY), other: DummyBackend(other)})
    matches = result.tables["matches"][1].to_pylist()
    assert {m["player_b"] for m in matches} == {"dummy:other"}
    assert {m["seat_a"] for m in matches} == {0, 1}


@pytest.mark.parametrize("table, key", [
    ({"games": ["nope"]}, "games"),
    ({"games": ["kuhn_poker"], "opponents": ["mcts"]}, "games"),
    ({"opponents": ["smart"]}, "opponents"),
    ({"mode": "mixed"}, "mode"),
    ({"matchez": 3}, "matchez"),
])
def test_a_bad_openspiel_section_is_one_error_naming_the_key(table, key):
    from distbench.games.openspiel.command import section
    from distbench.games.section import SectionError

    with pytest.raises(SectionError) as err:
        section(table)
    assert key in str(err.value) and "\n" not in str(err.value)


def test_the_prompt_shows_the_information_state_the_board_and_numbered_action_names():
    from distbench.games.openspiel.rules import RULES, prompt
    from distbench.games.openspiel.spiel import info_string, load_game, observation

    state = load_game("tic_tac_toe").new_initial_state()
    state.apply_action(4)
    state.apply_action(0)
    names = [state.action_to_string(0, a) for a in state.legal_actions()]
    text = prompt(RULES["tic_tac_toe"], 0, info_string(state, 0), names,
                  observation=observation(state, 0))
    assert "4, 0\n" in text and "o..\n.x.\n..." in text
    assert "Action 1: x(0,1)" in text and "Choose one of your 7 actions" in text
    kuhn = load_game("kuhn_poker").new_initial_state()
    kuhn.apply_action(0)
    kuhn.apply_action(1)
    assert observation(kuhn, 0) is None and info_string(kuhn, 0) == "0"


def test_another_models_forfeit_is_still_a_win():
    spec, other = BackendSpec("scripted-test", "good"), BackendSpec("scripted-test", "junk")
    shard = _shard("kuhn_poker", other, 3, player=spec)
    result = run_shard(shard, {spec: _Scripted(spec, ["Action: 1"]),
                               other: _Scripted(other, ["banana ??"])})
    matches = result.tables["matches"][1].to_pylist()
    assert [m["outcome_a"] for m in matches] == ["win"] * 6
    assert all(m["quality_a"] == 1.0 for m in matches)
