"""Fog statistics: bounded rate intervals that agree between the summary, the SQL and the
printout; verdicts read from intervals; a study's games keyed with their condition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.cli.services import CliServices
from distbench.engine.driver import run_plan
from distbench.games.fog import metrics as M
from distbench.games.fog.commands import commands
from distbench.games.fog.metrics import format_gradient
from distbench.games.fog.study import plan_study
from distbench.report.sql import resolve_query_file
from distbench.report.stats import wilson_interval
from distbench.store.catalog import open_run

fog = commands(CliServices())  # distbench fog, the fog family's own commands


def _sql(con, name: str) -> list[dict]:
    result = con.execute(resolve_query_file(name).read_text())
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, r, strict=True)) for r in result.fetchall()]


def test_quick_verdict_on_an_interval_straddling_one_half_is_not_shown():
    # The case: point estimate 0.625 > 0.5, interval [0.413, 0.837].
    pair = {"higher": "tier2", "lower": "tier1", "games": 16, "score_rate": 0.625,
            "ci_low": 0.413, "ci_high": 0.837}
    assert M.gradient_verdict([pair]) == "inconclusive"
    assert not M.gradient_holds([pair])
    text = format_gradient([pair], M.gradient_verdict([pair]))
    assert "HOLDS" not in text
    assert "tier gradient: NOT SHOWN" in text and "[0.413, 0.837]" in text
    below = dict(pair, score_rate=0.3, ci_low=0.1, ci_high=0.45)
    assert M.gradient_verdict([below]) == "fails"
    above = dict(pair, score_rate=0.8, ci_low=0.55, ci_high=0.93)
    assert M.gradient_verdict([above]) == "holds"
    assert M.gradient_verdict([above, pair]) == "inconclusive"
    assert M.gradient_verdict([above, below]) == "fails"


def test_quick_tier_gradient_intervals_are_wilson_and_higher_wins_needs_the_interval():
    rows = [{"agent_a": "tier2", "agent_b": "tier1", "winner": "a"}] * 3
    (g,) = M.tier_gradient(rows)
    assert (g["ci_low"], g["ci_high"]) == pytest.approx(wilson_interval(3, 3))
    assert g["ci_high"] == 1.0 and g["ci_low"] < 0.5  # 3 of 3 does not show a gradient
    assert g["higher_wins"] is False and M.gradient_verdict([g]) == "inconclusive"


def test_fog_summary_sql_interval_is_bounded_and_equals_the_tournament_printout(tmp_path):
    result = CliRunner().invoke(fog, ["tournament", "--games-per-pairing", "4", "--run-id", "t",
                                      "--output-dir", str(tmp_path), "--no-parallel"])
    assert result.exit_code == 0, result.output
    con = open_run(tmp_path / "t")
    rows = _sql(con, "fog_summary")
    games = [dict(zip(("agent_a", "agent_b", "winner"), r, strict=True)) for r in
             con.execute("select agent_a, agent_b, winner from fog_games").fetchall()]
    pairings = {(r["agent"], r["opponent"]): r for r in _sql(con, "report_fog_pairings")}
    con.close()
    assert rows and all(0.0 <= r["score_ci_low"] <= r["score_rate"] <= r["score_ci_high"] <= 1.0
                        for r in rows)
    assert any(r["score_rate"] in (0.0, 1.0) for r in rows)  # the bounds are exercised
    by = {(r["agent"], r["opponent"]): r for r in rows}
    for g in M.tier_gradient(games):
        row = by[(g["higher"], g["lower"])]
        assert row["games"] == g["games"]
        for key, sql_key in (("score_rate", "score_rate"), ("ci_low", "score_ci_low"),
                             ("ci_high", "score_ci_high")):
            assert math.isclose(row[sql_key], g[key], rel_tol=0, abs_tol=1e-12)
            assert math.isclose(pairings[(g["higher"], g["lower"])][sql_key], g[key],
                                rel_tol=0, abs_tol=1e-12)
        printed = f"[{g['ci_low']:.3f}, {g['ci_high']:.3f}]"
        assert printed in result.output


def test_fog_summary_json_intervals_lie_in_zero_one(tmp_path):
    from distbench.games.fog.plan import FogRunConfig, plan_fog

    out = run_plan(plan_fog(FogRunConfig(pairings=(("tier4", "tier1"),), num_games=3), "r"),
                   tmp_path / "r", parallel=False)
    for r in out.summary:
        assert 0.0 <= r["score_a_ci_low"] <= r["score_a"] <= r["score_a_ci_high"] <= 1.0
    (rec,) = [r for r in out.summary if r["agent_a"] == "tier4"]
    assert rec["score_a"] == 1.0 and rec["score_a_ci_high"] == 1.0
    assert 0.0 < rec["score_a_ci_low"] < 1.0
    assert (rec["score_a_ci_low"], rec["score_a_ci_high"]) == pytest.approx(wilson_interval(3, 3))


def test_study_information_gain_differs_per_scout_accuracy(tmp_path):
    accuracies = (0.4, 1.0)
    out = run_plan(plan_study(2, 0, accuracies, "s"), tmp_path / "s", parallel=False)
    con = open_run(out.run_dir)
    table = _sql(con, "report_fog_info_gain")
    # Independent computation: a shard plays one condition, so its reports are that
    # condition's, whatever the (repeating) game ids.
    direct = con.execute("""
        select r.agent, g.scout_accuracy, avg(r.info_gain) filter (where r.info_gain <> 0)
        from fog_reports r
        join (select distinct shard_id, scout_accuracy, scouting from fog_games) g using (shard_id)
        where g.scouting group by all""").fetchall()
    repeats = con.execute("select count(*) from (select game_id from fog_games group by game_id"
                          " having count(*) > 1)").fetchone()[0]
    con.close()
    assert repeats > 0  # the study's game ids do repeat across conditions
    expected = {(a, acc): gain for a, acc, gain in direct}
    gains = {}
    for r in table:
        want = expected[(r["agent"], r["scout_accuracy"])]
        assert r["mean_info_gain_per_reveal"] == (None if want is None else pytest.approx(want))
        if r["mean_info_gain_per_reveal"] is not None:
            gains.setdefault(r["agent"], {})[r["scout_accuracy"]] = r["mean_info_gain_per_reveal"]
    assert gains  # the Bayesian tiers scout
    for agent, by_acc in gains.items():
        assert set(by_acc) == set(accuracies), agent
        assert not np.isclose(by_acc[0.4], by_acc[1.0]), (agent, by_acc)
