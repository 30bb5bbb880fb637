"""GAMA-Bench's score of each game on small, hand-computed examples (scoring.py), and the
rules' round records scored the same way."""

from __future__ import annotations

import random

import pytest

from distbench.games.gama import rules
from distbench.games.gama.rules import (
    AuctionParams,
    BarParams,
    BattleParams,
    DinerParams,
    DollarParams,
    GoodsParams,
    GuessingParams,
    PirateParams,
)
from distbench.games.gama.scoring import gama_score


@pytest.mark.parametrize("ratio, expected", [(2 / 3, 75.0), (1.0, 50.0), (1.5, 25.0)])
def test_guessing(ratio, expected):
    # round means 30 and 20: S = 25, D = 100
    rounds = [{"responses": [30, 30, 30]}, {"responses": [0, 0, 60]}]
    assert gama_score("guessing", GuessingParams(players=3, ratio=ratio), rounds) == pytest.approx(expected)


def test_bar():
    # go shares 1.0 and 0.6 against 0.6: S = 0.2, R = 0.6
    rounds = [{"responses": ["go"] * 5}, {"responses": ["go", "stay", "go", "stay", "go"]}]
    assert gama_score("bar", BarParams(players=5), rounds) == pytest.approx(100 * 0.4 / 0.6)


def test_dollar_and_its_floor():
    p = DollarParams(players=4, golds=100)
    rounds = [{"responses": [25, 25, 25, 25]}, {"responses": [50, 50, 50, 50]}]
    assert gama_score("dollar", p, rounds) == pytest.approx(50.0)  # S = 12.5 of G = 25
    assert gama_score("dollar", p, [{"responses": [100] * 4}]) == 0.0  # (25 - 75) < 0


def test_goods():
    rounds = [{"responses": [10, 0]}, {"responses": [20, 10]}]  # means 5, 15
    assert gama_score("goods", GoodsParams(players=2), rounds) == pytest.approx(50.0)


def test_diner_counts_only_exactly_cheap_as_cheap():
    rounds = [{"responses": ["cheap", "costly", "cheap_dish", "cheap"]},
              {"responses": ["costly"] * 4}]
    assert gama_score("diner", DinerParams(players=4), rounds) == pytest.approx(75.0)


def test_auction():
    rounds = [{"responses": [50, 10], "valuations": [100, 0]},    # 0.5, max(0, -10) -> 0.25
              {"responses": [120, 25], "valuations": [100, 50]}]  # 0, 0.5 -> 0.25
    assert gama_score("auction", AuctionParams(players=2), rounds) == pytest.approx(25.0)


def _shot(shooter, target, out=False):
    if target is None:
        return {"player_shooting": str(shooter), "shot_player": "null", "action": "miss", "out": False}
    return {"player_shooting": str(shooter), "shot_player": str(target), "action": "shoot", "out": out}


def test_battle_counts_aims_at_the_strongest_other():
    p = BattleParams(players=3)
    # right (2 is the strongest other), a deliberate miss (wrong), the strongest shooting the
    # weakest (wrong: it should aim at 1)
    wrong = [_shot(0, 2), _shot(1, None), _shot(2, 0)]
    assert gama_score("battle", p, wrong, round_id=4) == pytest.approx(100 / 3)
    right = [_shot(0, 2), _shot(1, None), _shot(2, 1, out=True)]
    assert gama_score("battle", p, right, round_id=4) == pytest.approx(200 / 3)
    # GAMA divides the count after round round_id - 1 by round_id - 1
    assert gama_score("battle", p, right, round_id=3) == pytest.approx(50.0)
    # after 2 is eliminated, 1 is the strongest other for 0
    gone = [_shot(0, 2, out=True), _shot(1, 0), _shot(0, 1)]
    assert gama_score("battle", p, gone) == pytest.approx(100.0)


def test_pirate():
    p = PirateParams(players=3)
    rounds = [
        # NE for 3 = [99, 0, 1]: L1 = 2; both zero-gold voters reject: correct
        {"gold_distribution": [100, 0, 0], "responses": ["accept", "reject", "reject"]},
        # NE for 2 = [100, 0]: L1 = 100; the voter with 50 accepts: correct
        {"gold_distribution": [50, 50], "responses": ["accept", "accept"]},
    ]
    assert gama_score("pirate", p, rounds) == pytest.approx((200 - 51) / 200 * 50 + 50)


def test_pirate_vote_rule_is_gamas():
    # one gold: accepting is right at even positions only, nothing is right at odd ones
    assert rules.vote_is_correct([98, 1, 1], 2, "accept")
    assert not rules.vote_is_correct([98, 1, 1], 1, "accept")
    assert not rules.vote_is_correct([98, 1, 1], 1, "reject")
    assert rules.vote_is_correct([90, 10, 0], 1, "accept")
    assert rules.ne_plan(10) == [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]


