"""The gama family through the real CLI: the summary's figures, GAMA's table from ``distbench
suite gama``, one-line errors, a mixed table of two models (the dummy and a model behind
``distbench serve mock``) and scripted players, and a run that resumes after ``kill -9`` with
every game once and its rows whole."""

from __future__ import annotations

import os
import subprocess
import sys

from cli_server import distbench, kill_9_after_commits, start_cli_server, stop_cli_server

from distbench.store.catalog import open_run


def test_a_dummy_run_prints_the_score_its_interval_the_distance_and_invalid_answers(tmp_path):
    out = distbench("run", "--family", "gama", "--game", "guessing", "--llm-type", "dummy",
                    "--num-games", "3", "--option", "rounds=5", "--no-parallel", "--run-id",
                    "g", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for column in ("GAMA score [95% CI]", "distance to eq. [95% CI]", "invalid", "forfeit"):
        assert column in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.startswith("guessing"))
    assert "[" in line and "0/150" in line  # 3 games x 5 rounds x 10 seats, all valid


def test_suite_gama_prints_gamas_table_with_intervals(tmp_path):
    out = distbench("suite", "gama", "--players", "dummy", "--runs", "2", "--no-parallel",
                    "--run-id", "s", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    head, rule, row = out.stdout.strip().splitlines()[:3]
    assert [c.strip() for c in head.strip("|").split("|")] == [
        "", "Overall", "Guessing", "Bar", "Dollar", "Goods", "Diner", "Auction", "Battle",
        "Pirate"]
    assert row.startswith("| dummy:random") and "[" in row
    con = open_run(tmp_path / "results" / "s")
    assert con.execute("select count(*), count(distinct game) from gama_games").fetchone() == (
        16, 8)
    con.close()


def test_bad_input_is_one_line_and_a_nonzero_exit(tmp_path):
    for args, words in ((("--game", "chess"), "--game chess"),
                        (("--option", "ratio=abc"), "--option ratio=abc"),
                        (("--players", "scripted:nobody"), "scripted:nobody")):
        out = distbench("run", "--family", "gama", "--llm-type", "dummy", *args,
                        "--no-parallel", cwd=tmp_path)
        assert out.returncode != 0
        assert words in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_mixed_table_of_two_models_and_scripted_players_runs(tmp_path):
    proc, url = start_cli_server("mock", "--port", "0")
    try:
        out = distbench("run", "--family", "gama", "--game", "dollar", "--llm-type",
                        "llamacpp", "--llm-model", "mock", "--base-url", url, "--players",
                        "llamacpp,dummy,scripted:random,scripted:equilibrium", "--num-games",
                        "3", "--option", "rounds=4", "--no-parallel", "--run-id", "m",
                        cwd=tmp_path)
    finally:
        stop_cli_server(proc)
    assert out.returncode == 0, out.stderr
    assert "players of mixed tables" in out.stdout
    con = open_run(tmp_path / "results" / "m")
    seats = con.execute("select player, count(*) from gama_players group by all "
                        "order by all").fetchall()
    assert seats == [("dummy:random", 9), ("llamacpp:mock", 9), ("scripted:equilibrium", 6),
                     ("scripted:random", 6)]
    calls = con.execute("select count(*) from calls").fetchone()[0]
    moves = con.execute("select count(*) from gama_moves where player = 'llamacpp:mock'"
                        ).fetchone()[0]
    assert calls == moves > 0  # every answer of the served model is a logged call
    assert con.execute("select count(*) from gama_moves where status <> 'ok'").fetchone() == (0,)
    con.close()


def test_a_run_resumes_after_kill_9_with_every_game_once(tmp_path, ray_session):
    proc, url = start_cli_server("mock", "--port", "0", "--latency-ms", "20")
    try:
        env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
        argv = [sys.executable, "-m", "distbench.cli", "run", "--family", "gama", "--game",
                "goods", "--llm-type", "llamacpp", "--llm-model", "mock", "--base-url", url,
                "--num-games", "40", "--option", "rounds=6", "--run-id", "k", "--yes"]
        commits = tmp_path / "results" / "k" / "_commits"
        done_before = kill_9_after_commits(argv, tmp_path, commits, 1, env)
        again = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=600)
    finally:
        stop_cli_server(proc)
    assert again.returncode == 0, again.stderr
    assert 1 <= done_before < 4
    con = open_run(tmp_path / "results" / "k")
    assert con.execute("select count(*), count(distinct game_id) from gama_games").fetchone() == (
        40, 40)
    # every game's rows whole: ten moves and one round row per round played, ten seats
    bad = con.execute("""
        select g.game_id from gama_games g
        left join (select game_id, count(*) n from gama_moves group by all) m using (game_id)
        left join (select game_id, count(*) n from gama_rounds group by all) r using (game_id)
        left join (select game_id, count(*) n from gama_players group by all) p using (game_id)
        where m.n <> 10 * g.rounds or r.n <> g.rounds or p.n <> 10""").fetchall()
    assert bad == []
    con.close()


def test_report_view_and_a_sweep_spec_table(tmp_path):
    out = distbench("run", "--family", "gama", "--game", "pirate", "--llm-type", "dummy",
                    "--players", "dummy,scripted:equilibrium", "--num-games", "2",
                    "--no-parallel", "--run-id", "p", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = tmp_path / "results" / "p"
    report = distbench("report", str(run), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    text = "".join(p.read_text() for p in (tmp_path / "rep").glob("*.md"))
    assert "GAMA-Bench games" in text and "gama_summary" in text
    view = distbench("view", str(run), "--out", str(tmp_path / "v.html"), cwd=tmp_path)
    assert view.returncode == 0, view.stderr
    assert "round chart" in (tmp_path / "v.html").read_text()
    spec = tmp_path / "spec.toml"
    spec.write_text('name = "g"\nmodes = ["pure"]\nbuckets = ["2x2_lowVar_pure"]\n'
                    'games_per_bucket = 1\n\n[providers.d]\ntype = "dummy"\ntiers.A = '
                    '["random"]\n\n[gama]\ngames = ["guessing", "bar"]\nruns = 2\n')
    plan = distbench("sweep", "plan", str(spec), cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "gama games 4" in plan.stdout
    bad = spec.read_text().replace('"bar"]', '"chess"]')
    spec.write_text(bad)
    plan = distbench("sweep", "plan", str(spec), cwd=tmp_path)
    assert plan.returncode != 0 and "games" in plan.stderr and "Traceback" not in plan.stderr
