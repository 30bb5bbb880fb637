"""The repeated family through Ray, a sweep spec, the report and the viewer."""

from __future__ import annotations

from distbench.engine.driver import run_plan
from distbench.engine.sweep import plan_sweep
from distbench.games.registry import report_parts, view_sources
from distbench.games.repeated.plan import RepeatedRunConfig, plan_repeated
from distbench.llm.registry import make_spec
from distbench.report.build import build_report
from distbench.report.viewer import ViewOptions, build_view
from distbench.spec import parse_spec
from distbench.store.catalog import open_run


def _rows(run_dir, sql):
    return open_run(run_dir).execute(sql).fetchall()


def test_ray_and_in_process_runs_give_the_same_rows(tmp_path, ray_session):
    cfg = RepeatedRunConfig(llm=make_spec("dummy"), opponents=("TitForTat", "GTFT", "self"),
                            num_games=4, shard_games=2, rounds=None, continuation=0.7)
    ray_out = run_plan(plan_repeated(cfg, "r"), tmp_path / "ray", parallel=True)
    here = run_plan(plan_repeated(cfg, "r"), tmp_path / "here", parallel=False)
    assert ray_out.executed == here.executed == 6
    sql = "select match_id, round, action, opponent_action, payoff from rounds order by all"
    assert _rows(ray_out.run_dir, sql) == _rows(here.run_dir, sql)
    assert run_plan(plan_repeated(cfg, "r"), tmp_path / "ray", parallel=True).executed == 0


def test_a_sweep_spec_plays_its_repeated_table_and_the_report_and_viewer_show_it(tmp_path):
    data = {"seeds": [3], "games_per_bucket": 1, "trials_per_game": 1, "modes": ["pure"],
            "buckets": ["2x2_lowVar_mixed"],
            "repeated": {"stage": "stag_hunt", "opponents": ["Grudger", "Alternator"],
                         "games": 3, "rounds": 4, "predict": True},
            "providers": {"dummy": {"tiers": {"C": ["random"]}}}}
    out = run_plan(plan_sweep(parse_spec(data, "t.toml"), "t"), tmp_path / "t", parallel=False)
    got = _rows(out.run_dir, "select stage, opponent, count(*) from repeated_matches "
                             "group by all order by all")
    assert got == [("stag_hunt", "Alternator", 3), ("stag_hunt", "Grudger", 3)]
    assert {r["opponent"] for r in out.summary if r.get("stage")} == {"Grudger", "Alternator"}
    report = build_report(out.run_dir, tmp_path / "report", report_parts())
    assert ">Repeated games</h2>" in report.html.read_text()
    assert "repeated_summary" in report.tables and "repeated_cooperation" in report.figures
    view = build_view(out.run_dir, tmp_path / "view.html", view_sources(), ViewOptions(sample=2))
    assert view.items["repeated"] > 0
    assert "Repeated games: matches" in view.path.read_text()
