"""The repeated family: planted checks, opponents, predictions, the driver, the CLI, the spec."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.engine.driver import run_plan
from distbench.games.repeated.plan import (
    RepeatedRunConfig,
    plan_repeated,
    plan_shards,
    section,
)
from distbench.games.repeated.runner import match_metrics, parse_prediction, run_shard
from distbench.games.repeated.schema import TABLES
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

DUMMY = make_spec("dummy")
_ROUND = re.compile(r"lasts exactly (\d+) rounds; this is round (\d+)")


class Scripted(Backend):
    """A scripted player: ``policy(round, horizon, prompt) -> reply``."""

    def __init__(self, spec: BackendSpec, policy) -> None:
        super().__init__(spec)
        self.policy = policy

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            horizon, now = map(int, _ROUND.search(r.prompt).groups())
            out.append(Response(text=self.policy(now, horizon, r.prompt)))
        return out


def _run(policy, **kw):
    spec = BackendSpec("scripted-test", "p")
    cfg = RepeatedRunConfig(llm=spec, **{"num_games": 5, **kw})
    results = [run_shard(s, {spec: Scripted(spec, policy)}) for s in plan_shards(cfg, "r")]
    matches = [r for res in results for r in res.tables["repeated_matches"][1].to_pylist()]
    rounds = [r for res in results for r in res.tables["rounds"][1].to_pylist()]
    return matches, rounds


def test_best_responding_to_tit_for_tat_has_regret_zero():
    """Planted: against Tit For Tat with a known horizon (a prisoner's dilemma, 2R > T + S),
    cooperating until the last round and defecting then is optimal: regret 0."""
    matches, _ = _run(lambda now, horizon, _: f"Action: {2 if now == horizon else 1}",
                      opponents=("TitForTat",), rounds=8)
    assert all(m["regret"] == 0.0 and m["status"] == "complete" for m in matches)
    assert all(m["first_defection"] == 8 for m in matches)
    always_c, _ = _run(lambda *_: "Action: 1", opponents=("TitForTat",), rounds=8)
    assert all(m["regret"] > 0 for m in always_c)  # leaves the last round's temptation


def test_defector_exploits_a_cooperator_as_the_payoffs_imply():
    matches, rounds = _run(lambda *_: "Action: 2", opponents=("Cooperator",), rounds=6)
    for m in matches:
        (r, s), (t, p) = m["payoff_row"]
        assert m["total"] == 6 * t and m["exploitation"] == 1.0 and m["regret"] == 0.0
        assert m["cooperation_rate"] == 0.0 and m["first_defection"] == 1
    assert {r["opponent_action"] for r in rounds} == {0}


def test_lists_of_opponents_and_grudger_retaliates_forever():
    matches, rounds = _run(lambda now, *_: f"Action: {2 if now == 2 else 1}",
                           opponents=("Grudger", "TitForTat", "Defector"), rounds=5)
    by = {(m["opponent"], m["match_index"]): m for m in matches}
    assert {o for o, _ in by} == {"Grudger", "TitForTat", "Defector"}
    grudger = [r for r in rounds if r["opponent"] == "Grudger" and r["match_id"].endswith("/m0")]
    assert [r["opponent_action"] for r in grudger] == [0, 0, 1, 1, 1]
    tft = [r for r in rounds if r["opponent"] == "TitForTat" and r["match_id"].endswith("/m0")]
    assert [r["opponent_action"] for r in tft] == [0, 0, 1, 0, 0]
    # the same stage games against every opponent (paired comparisons)
    assert by[("Grudger", 3)]["payoff_row"] == by[("Defector", 3)]["payoff_row"]


def test_an_invalid_answer_forfeits_the_match_with_its_row_kept():
    matches, rounds = _run(lambda now, *_: "Action: 1" if now < 3 else "I refuse",
                           opponents=("TitForTat",), rounds=6)
    assert all(m["status"] == "forfeit" and m["rounds_played"] == 2 and m["regret"] is None
               for m in matches)
    bad = [r for r in rounds if r["round"] == 3]
    assert bad and all(r["parse_status"] != "ok" and r["action"] is None
                       and r["raw_text"] == "I refuse" for r in bad)
    assert not [r for r in rounds if r["round"] > 3]


def test_predictions_are_scored_by_brier_and_log_loss():
    matches, rounds = _run(lambda *_: "Prediction: 0.8\nAction: 1", opponents=("Alternator",),
                           rounds=4, predict=True)
    first = [r for r in rounds if r["match_id"].endswith("/m0")]
    assert [r["opponent_action"] for r in first] == [0, 1, 0, 1]
    np.testing.assert_allclose([r["brier"] for r in first], [0.04, 0.64, 0.04, 0.64])
    np.testing.assert_allclose(matches[0]["log_loss"], -(np.log(0.8) + np.log(0.2)) / 2)
    assert matches[0]["predictions"] == 4
    assert parse_prediction("Prediction: 70%") == (0.7, "ok")
    assert parse_prediction("Prediction: 1.5")[1] == "out_of_range"
    assert parse_prediction("no idea")[1] == "missing"


def test_match_metrics_retaliation_and_forgiveness():
    # opponent defects in round 2; the model retaliates in round 3 and forgives in round 4
    m = match_metrics([0, 0, 1, 0, 0], [0, 1, 0, 0, 0], np.zeros((2, 2)))
    assert m["retaliation_rate"] == 1.0 and m["forgiveness_rate"] == 1.0
    assert m["first_defection"] == 3 and m["cooperation_rate"] == 0.8


def test_self_play_and_continuation(tmp_path):
    cfg = RepeatedRunConfig(llm=DUMMY, opponents=("self", "Random"), num_games=4, rounds=None,
                            continuation=0.8)
    shards = plan_shards(cfg, "c")
    res = [run_shard(s, {DUMMY: _dummy()}) for s in shards]
    for r in res:
        for name, schema in TABLES.items():
            assert r.tables[name][1].schema.equals(schema, check_metadata=False)
    matches = [m for r in res for m in r.tables["repeated_matches"][1].to_pylist()]
    assert {m["opponent"] for m in matches} == {"self", "Random"}
    assert all(m["horizon"] is None and m["continuation"] == 0.8 for m in matches)
    lengths = {m["match_index"]: m["rounds_planned"] for m in matches}
    assert all(m["rounds_planned"] == lengths[m["match_index"]] for m in matches)
    assert all(m["best_total"] is None for m in matches if m["opponent"] == "self")
    assert all(m["best_total"] is not None for m in matches if m["opponent"] == "Random")
    again = run_shard(shards[0], {DUMMY: _dummy()})
    assert again.tables["rounds"][1].equals(res[0].tables["rounds"][1])


def _dummy():
    from distbench.llm.dummy import DummyBackend

    return DummyBackend(DUMMY)


def test_driver_run_resumes_exactly_once(tmp_path):
    cfg = RepeatedRunConfig(llm=DUMMY, opponents=("TitForTat", "WinStayLoseShift"),
                            num_games=6, shard_games=3)
    out = run_plan(plan_repeated(cfg, "r"), tmp_path / "r", parallel=False)
    assert out.executed == 4
    con = open_run(out.run_dir)
    assert con.execute("select count(*) from repeated_matches").fetchone()[0] == 12
    assert con.execute("select count(*) from rounds").fetchone()[0] == 120
    assert {r["opponent"] for r in out.summary} == {"TitForTat", "WinStayLoseShift"}
    assert run_plan(plan_repeated(cfg, "r"), tmp_path / "r", parallel=False).executed == 0


def test_cli_runs_the_issue_command_and_lists_of_opponents(tmp_path):
    from distbench.cli.main import cli

    for opponent, run_id in (("TitForTat", "one"), ("TitForTat,Grudger,GTFT", "list")):
        result = CliRunner().invoke(cli, [
            "run", "--family", "repeated", "--stage", "prisoners_dilemma", "--opponent",
            opponent, "--rounds", "10", "--llm-type", "dummy", "--num-games", "5",
            "--no-parallel", "--output-dir", str(tmp_path), "--run-id", run_id])
        assert result.exit_code == 0, result.output
        assert "regret [95% CI]" in result.output
    con = open_run(tmp_path / "list")
    assert con.execute("select count(distinct opponent) from repeated_matches").fetchone()[0] == 3
    result = CliRunner().invoke(cli, ["run", "--family", "repeated", "--opponent", "TitForTatt",
                                      "--llm-type", "dummy", "--output-dir", str(tmp_path)])
    assert result.exit_code != 0 and "Did you mean 'TitForTat'" in str(result.exception)


def test_spec_section():
    out = section({"opponents": ["TitForTat", "self"], "continuation": 0.9, "predict": True})
    assert out["rounds"] is None and out["continuation"] == 0.9 and out["games"] == 10
    with pytest.raises(ValueError, match="opponents"):
        section({"opponents": ["Nice"]})
    with pytest.raises(ValueError, match="rounds"):
        section({"rounds": 5, "continuation": 0.5})


def test_another_model_plays_the_column_seat():
    spec = BackendSpec("scripted-test", "p")
    other = BackendSpec("scripted-test", "always-defect")
    cfg = RepeatedRunConfig(llm=spec, opponents=(other,), num_games=2, rounds=3)
    (shard,) = plan_shards(cfg, "m")
    assert shard.specs == (spec, other)
    backends = {spec: Scripted(spec, lambda *_: "Action: 1"),
                other: Scripted(other, lambda *_: "Action: 2")}
    res = run_shard(shard, backends)
    matches = res.tables["repeated_matches"][1].to_pylist()
    assert all(m["opponent"] == "scripted-test:always-defect" and m["opponent_kind"] == "model"
               and m["best_total"] is None and m["cooperation_rate"] == 1.0 for m in matches)
    rounds = res.tables["rounds"][1].to_pylist()
    assert {r["opponent_action"] for r in rounds} == {1}
    calls = res.tables["calls"][1].to_pylist()
    assert len(calls) == 2 * 2 * 3 and {c["model"] for c in calls} == {"p", "always-defect"}
