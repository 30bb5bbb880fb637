"""The v10 agent API: action and objective distributions and their scores, MockLLMAgent by
strategy name, users' agent classes (module:Class) in runs and tournaments, the event fields."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import duckdb
import numpy as np
import pytest

from distbench.games.fog import metrics as M
from distbench.games.fog.agents import (
    ACTION_KINDS,
    OBJECTIVES,
    Agent,
    AgentReport,
    BayesianHunter,
    UserAgent,
    load_agent_class,
    make_agent,
)
from distbench.games.fog.plan import FogRunConfig, plan_fog_shards
from distbench.games.fog.play import GameSession, play_scripted
from distbench.games.fog.rules import HOLD, Deployment, Game, Rules
from distbench.games.fog.runner import run_shard
from distbench.games.fog.text import MockLLMAgent, parse_answer

# -- scores -----------------------------------------------------------------------------------


def test_quick_brier_and_log_loss_of_distributions_by_hand():
    probs = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    outcome = np.array([0, 2])
    # (0.5-1)^2 + 0.3^2 + 0.2^2 = 0.38; 0.1^2 + 0.1^2 + (0.8-1)^2 = 0.06
    assert M.brier_index(probs, outcome) == pytest.approx(0.22)
    assert M.log_loss_index(probs, outcome) == pytest.approx(-(np.log(0.5) + np.log(0.8)) / 2)
    assert M.brier_index(np.eye(3), np.array([0, 1, 2])) == 0.0
    assert M.log_loss_index(np.eye(3), np.array([0, 1, 2])) == 0.0
    assert M.brier_index(np.eye(3)[[1]], np.array([0])) == pytest.approx(2.0)
    assert np.isnan(M.brier_index(np.zeros((0, 3)), np.zeros(0)))


class FixedPredictor(Agent):
    """Holds everything; sure every enemy force holds; objective (0.5, 0.3, 0.2); own
    objective hunt_sovereign."""

    def observe_and_plan(self, player_id, observation, rng):
        k = observation.rules.num_forces
        acts = np.zeros((k, len(ACTION_KINDS)))
        acts[:, ACTION_KINDS.index("hold")] = 1.0
        beliefs = np.full((k, 5), 0.2)
        return [HOLD] * k, AgentReport(beliefs, (), "", [HOLD] * k, None, action_probs=acts,
                                       objective_probs=np.array([0.5, 0.3, 0.2]),
                                       objective="hunt_sovereign")


@pytest.fixture
def fixed_vs_tier2(monkeypatch):
    """Reports of one game FixedPredictor (seat a) vs tier2, through the runner."""
    import distbench.games.fog.runner as runner

    real = runner.make_agent
    monkeypatch.setattr(runner, "make_agent",
                        lambda name: UserAgent(name, FixedPredictor()) if name == "x:Fixed" else real(name))
    monkeypatch.setattr("distbench.games.fog.plan.check_agent", lambda name: name)
    cfg = FogRunConfig(pairings=(("x:Fixed", "tier2"),), num_games=1, max_turns=6,
                       both_seat_orders=False)
    (shard,) = plan_fog_shards(cfg, "r")
    result = run_shard(shard, {})
    return (result.tables["fog_reports"][1].to_pylist(),
            result.tables["fog_games"][1].to_pylist()[0])


def test_quick_action_and_objective_predictions_are_scored_by_hand(fixed_vs_tier2):
    reports, game = fixed_vs_tier2
    mine = [r for r in reports if r["player"] == "a"]
    theirs = [r for r in reports if r["player"] == "b"]
    assert mine and all(r["report_status"] == "ok" for r in reports)
    pairs = []
    for r in mine:
        living = [j for j, a in enumerate(r["enemy_alive"]) if a]
        # sure of hold: 0 for an actual hold, 2 otherwise; -ln 1 = 0 or -ln 1e-12
        expect = [0.0 if r["actual_actions"][j] == "hold" else 2.0 for j in living]
        assert r["action_brier"] == pytest.approx(np.mean(expect))
        assert r["action_log_loss"] == pytest.approx(
            np.mean([0.0 if e == 0 else -np.log(1e-12) for e in expect]))
        assert r["action_confidence"] == 1.0
        assert r["predicted_actions"] == ["hold" if a else "" for a in r["enemy_alive"]]
        # tier2 states dominate: (0.5)^2 + (0.3-1)^2 + 0.2^2 = 0.78; -ln 0.3
        assert r["actual_objective"] == "dominate" and r["predicted_objective"] == "hunt_sovereign"
        assert r["objective_probs"] == [0.5, 0.3, 0.2] and r["objective_confidence"] == 0.5
        assert r["objective_brier"] == pytest.approx(0.78)
        assert r["objective_log_loss"] == pytest.approx(-np.log(0.3))
        pairs += expect
    for r in theirs:  # tier2: (0.2, 0.6, 0.2) against our hunt_sovereign
        assert r["actual_objective"] == "hunt_sovereign"
        assert r["objective_brier"] == pytest.approx(0.8 ** 2 + 0.6 ** 2 + 0.2 ** 2)
        assert r["objective_log_loss"] == pytest.approx(-np.log(0.2))
        probs = np.array([row for row, a in zip(r["action_probs"], r["enemy_alive"], strict=True) if a])
        assert np.allclose(probs[:, ACTION_KINDS.index("move")], 0.5)
        assert all(row is None for row, a in zip(r["action_probs"], r["enemy_alive"], strict=True)
                   if not a)
    assert game["action_brier_a"] == pytest.approx(np.mean(pairs))  # over (turn, force) pairs
    assert game["objective_brier_a"] == pytest.approx(0.78)
    assert game["objective_log_loss_b"] == pytest.approx(-np.log(0.2))


def test_quick_tier1_objective_is_unscored_and_tiers_state_theirs():
    s = play_scripted(Rules(max_turns=5), "tier3", "tier1", 0, 0)
    for rec in s.records:
        rep = rec.report
        assert rep.objective_probs.shape == (3,) and np.isclose(rep.objective_probs.sum(), 1)
        assert rep.predicted_objective in OBJECTIVES
        rows = rep.action_probs[np.asarray(rec.enemy_alive)]
        assert np.allclose(rows.sum(axis=1), 1)
        assert rep.objective == ("" if rec.player == 1 else rep.objective)
        if rec.player == 0:
            assert rep.objective in ("dominate", "defend")
            assert rep.predicted_objective == OBJECTIVES[int(np.argmax(rep.objective_probs))]


# -- model answers ----------------------------------------------------------------------------


def _obs():
    return GameSession(Rules(), (make_agent("tier1"), make_agent("tier1")), 0, 0, "g").observations()[0]


BELIEFS = {f"E{j}": [0.2] * 5 for j in range(5)}


@pytest.mark.parametrize("extra,status", [
    ({"predictions": {"E0": {"move": 0.7, "Charge": 0.3}}, "objective": {"dominate": 1}}, "ok"),
    ({"predictions": {"E0": "move S"}, "objective": "defend"}, "ok"),
    ({"predictions": {"E0": [0.1, 0.5, 0.1, 0.1, 0.1, 0.1]}}, "ok"),
    ({"predictions": {"E0": {"move": 0.7, "fly": 0.3}}}, "bad_predictions"),
    ({"predictions": {"E0": {"move": 0.9, "hold": 0.9}}}, "bad_predictions"),
    ({"predictions": ["move"]}, "bad_predictions"),
    ({"objective": {"hunt_sovereign": 0.5, "dominate": 0.2}}, "bad_objective"),
    ({"objective": "attack"}, "bad_objective"),
    ({"objective": {"hunt_sovereign": -0.5, "dominate": 1.5}}, "bad_objective"),
])
def test_quick_model_distributions_are_parsed_or_the_report_is_invalid(extra, status):
    answer = {"orders": {"F0": "move S"}, "beliefs": BELIEFS, "my_objective": "Defend", **extra}
    orders, report = parse_answer(json.dumps(answer), _obs())
    assert report.status == status and orders[0] == ("move", "S")
    assert report.beliefs is not None and report.objective == "defend"
    if status == "bad_predictions":
        assert report.action_probs is None
    if status == "bad_objective":
        assert report.objective_probs is None and report.predicted_objective == ""
    if status == "ok" and "predictions" in extra:
        assert np.isclose(report.action_probs[0].sum(), 1) and report.predicted_actions[0] == "move"
        assert np.isnan(report.action_probs[1]).all() and report.predicted_actions[1] == ""


def test_quick_model_design_key_names_are_read():
    answer = {"orders": {}, "beliefs": BELIEFS,
              "action_predictions": {"E1": {"Move": 0.4, "Charge": 0.3, "Scout": 0.1,
                                            "Fortify": 0.1, "Ambush": 0.1}},
              "objective_prediction": {"hunt_sovereign": 0.6, "dominate": 0.2, "defend": 0.2}}
    _, report = parse_answer(json.dumps(answer), _obs())
    assert report.status == "ok" and report.predicted_objective == "hunt_sovereign"
    assert report.action_predictions["E1"]["move"] == pytest.approx(0.4)
    assert report.objective_prediction == pytest.approx(
        {"hunt_sovereign": 0.6, "dominate": 0.2, "defend": 0.2})


# -- MockLLMAgent -----------------------------------------------------------------------------


@pytest.mark.parametrize("name,tier", [("bayesian_hunter", "tier3"), ("greedy", "tier2"),
                                       ("lookahead", "tier4"), ("tier1", "tier1")])
def test_quick_mock_llm_agent_by_strategy_name_plays_like_its_tier(name, tier):
    direct = play_scripted(Rules(), tier, "tier2", 1, 0)
    agent = MockLLMAgent(strategy_name=name)
    assert agent.strategy_name == name and agent.name == f"mock:{tier}"
    mock = play_scripted(Rules(), agent, "tier2", 1, 0)
    assert (direct.game.winner, direct.game.turn) == (mock.game.winner, mock.game.turn)
    for d, m in zip(direct.records, mock.records, strict=True):
        if m.player == 0:
            assert m.report.status == "ok" and m.report.objective == d.report.objective
            assert np.allclose(m.report.objective_probs, d.report.objective_probs, atol=1e-5)
            alive = np.asarray(m.enemy_alive)
            assert np.allclose(m.report.action_probs[alive], d.report.action_probs[alive], atol=1e-5)
            assert '"objective"' in m.report.raw_text


def test_quick_mock_llm_agent_arguments():
    assert MockLLMAgent(strategy="bayesian_hunter").inner.name == "tier3"
    assert MockLLMAgent(BayesianHunter()).strategy_name == "tier3"
    with pytest.raises(TypeError, match="strategy_name"):
        MockLLMAgent()
    with pytest.raises(TypeError):
        MockLLMAgent("tier1", strategy_name="tier2")
    with pytest.raises(ValueError, match="bayesian_hunter"):
        MockLLMAgent(strategy_name="cautious")


# -- user agents: checks ------------------------------------------------------------------------


class Raises(Agent):
    def observe_and_plan(self, player_id, observation, rng):
        raise RuntimeError("boom")


class BadDistributions(FixedPredictor):
    def __init__(self, field):
        self.field = field

    def observe_and_plan(self, player_id, observation, rng):
        orders, report = super().observe_and_plan(player_id, observation, rng)
        if self.field == "actions":
            report.action_probs = report.action_probs * 2
        elif self.field == "objective":
            report.objective_probs = np.array([0.5, 0.5, 0.5])
        elif self.field == "beliefs":
            report.beliefs = report.beliefs[:2]
        elif self.field == "orders":
            orders = [("teleport", None)]
        return orders, report


@pytest.mark.parametrize("agent,status", [
    (Raises(), "agent_error"), (BadDistributions("actions"), "bad_predictions"),
    (BadDistributions("objective"), "bad_objective"), (BadDistributions("beliefs"), "bad_beliefs"),
    (BadDistributions("orders"), "bad_orders"), (FixedPredictor(), "ok"),
])
def test_quick_user_agent_answers_are_checked_like_a_models(agent, status):
    s = play_scripted(Rules(max_turns=2), UserAgent("u:A", agent), "tier1", 0, 0)
    reports = [r.report for r in s.records if r.player == 0]
    assert reports and all(r.status == status for r in reports)
    if status == "agent_error":
        assert reports[0].raw_text == "RuntimeError: boom"


def test_quick_load_agent_class_refuses_in_one_line():
    assert load_agent_class("distbench.games.fog.agents:BayesianHunter") is BayesianHunter
    for ref, words in [("nope_module_xyz:A", "cannot import module"),
                       ("distbench.games.fog.agents:Nope", "has no 'Nope'"),
                       ("distbench.games.fog.agents:Agent", "abstract"),
                       ("distbench.games.fog.agents:Rules", "not an agent class"),
                       ("distbench.games.fog.text:LLMAgent", "without arguments"),
                       ("not a ref", "module:Class")]:
        with pytest.raises(ValueError, match=words) as info:
            load_agent_class(ref)
        assert "\n" not in str(info.value)


def test_quick_config_takes_strategy_names_and_agent_classes():
    cfg = FogRunConfig(pairings=(("bayesian_hunter", "distbench.games.fog.agents:BayesianHunter"),))
    assert cfg.pairings == (("tier3", "distbench.games.fog.agents:BayesianHunter"),)
    with pytest.raises(ValueError, match="pairings: agent 'nope_xyz:A': cannot import"):
        FogRunConfig(pairings=(("tier1", "nope_xyz:A"),))


# -- user agents through the CLI, in a subprocess with the module on PYTHONPATH ------------------

USER_MODULE = textwrap.dedent('''
    import numpy as np
    from distbench.games.fog.agents import Agent, AgentReport, BayesianHunter

    class MyAgent(Agent):
        def __init__(self):
            self.inner = BayesianHunter()

        def observe_and_plan(self, player_id, observation, rng):
            orders, report = self.inner.observe_and_plan(player_id, observation, rng)
            report.objective_probs = np.array([0.0, 1.0, 0.0])
            report.objective = "hunt_sovereign"
            return orders, report

    class NoApi:
        pass
''')


def _cli(tmp_path, *args):
    pkg = tmp_path / "userpkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "agents.py").write_text(USER_MODULE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


def _rows(run_dir, sql):
    from distbench.store.catalog import open_run

    con = open_run(run_dir)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_user_agent_class_plays_a_tournament_and_a_run(tmp_path):
    me = "userpkg.agents:MyAgent"
    out = _cli(tmp_path, "fog", "tournament", "--games-per-pairing", "2", "--agents",
               "tier1,tier2", "--agent", me, "--run-id", "t", "--output-dir", str(tmp_path),
               "--no-parallel")
    assert out.returncode == 0, out.stderr
    assert f"tier2 vs {me}" in out.stdout and "tier2 vs tier1" in out.stdout
    agents = {a for row in _rows(tmp_path / "t", "select agent_a, agent_b from fog_games")
              for a in row}
    assert agents == {"tier1", "tier2", me}
    out = _cli(tmp_path, "run", "--family", "fog", "--agent", me, "--opponent", "tier2",
               "--num-games", "2", "--run-id", "r", "--output-dir", str(tmp_path), "--no-parallel")
    assert out.returncode == 0, out.stderr
    rows = _rows(tmp_path / "r", "select player, agent, actual_objective, objective_brier "
                 "from fog_reports")
    assert {r[1] for r in rows} == {me, "tier2"}
    # tier2 predicts (0.2, 0.6, 0.2) for our hunt_sovereign; we are sure of its dominate
    assert all(r[2] == "hunt_sovereign" and r[3] == pytest.approx(1.04) for r in rows if r[1] == "tier2")
    assert all(r[2] == "dominate" and r[3] == 0.0 for r in rows if r[1] == me)


@pytest.mark.parametrize("ref,words", [("userpkg.agents:NoApi", "not an agent class"),
                                       ("userpkg.nothere:MyAgent", "cannot import module")])
def test_user_agent_class_is_refused_in_one_line(tmp_path, ref, words):
    for args in (["run", "--family", "fog", "--agent", ref, "--num-games", "1"],
                 ["fog", "tournament", "--games-per-pairing", "2", "--agents", f"tier1,{ref}"]):
        out = _cli(tmp_path, *args, "--run-id", "x", "--output-dir", str(tmp_path), "--no-parallel")
        assert out.returncode != 0 and words in out.stderr, out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


# -- event fields ---------------------------------------------------------------------------------


def _one_on_one(pos_a, pos_b, powers=(3, 2), **rules):
    rules = Rules(board_size=5, num_forces=1, **rules)
    g = Game(rules, (Deployment((0,), (powers[0],), 0), Deployment((0,), (powers[1],), 0)),
             np.random.default_rng(0))
    g.pos = [[pos_a], [pos_b]]
    return g


@pytest.mark.parametrize("order_a,order_b,pos_b,roles", [
    (("move", "E"), HOLD, (2, 2), ("a", "b", "attacker_wins", "combat")),
    (HOLD, ("move", "W"), (2, 2), ("b", "a", "defender_wins", "combat")),
    (("move", "E"), ("move", "W"), (2, 2), ("both", None, None, "combat")),
    (("ambush", None), ("move", "W"), (2, 3), ("a", "b", "attacker_wins", "ambush")),
])
def test_quick_fights_name_attacker_and_defender(order_a, order_b, pos_b, roles):
    g = _one_on_one((2, 1), pos_b)
    (ev,) = [e for e in g.step(([order_a], [order_b])) if e.kind in ("combat", "ambush")]
    d = ev.details
    assert (d["attacker"], d["defender"], d["result"], ev.kind) == roles
    assert d["winner"] == "a"  # power 3 against 2


def test_quick_scout_reveal_has_the_actual_power_and_noose_kill_was_sovereign():
    g = _one_on_one((1, 1), (3, 1), powers=(3, 4), scout_accuracy=0.0)
    (ev,) = [e for e in g.step(([("scout", 0)], [HOLD])) if e.kind == "scout_reveal"]
    assert ev.details["kind"] == "band_high" and ev.details["actual_power"] == 4
    rules = Rules(board_size=5, num_forces=2, noose_start=1, noose_every=1)
    g = Game(rules, (Deployment((0, 1), (1, 2), 1), Deployment((0, 1), (1, 2), 0)),
             np.random.default_rng(0))
    kills = {(e.player, e.force): e.details["was_sovereign"] for e in g.step(([HOLD] * 2, [HOLD] * 2))
             if e.kind == "noose_kill"}
    assert kills == {(0, 0): False, (0, 1): True, (1, 0): True, (1, 1): False}


def test_quick_event_details_are_stored_as_json_with_the_new_fields():
    cfg = FogRunConfig(pairings=(("tier3", "tier2"),), num_games=3, both_seat_orders=False,
                       noose_start=2)
    (shard,) = plan_fog_shards(cfg, "r")
    events = run_shard(shard, {}).tables["fog_events"][1]
    con = duckdb.connect()
    con.register("ev", events)
    kinds = dict(con.execute("select kind, any_value(details) from ev group by kind").fetchall())
    assert "actual_power" in json.loads(kinds["scout_reveal"])
    assert {"attacker", "defender", "result"} <= set(json.loads(kinds["combat"]))
    assert "was_sovereign" in json.loads(kinds["noose_kill"])