def test_no_round_is_an_error():
    with pytest.raises(ValueError, match="no round"):
        gama_score("goods", GoodsParams(), [])
    with pytest.raises(ValueError, match="'responses'"):
        gama_score("goods", GoodsParams(), [{"total_tokens": 3}])


def test_auction_valuations_are_gamas_draws():
    p = AuctionParams()
    for t in (1, 2, 20):
        random.seed(42 + t - 1)  # what GAMA does, on the global generator
        assert rules.valuations(p, t) == random.sample(range(0, 210, 10), 10)


def test_rules_play_a_guessing_game_and_score_it():
    state = rules.new_game("guessing", GuessingParams(players=3, rounds=2))
    state, first = rules.resolve_round(state, {0: 30, 1: 30, 2: 30})
    assert first.winners == (0, 1, 2) and first.record["mean_ratio"] == pytest.approx(20)
    state, second = rules.resolve_round(state, {0: 0, 1: 0, 2: 60})
    assert second.winners == (0, 1) and second.done and state.done
    assert gama_score("guessing", state.params, state.records) == pytest.approx(75.0)
    with pytest.raises(ValueError, match="over"):
        rules.resolve_round(state, {0: 1, 1: 1, 2: 1})


def test_rules_battle_takes_injected_hits_and_ends_with_one_survivor():
    state = rules.new_game("battle", BattleParams(players=3), seed=7)
    assert rules.actors(state) == [0]
    state, out = rules.resolve_round(state, {0: 2}, hits=True)
    assert out.survivors == (0, 1) and rules.actors(state) == [1]
    state, out = rules.resolve_round(state, {1: None})
    assert out.record["action"] == "miss" and rules.actors(state) == [0]
    state, out = rules.resolve_round(state, {0: 1}, hits=True)
    assert out.done and out.winners == (0,)
    assert gama_score("battle", state.params, state.records) == pytest.approx(200 / 3)


def test_rules_battle_draws_are_seeded():
    def play(seed):
        state = rules.new_game("battle", BattleParams(players=4), seed=seed)
        hits = []
        while not state.done:
            shooter = rules.actors(state)[0]
            target = max(s for s in state.alive if s != shooter)
            state, out = rules.resolve_round(state, {shooter: target})
            hits.append(out.extra["hit"])
        return hits

    assert play(3) == play(3)


def test_rules_pirate_plan_passes_with_half():
    state = rules.new_game("pirate", PirateParams(players=4))
    with pytest.raises(ValueError, match="4 pirates"):
        rules.resolve_round(state, {0: [100, 0, 0], 1: "accept", 2: "accept", 3: "accept"})
    state, out = rules.resolve_round(state, {0: [97, 0, 1, 2], 1: "reject", 2: "reject", 3: "reject"})
    assert not out.extra["passed"] and state.alive == (1, 2, 3) and not state.done
    state, out = rules.resolve_round(state, {1: [99, 0, 1], 2: "reject", 3: "accept"})
    assert out.extra["passed"] and out.done and out.payoffs == {1: 99.0, 2: 0.0, 3: 1.0}
    assert rules.move_distance(rules.new_game("pirate", PirateParams(players=4)), 0,
                               [97, 0, 1, 2]) == pytest.approx(2 + 2)  # NE [99, 0, 1, 0]


def test_make_params_reads_options_and_names_bad_ones():
    p = rules.make_params("guessing", {"ratio": "1/2", "players": "5"})
    assert p.ratio == 0.5 and p.ratio_str == "1/2" and p.players == 5
    assert rules.make_params("bar", {"ratio": "70%"}).ratio == pytest.approx(0.7)
    bar = rules.make_params("bar", {"capacity": "0.5", "feedback": "explicit"})
    assert (bar.ratio, bar.ratio_str, bar.mode) == (0.5, "50%", "explicit")
    assert rules.make_params("goods", {"ratio": "1.5"}).multiplier == 1.5
    assert rules.make_params("auction", {"price": "second"}).mode == "second"
    assert rules.make_params("auction", {"mode": "second_price"}).variant == "second"
    assert rules.hit_rate(rules.make_params("battle", {"hit_rate": "30", "hit_step": "7"}), 2) == 44
    with pytest.raises(ValueError, match="--option colour"):
        rules.make_params("bar", {"colour": "red"})
    with pytest.raises(ValueError, match="--option players=x"):
        rules.make_params("bar", {"players": "x"})
    with pytest.raises(ValueError, match="--game chess"):
        rules.make_params("chess")


def test_equilibria():
    assert rules.equilibrium("guessing")["answer"] == 0
    assert rules.equilibrium("goods")["answer"] == 0
    assert rules.equilibrium("diner")["answer"] == "costly"  # 20 - 15 > (20 - 10) / 10
    assert rules.equilibrium("bar") is None
    assert rules.equilibrium("auction", AuctionParams(mode="second"))["answer"] == "valuation"
