"""Honest aggregates of the matrix family: an invalid answer scores as chance on its game, in
summary.json, the shipped queries and the leaderboard, whose ranks tie overlapping models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from distbench.engine.driver import run_config, run_plan
from distbench.engine.sweep import plan_sweep
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.games.matrix.summary import format_summary, headline_metric
from distbench.llm.registry import make_spec, providers
from distbench.report.sql import resolve_query_file
from distbench.spec import parse_spec
from distbench.store.catalog import open_run


def _sql(con, name: str) -> list[dict]:
    result = con.execute(resolve_query_file(name).read_text())
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, r, strict=True)) for r in result.fetchall()]


def _chance(payoff: list, nash_col: list, value: float) -> tuple[float, float, float]:
    """Independent numpy computation: the uniform strategy's gap and exploitability, and the
    expected exploitability of a uniformly random pure action."""
    u = np.array(payoff)
    uy = u @ np.array(nash_col)
    return (float(uy.max() - uy.mean()), float(value - u.mean(axis=0).min()),
            float((value - u.min(axis=1)).mean()))


def test_quick_headline_is_exploitability_for_mixed_buckets_and_degenerate_games():
    assert headline_metric("3x3_midVar_mixed", 0.0) == "exploitability"
    assert headline_metric("3x3_midVar_pure", 0.0) == "nash_gap"
    assert headline_metric("3x3_midVar_any", 0.05) == "exploitability"
    assert headline_metric("not a bucket", 0.0) == "nash_gap"


def test_a_model_that_never_answers_scores_as_the_uniform_strategy(tmp_path):
    if "constant" not in providers():
        pytest.fail("the example plugin is not installed: pip install -e examples/plugins/beauty")
    config = MatrixRunConfig(buckets=("3x3_midVar_mixed", "3x3_midVar_pure"), seeds=(3,),
                             num_games=6, num_trials=2, modes=("pure", "mixed"),
                             llm=make_spec("constant", "nonsense"))
    out = run_config(config, tmp_path / "c", parallel=False)
    text = (tmp_path / "c" / "summary.json").read_text()
    summary = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    con = open_run(tmp_path / "c")
    games = con.execute("select bucket, payoff, nash_col, value, gap_degenerate from games"
                        ).fetchall()
    sql = {(r["bucket"], r["mode"]): r for r in _sql(con, "summary")}
    con.close()
    chance = {}
    for bucket, payoff, col, value, degenerate in games:
        gap, expl, pure_expl = _chance(payoff, col, value)
        chance.setdefault(bucket, []).append((0.0 if degenerate else gap, expl, pure_expl))
    assert len(summary["groups"]) == len(out.summary) == 4
    for r in summary["groups"]:
        assert r["valid_rate"] == 0.0 and r["mean_nash_gap"] is None  # every answer invalid
        gap, expl, pure_expl = np.array(chance[r["bucket"]]).mean(axis=0)
        want_expl = pure_expl if r["mode"] == "pure" else expl
        assert r["honest_nash_gap"] == pytest.approx(gap, abs=1e-9)
        assert r["honest_exploitability"] == pytest.approx(want_expl, abs=1e-9)
        low, high = r["honest_exploitability_ci95"]
        assert 0.0 <= low <= r["honest_exploitability"] <= high
        if r["bucket"].endswith("_mixed"):
            assert r["honest_nash_gap"] > 0 and r["headline_metric"] == "exploitability"
        s = sql[(r["bucket"], r["mode"])]  # the query states the same numbers
        assert s["honest_nash_gap"] == pytest.approx(r["honest_nash_gap"], abs=1e-9)
        assert s["honest_exploitability"] == pytest.approx(r["honest_exploitability"], abs=1e-9)
        assert s["headline_metric"] == r["headline_metric"]
    # pure mode: a random pure action is more exploitable than the uniform mix (convexity)
    by = {(r["bucket"], r["mode"]): r for r in summary["groups"]}
    assert (by[("3x3_midVar_mixed", "pure")]["honest_exploitability"]
            > by[("3x3_midVar_mixed", "mixed")]["honest_exploitability"])
    for r in summary["groups"]:  # the headline: every answer invalid scores 0, not chance
        assert r["quality"] == 0.0 and r["quality_of_valid"] is None
    printed = format_summary(summary["groups"])
    assert "quality (the headline)" in printed


def test_honest_aggregates_equal_the_valid_means_when_every_answer_is_valid(tmp_path):
    config = MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(1,), num_games=5,
                             num_trials=3, modes=("mixed",), llm=make_spec("dummy"))
    out = run_config(config, tmp_path / "d", parallel=False)
    (r,) = out.summary
    assert r["valid_rate"] == 1.0
    assert r["honest_nash_gap"] == pytest.approx(r["mean_nash_gap"])
    assert r["honest_exploitability"] == pytest.approx(r["mean_exploitability"])
    assert r["degenerate_game_share"] is not None


def test_leaderboard_ties_two_identical_models_and_ranks_by_the_honest_aggregate(tmp_path):
    data = {"seeds": [1, 2], "games_per_bucket": 6, "trials_per_game": 3,
            "modes": ["pure", "mixed"], "buckets": ["3x3_midVar_mixed", "2x2_lowVar_pure"],
            "providers": {"dummy": {"tiers": {"A": ["random"], "B": ["random-copy"]}}}}
    run_plan(plan_sweep(parse_spec(data, "t.toml"), "sw"), Path(tmp_path / "sw"),
             parallel=False)
    con = open_run(tmp_path / "sw")
    board = _sql(con, "leaderboard")
    honest = con.execute(
        "select t.mode, t.model, avg(t.exploitability) from trials t group by all").fetchall()
    con.close()
    assert len(board) == 4
    for mode in ("pure", "mixed"):
        a, b = [r for r in board if r["mode"] == mode]
        assert a["rank"] == b["rank"] == 1  # identical answers: never ranked 1 and 2
        assert a["tied_with"] == f"dummy:{b['model']} ({b['tier']})"
        assert b["tied_with"] == f"dummy:{a['model']} ({a['tier']})"
        assert math.isclose(a["honest_exploitability"], b["honest_exploitability"],
                            rel_tol=1e-12)
        assert (0.0 <= a["honest_exploitability_ci95_low"] < a["honest_exploitability"]
                < a["honest_exploitability_ci95_high"])
    for mode, model, expl in honest:  # every answer valid: honest = the plain mean
        (r,) = [r for r in board if (r["mode"], r["model"]) == (mode, model)]
        assert r["honest_exploitability"] == pytest.approx(expl)
