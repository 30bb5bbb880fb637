"""The example plugin package ``examples/plugins/beauty`` (installed by the README's test
command, as a user would: ``pip install -e examples/plugins/beauty``): a fourth family and a
provider, found through entry points, played on Ray, swept, queried and reported."""

from __future__ import annotations

import textwrap
from importlib.metadata import PackageNotFoundError, distribution

import pytest
from cli_server import distbench as _cli

from distbench.engine.driver import run_config
from distbench.games.registry import families
from distbench.llm.registry import make_spec, providers
from distbench.spec import SpecError, parse_spec
from distbench.store.catalog import open_run
from distbench.store.schema import TIMING_COLUMNS

INSTALL = "pip install -e examples/plugins/beauty (the README's test command does it)"


def _require_plugin():
    try:
        distribution("distbench-beauty")
    except PackageNotFoundError:
        pytest.fail(f"the example plugin is not installed: {INSTALL}")


def test_the_plugin_adds_a_family_and_a_provider_through_entry_points():
    _require_plugin()
    beauty = families()["beauty"]
    assert beauty.main_table == "beauty_games"
    assert [o.name for o in beauty.cli_options()] == ["num_players", "fraction"]
    assert "constant" in providers()


def test_beauty_on_ray_then_query_and_report_from_the_cli(tmp_path):
    """The family-contract issue's check: a parallel run on Ray (``--parallel``: the default
    ``auto`` would play a run this small in this process), a query, a report."""
    _require_plugin()
    run = _cli("run", "--family", "beauty", "--llm-type", "dummy", "--num-games", "20",
               "--run-id", "b", "--parallel", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "starting a local Ray instance" in run.stderr  # parallel: shards as Ray tasks
    query = _cli("query", "results/b", "select count(*) from beauty_games", cwd=tmp_path)
    assert query.returncode == 0, query.stderr
    assert query.stdout.split()[2] == "20"
    report = _cli("report", "results/b", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "results/b/report/report.md").read_text()
    assert "## p-beauty contest" in md and "beauty_summary" in md


def test_the_constant_provider_plays_matrix_games_on_ray(tmp_path):
    _require_plugin()
    run = _cli("run", "--llm-type", "constant", "--llm-model", "Action: 1", "--num-games", "5",
               "--num-trials", "2", "--run-id", "c", "--parallel", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "starting a local Ray instance" in run.stderr
    con = open_run(tmp_path / "results/c")
    assert con.execute("select count(*), count(*) filter (where parse_status = 'ok'), "
                       "min(decision), max(decision) from trials").fetchone() == (10, 10, 0, 0)


def _rows(run_dir) -> list[tuple]:
    con = open_run(run_dir)
    cols = [d[0] for d in con.execute("select * from beauty_games limit 0").description]
    keep = [c for c in cols if c not in TIMING_COLUMNS and c != "run_id"]
    return con.execute(f"select {', '.join(keep)} from beauty_games order by game_id").fetchall()


def test_beauty_rows_are_the_same_on_ray_and_in_process(tmp_path, ray_session):
    _require_plugin()
    from distbench_beauty.family import BeautyRunConfig

    cfg = BeautyRunConfig(llm=make_spec("dummy"), seeds=(1, 2), num_games=7, shard_games=3)
    a = run_config(cfg, tmp_path / "a", parallel=True, num_workers=2)
    b = run_config(cfg, tmp_path / "b", parallel=False)
    assert a.shards == 6
    rows = _rows(a.run_dir)
    assert rows == _rows(b.run_dir) and len(rows) == 14
    again = run_config(cfg, tmp_path / "a", parallel=False)  # resume: nothing left to do
    assert again.executed == 0


def test_a_sweep_with_a_beauty_table(tmp_path):
    _require_plugin()
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        name = "with-beauty"
        games_per_bucket = 2
        trials_per_game = 2
        buckets = ["2x2_lowVar_pure"]
        modes = ["pure"]
        [providers.dummy]
        tiers.A = ["random"]
        [providers.constant]
        tiers.B = ["Answer: 33"]
        [beauty]
        games = 4
        num_players = 3
    """))
    plan = _cli("sweep", "plan", str(spec), cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "beauty: beauty games 8 | beauty calls 8" in plan.stdout
    run = _cli("sweep", "run", str(spec), "--run-id", "s", "--no-parallel", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    con = open_run(tmp_path / "results/s")
    assert con.execute("select player, count(*), min(guess), max(guess) from beauty_games "
                       "where player like 'constant%' group by player").fetchall() == [
        ("constant:Answer: 33", 4, 33, 33)]
    assert con.execute("select count(distinct player) from beauty_games").fetchone()[0] == 2


def test_the_beauty_table_is_validated_like_every_spec_table():
    _require_plugin()
    base = {"providers": {"dummy": {"tiers": {"A": ["random"]}}}}
    assert parse_spec({**base, "beauty": {}}, "t.toml").section("beauty")["games"] == 20
    with pytest.raises(SpecError, match=r"t.toml: beauty.games: must be >= 1"):
        parse_spec({**base, "beauty": {"games": 0}}, "t.toml")
    with pytest.raises(SpecError, match=r"beauty.num_playerz: unknown key \(did you mean "
                                        r"'num_players'\?\)"):
        parse_spec({**base, "beauty": {"num_playerz": 3}}, "t.toml")
    with pytest.raises(SpecError, match=r"t.toml: beauty: must be a table"):
        parse_spec({**base, "beauty": 3}, "t.toml")


def test_a_family_flag_with_another_family_is_one_line(tmp_path):
    _require_plugin()
    out = _cli("run", "--family", "matrix", "--num-players", "3", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == "error: --num-players is a flag of the beauty family, not of matrix"
    helped = _cli("run", "--help", cwd=tmp_path)
    assert "beauty options:" in helped.stdout and "--fraction" in helped.stdout


def test_answers_are_parsed_into_picks_or_a_status():
    _require_plugin()
    from distbench_beauty.runner import best_response, parse

    assert parse("Answer: 22") == (22, "ok")
    assert parse(" 33\n") == (33, "ok")
    assert parse("I would say answer = 7, maybe 9") == (7, "ok")
    assert parse("Answer: 150") == (None, "out_of_range")
    assert parse("no idea") == (None, "no_answer")
    assert parse(None) == (None, "call_failed")
    # Everyone else at 0: the best pick is 0 (its own target is 0).
    assert best_response([0, 0], 3, 2 / 3) == (0, 0.0)
