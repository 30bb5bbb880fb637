"""The bimatrix family through Ray, a sweep spec, the report and the viewer."""

from __future__ import annotations

import pytest

from distbench.engine.driver import run_plan
from distbench.engine.sweep import plan_sweep
from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix
from distbench.games.registry import report_parts, view_sources
from distbench.llm.registry import make_spec
from distbench.report.build import build_report
from distbench.report.viewer import ViewOptions, build_view
from distbench.spec import SpecError, parse_spec
from distbench.store.catalog import open_run


def _rows(run_dir, sql):
    return open_run(run_dir).execute(sql).fetchall()


def test_ray_and_in_process_runs_give_the_same_rows(tmp_path, ray_session):
    cfg = BimatrixRunConfig(sets=("2x2_lowVar", "class:chicken"), llm=make_spec("dummy"),
                            num_games=6, num_trials=3, shard_games=3,
                            opponents=("eq", "uniform", "self"), modes=("pure", "mixed"))
    ray_out = run_plan(plan_bimatrix(cfg, "r"), tmp_path / "ray", parallel=True)
    here = run_plan(plan_bimatrix(cfg, "r"), tmp_path / "here", parallel=False)
    assert ray_out.executed == here.executed == 4
    sql = ("select game_id, seat, opponent, mode, trial, parse_status, regret, quality "
           "from bimatrix_trials order by all")
    assert _rows(ray_out.run_dir, sql) == _rows(here.run_dir, sql)
    again = run_plan(plan_bimatrix(cfg, "r"), tmp_path / "ray", parallel=True)
    assert again.executed == 0


def test_a_sweep_spec_plays_its_bimatrix_table_and_the_report_and_viewer_show_it(tmp_path):
    data = {"seeds": [3], "games_per_bucket": 1, "trials_per_game": 1, "modes": ["pure"],
            "buckets": ["2x2_lowVar_mixed"],
            "bimatrix": {"classes": ["stag_hunt", "battle_of_the_sexes"], "types": [5],
                         "games": 3, "trials": 2, "opponents": ["eq", "self"]},
            "providers": {"dummy": {"tiers": {"C": ["random"]}}}}
    spec = parse_spec(data, "t.toml")
    out = run_plan(plan_sweep(spec, "t"), tmp_path / "t", parallel=False)
    sets = {r[0] for r in _rows(out.run_dir, "select distinct game_set from bimatrix_games")}
    assert sets == {"class:stag_hunt", "class:battle_of_the_sexes", "type:rg005"}
    records = [r for r in out.summary if r.get("game_set")]
    assert {r["opponent"] for r in records} >= {"eq1", "eq2", "eq3", "self"}
    with pytest.raises(SpecError, match="bimatrix.opponents"):
        parse_spec({**data, "bimatrix": {"classes": ["stag_hunt"], "opponents": ["nash"]}},
                   "t.toml")
    report = build_report(out.run_dir, tmp_path / "report", report_parts())
    html = report.html.read_text()
    assert ">General-sum games (bimatrix)</h2>" in html and "bimatrix_summary" in report.tables
    assert "bimatrix_quality" in report.figures
    view = build_view(out.run_dir, tmp_path / "view.html", view_sources(), ViewOptions(sample=2))
    assert view.items["bimatrix"] > 0
    page = view.path.read_text()
    assert "General-sum games: answers" in page and "class:stag_hunt" in page
