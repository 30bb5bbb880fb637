"""The fog seed's agent API beside distbench's: an agent file written for the seed
(``from benchmark.llm_agent_interface import LLMAgent``, ``benchmark.telemetry``'s report,
``deploy(player, rng)`` without ``rules``, ``p1``/``p2_f1`` names, capitalised order kinds)
plays unchanged; ``--agent mock:tier3``; the combat events carry the seed's field names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from distbench.games.fog.agents import UserAgent, check_agent, make_agent
from distbench.games.fog.play import GameSession, play_scripted
from distbench.games.fog.rules import Rules

SEED_AGENT = textwrap.dedent('''
    import random

    from benchmark.llm_agent_interface import LLMAgent
    from benchmark.telemetry import AgentReport, BeliefState


    class SeedStyle(LLMAgent):
        """As an agent of the fog seed is written: ids p1/p2, random.Random, the seed's
        report keyed by force id; it raises if it is called any other way."""

        def deploy(self, player, rng):
            assert player.id in ("p1", "p2") and isinstance(rng, random.Random), (player, rng)
            ids = [f.id for f in player.forces]
            assert ids == [f"{player.id}_f{i}" for i in range(1, 6)], ids
            return dict(zip(ids, [5, 4, 3, 2, 1]))

        def observe_and_plan(self, player_id, game_state, rng):
            assert player_id in ("p1", "p2") and isinstance(rng, random.Random)
            enemy = "p2" if player_id == "p1" else "p1"
            report = AgentReport(turn=game_state.turn, player_id=player_id, strategy="seedstyle")
            for j, alive in enumerate(game_state.enemy_alive):
                if alive:
                    report.beliefs[f"{enemy}_f{j + 1}"] = BeliefState.uniform()
                    report.action_predictions[f"{enemy}_f{j + 1}"] = {
                        "Move": 0.3, "Charge": 0.2, "Scout": 0.2, "Fortify": 0.15, "Ambush": 0.15}
            report.objective_prediction = {"hunt_sovereign": 0.2, "dominate": 0.5, "defend": 0.3}
            report.raw_reasoning = "forward"
            step = "N" if player_id == "p2" else "S"
            orders = [("Move", step) if alive else ("hold", None)
                      for alive in game_state.own_alive]
            return orders, report
''')


def test_quick_mock_names_a_strategy_behind_the_text_interface():
    assert check_agent("mock:tier3") == "mock:tier3"
    assert check_agent("mock:bayesian_hunter") == "mock:tier3"
    with pytest.raises(ValueError, match="mock:tier3"):
        check_agent("mock:mock:tier1")
    with pytest.raises(ValueError, match="unknown agent"):
        check_agent("mock:tier9")
    session = play_scripted(Rules(max_turns=6), "mock:tier3", "tier3", 3, 0)
    plain = play_scripted(Rules(max_turns=6), "tier3", "tier3", 3, 0)
    assert session.agents[0].name == "mock:tier3"
    # The text round trip changes nothing the game sees.
    assert [e.details for e in session.events] == [e.details for e in plain.events]


def _first_observation(agent):
    session = GameSession(Rules(max_turns=4), (agent, make_agent("tier1")), 1, 0, "g")
    return session.game.observation(0)


def test_quick_seed_forms_of_deploy_and_report_are_read_as_distbenchs(tmp_path, monkeypatch):
    (tmp_path / "seedagent.py").write_text(SEED_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = make_agent("seedagent:SeedStyle")
    assert isinstance(agent, UserAgent) and agent.seed_api
    dep = agent.deploy(1, Rules(), np.random.default_rng(0))
    assert dep.powers == (5, 4, 3, 2, 1)
    obs = _first_observation(agent)
    orders, report = agent.observe_and_plan(0, obs, np.random.default_rng(1))
    assert report.status == "ok", report.status
    np.testing.assert_allclose(report.beliefs, 0.2)
    assert report.action_probs[0].tolist() == pytest.approx([0.0, 0.3, 0.2, 0.2, 0.15, 0.15])
    assert report.objective_probs.tolist() == pytest.approx([0.2, 0.5, 0.3])
    assert report.raw_text == "forward" and report.predicted_objective == "dominate"
    assert orders == [("move", "S")] * 5  # the seed's "Move", read as distbench's kind
    session = play_scripted(Rules(max_turns=4), agent, "tier1", 1, 0)
    assert session.true_powers[0] == (5, 4, 3, 2, 1)


@pytest.mark.parametrize("given", [
    {"p1_f1": {1: 1.0}},  # its own force: not an enemy
    {"p2_f9": {1: 1.0}},  # no such force
    {"p2_f1": {7: 1.0}},  # no such power
])
def test_quick_seed_beliefs_that_name_no_enemy_force_or_power_are_invalid(given):
    from benchmark.telemetry import AgentReport as SeedReport

    class Bad:
        seed_api = True

        def observe_and_plan(self, player_id, game_state, rng):
            return [], SeedReport(turn=1, player_id=player_id, strategy="x", beliefs=given)

    agent = UserAgent("x:Bad", Bad())
    _, report = agent.observe_and_plan(0, _first_observation(agent), np.random.default_rng(0))
    assert report.status == "bad_beliefs"


def test_quick_a_deploy_without_rules_that_names_too_few_forces_is_refused():
    class Short:
        def deploy(self, player_id, rng):
            return {0: 5, 1: 4}

        def observe_and_plan(self, player_id, observation, rng):
            raise AssertionError("not reached")

    with pytest.raises(ValueError, match="names 2 of the 5 forces"):
        UserAgent("x:Short", Short()).deploy(0, Rules(), np.random.default_rng(0))


def test_the_seed_agent_file_plays_a_run_against_mock_tier3(tmp_path):
    (tmp_path / "seedagent.py").write_text(SEED_AGENT)
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "distbench.cli", "run", "--family", "fog",
                          "--agent", "seedagent:SeedStyle", "--opponent", "mock:tier3",
                          "--num-games", "2", "--run-id", "r", "--no-parallel"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    from distbench.store.catalog import open_run

    con = open_run(tmp_path / "results" / "r")
    try:
        reports = con.execute("select agent, report_status, raw_text from fog_reports").fetchall()
        powers = con.execute("select agent_a, power_a, agent_b, power_b from fog_games").fetchall()
        fights = con.execute("select details from fog_events where kind in ('combat', 'ambush')"
                             ).fetchall()
    finally:
        con.close()
    assert {r[0] for r in reports} == {"seedagent:SeedStyle", "mock:tier3"}
    mine = [r for r in reports if r[0] == "seedagent:SeedStyle"]
    assert mine and all(r[1] == "ok" and r[2] == "forward" for r in mine)
    for a, pa_, _b, pb in powers:  # its deploy's powers, in either seat
        assert (pa_ if a == "seedagent:SeedStyle" else pb) == [5, 4, 3, 2, 1]
    assert fights, "the agents marched into each other: no fight"
    for (details,) in fights:
        d = json.loads(details)
        assert d["attacker_id"][:4] in ("p1_f", "p2_f") and d["defender_id"][:4] in ("p1_f", "p2_f")
        assert d["attacker_id"][:2] != d["defender_id"][:2]
        assert {d["attacker_power"], d["defender_power"]} == {d["eff_a"], d["eff_b"]}
        assert d["result"] in ("attacker_wins", "defender_wins", "tie", None)


def test_the_seed_import_path_is_packaged():
    import configparser
    from pathlib import Path

    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parents[3] / "setup.cfg")
    assert "benchmark" in cfg["options.packages.find"]["include"].split()
    from benchmark.llm_agent_interface import LLMAgent, MockLLMAgent

    assert LLMAgent.seed_api
    assert MockLLMAgent(strategy_name="bayesian_hunter").name == "mock:tier3"
