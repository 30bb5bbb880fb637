"""Metrics, the Bayesian posterior, agents and the text interface (quick set)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from distbench.games.fog import metrics as M
from distbench.games.fog.agents import AGENTS, Posterior, make_agent
from distbench.games.fog.play import GameSession, play_scripted
from distbench.games.fog.rules import Rules, valid_power_vectors
from distbench.games.fog.text import MockLLMAgent, parse_answer, render_observation
from distbench.llm.base import Response


def test_quick_perfect_forecaster_has_zero_brier_and_log_loss():
    truth = np.array([1, 3, 5, 2])
    beliefs = M.one_hot(truth)
    assert M.brier(beliefs, truth) == 0.0
    assert M.log_loss(beliefs, truth) == pytest.approx(0.0, abs=1e-9)
    assert M.belief_calibration_error(beliefs, truth) == 0.0


def test_quick_confidently_wrong_forecaster_has_brier_two():
    truth = np.array([1, 2])
    assert M.brier(M.one_hot(np.array([2, 3])), truth) == pytest.approx(2.0)


def test_quick_calibrated_synthetic_forecaster_has_near_zero_calibration_error():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=200_000)
    y = rng.uniform(size=p.size) < p
    assert M.calibration_error(p, y) < 0.01
    assert M.calibration_error(np.full(1000, 0.9), np.zeros(1000)) == pytest.approx(0.9)


def test_quick_entropy_confidence_and_information_gain():
    flat = np.full(5, 0.2)
    sure = np.array([0, 0, 1.0, 0, 0])
    assert M.entropy_bits(flat) == pytest.approx(np.log2(5))
    assert M.entropy_bits(sure) == 0.0
    assert M.confidence(flat) == pytest.approx(0.2)
    assert M.information_gain(flat, sure) == pytest.approx(np.log2(5))


def test_quick_tom_delta_and_uncertainty_reduction():
    assert M.tom_delta(np.array(["hold", "move"]), np.array(["hold", "hold"])) == pytest.approx(0.5)
    assert M.uncertainty_reduction(np.array([2.0, 1.0, 0.5])) == pytest.approx(0.75)
    assert np.isnan(M.uncertainty_reduction(np.array([0.0, 0.0])))


def test_quick_score_rate_ci_and_tier_gradient():
    rows = ([{"agent_a": "tier2", "agent_b": "tier1", "winner": "a"}] * 30
            + [{"agent_a": "tier1", "agent_b": "tier2", "winner": "b"}] * 25
            + [{"agent_a": "tier1", "agent_b": "tier2", "winner": "draw"}] * 5)
    (g,) = M.tier_gradient(rows)
    assert g["higher"] == "tier2" and g["games"] == 60
    assert g["score_rate"] == pytest.approx(57.5 / 60)
    assert g["ci_low"] < g["score_rate"] <= g["ci_high"] <= 1.0
    assert M.gradient_holds([g])


def test_quick_benchmark_metrics():
    assert M.scouting_value(np.array([1, 1, 0]), np.array([0, 1, 0])) == pytest.approx(1 / 3)
    assert M.belief_quality_vs_winning(np.array([0.1, 0.2, 0.9, 1.0]),
                                       np.array([1, 1, 0, 0])) > 0.9
    assert M.anti_calculability(np.array([0.3, 0.5, 0.9]), np.array([0.0, 0.1, 0.3])) > 0


@pytest.mark.parametrize("seed", range(5))
def test_quick_posterior_is_a_distribution_with_zero_mass_on_excluded_values(seed):
    s = GameSession(Rules(scout_range=9, scout_accuracy=0.5), (make_agent("tier3"), make_agent("tier1")),
                    seed, 0, "g")
    while not s.done:
        obs = s.observations()
        post = Posterior(5)
        post.update(obs[0])
        marg = post.marginals()
        assert np.allclose(marg.sum(axis=1), 1.0) and (marg >= 0).all()
        for rev in obs[0].reveals:
            outside = [v for v in range(1, 6) if not rev.low <= v <= rev.high]
            assert all(marg[rev.enemy, v - 1] == 0 for v in outside)
        truth = np.array(s.true_powers[1])
        assert all(marg[j, truth[j] - 1] > 0 for j in range(5))  # never rules out the truth
        s.play_turn()


def test_quick_posterior_prior_matches_the_power_rule():
    marg = Posterior(5).marginals()
    v = valid_power_vectors(5)
    assert np.allclose(marg, (v[:, :, None] == np.arange(1, 6)).mean(axis=0))
    assert np.allclose(marg, 0.2)  # symmetric rule: the prior marginal is flat


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_quick_every_tier_reports_valid_beliefs_and_one_order_per_force(name):
    s = play_scripted(Rules(max_turns=6), name, "tier2", 3, 0)
    for rec in s.records:
        if rec.player == 0:
            b = rec.report.beliefs
            assert b.shape == (5, 5) and np.allclose(b.sum(axis=1), 1.0)
            assert len(rec.report.orders) == 5 and 0 <= rec.report.confidence <= 1


def test_quick_bayesian_beliefs_beat_flat_beliefs():
    briers = {name: [] for name in ("tier2", "tier3")}
    for seed in range(4):
        for name in briers:
            s = play_scripted(Rules(), name, "tier2", seed, 0)
            for rec in s.records:
                if rec.player == 0:
                    briers[name].append(M.brier(rec.report.beliefs, np.array(s.true_powers[1])))
    assert np.mean(briers["tier3"]) < np.mean(briers["tier2"])


@pytest.mark.parametrize("seed", range(3))
def test_quick_mock_llm_agent_plays_through_the_text_interface_like_its_strategy(seed):
    direct = play_scripted(Rules(), "tier3", "tier2", seed, 0)
    mock = play_scripted(Rules(), MockLLMAgent(make_agent("tier3")), "tier2", seed, 0)
    assert direct.game.winner == mock.game.winner and direct.game.turn == mock.game.turn
    assert all(r.report.status == "ok" and r.report.raw_text for r in mock.records if r.player == 0)


def _obs():
    return GameSession(Rules(), (make_agent("tier1"), make_agent("tier1")), 0, 0, "g").observations()[0]


def test_quick_rendered_observation_never_shows_enemy_powers():
    s = GameSession(Rules(), (make_agent("tier1"), make_agent("tier1")), 0, 0, "g")
    text = render_observation(s.observations()[0])
    enemy_lines = [line for line in text.splitlines() if line.startswith("  E")]
    assert len(enemy_lines) == 5 and not any("power" in line for line in enemy_lines)


@pytest.mark.parametrize("text,status", [
    (None, "call_failed"), ("no json here", "no_json"), ('{"orders": 3}', "bad_orders"),
    ('{"orders": {"F0": "fly"}}', "bad_orders"), ('{"orders": {"F9": "hold"}}', "bad_orders"),
    ('{"orders": {"F0": "move S"}}', "bad_beliefs"),
    ('{"orders": {"F0": "move S"}, "beliefs": {"E0": [1, 0, 0]}}', "bad_beliefs"),
    ('{"orders": {"F0": "move S"}, "beliefs": {"E0": [0.9, 0.9, 0, 0, 0]}}', "bad_beliefs"),
])
def test_quick_invalid_answers_hold_or_drop_beliefs_with_the_reason(text, status):
    orders, report = parse_answer(text, _obs())
    assert report.status == status
    if status != "bad_beliefs":
        assert all(o == ("hold", None) for o in orders)
    else:
        assert orders[0] == ("move", "S") and report.beliefs is None


def test_quick_valid_answer_parses_orders_beliefs_and_predictions():
    answer = {"orders": {"F0": "charge S", "F1": "scout E3", "F2": "fortify"},
              "beliefs": {f"E{j}": [0.2, 0.2, 0.2, 0.2, 0.2] for j in range(5)},
              "predictions": {"E0": "move"}, "objective": "dominate", "confidence": 0.4}
    orders, report = parse_answer("sure: " + json.dumps(answer) + " done", _obs())
    assert report.status == "ok"
    assert orders[:4] == [("charge", "S"), ("scout", 3), ("fortify", None), ("hold", None)]
    assert report.predicted_actions[0] == "move" and report.confidence == 0.4


def test_quick_llm_agent_failed_call_holds():
    from distbench.games.fog.text import LLMAgent

    agent = LLMAgent("m", "chat", 64, 0.0)
    orders, report = agent.finish(Response(text=None, status="failed", error="x"), _obs())
    assert report.status == "call_failed" and set(orders) == {("hold", None)}
