"""The openspiel family through the real CLI: the summary's figures, logprob mode's 12 calls
counted at ``distbench serve mock``, the install hint without OpenSpiel, report and view, and a
3-family sweep on Ray that resumes after ``kill -9`` with each match once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

pytest.importorskip("pyspiel")

from cli_server import distbench, start_cli_server, stop_cli_server  # noqa: E402

from distbench.store.catalog import open_run  # noqa: E402


def test_a_run_prints_win_rate_forfeit_rate_regret_and_nash_conv_with_intervals(tmp_path):
    out = distbench("run", "--family", "openspiel", "--game", "kuhn_poker", "--llm-type",
                    "dummy", "--num-games", "20", "--no-parallel", "--run-id", "k", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for column in ("quality [95% CI]", "win rate [95% CI]", "forfeit rate [95% CI]",
                   "regret/move [95% CI]", "NashConv [95% CI]"):
        assert column in out.stdout
    (rec,) = [g for g in json.loads((tmp_path / "results" / "k" / "summary.json").read_text())
              ["groups"] if g.get("mode") == "play"]
    assert rec["matches"] == 40 and rec["reference"] == "equilibrium"
    assert rec["forfeit_rate"] == 0.0  # the dummy always answers a legal number
    low, high = rec["nash_conv_ci95"]
    assert low <= rec["nash_conv"] <= high and rec["nash_conv"] > 0.05
    low, high = rec["regret_per_move_ci95"]
    assert 0 <= low <= rec["regret_per_move"] <= high
    assert rec["quality_ci95"][0] <= rec["quality"] <= rec["quality_ci95"][1]


def test_logprob_mode_reads_the_kuhn_policy_from_12_calls_at_the_mock_server(tmp_path):
    proc, url = start_cli_server("mock", "--port", "0", "--seed", "3")
    try:
        def completions() -> int:
            stats = httpx.get(f"{url}/stats", timeout=10).json()
            return stats["by_path"].get("/v1/completions", 0)

        def run() -> tuple[subprocess.CompletedProcess, int]:
            before = completions()
            out = distbench("run", "--family", "openspiel", "--game", "kuhn_poker", "--mode",
                            "logprob", "--llm-type", "llamacpp", "--llm-model", "mock",
                            "--base-url", url, "--no-cache", "--no-parallel", "--run-id", "lp",
                            cwd=tmp_path)
            return out, completions() - before

        out, sent = run()
        # the same command again has nothing left to play: what it sends is the pre-flight's
        # probes of the endpoint alone
        again, probes = run()
    finally:
        stop_cli_server(proc)
    assert again.returncode == 0, again.stderr
    assert out.returncode == 0, out.stderr
    assert sent - probes == 12
    con = open_run(tmp_path / "results" / "lp")
    assert con.execute("select count(*) from calls").fetchone() == (12,)
    assert con.execute("select count(*), count(*) filter (where parse_status = 'ok') "
                       "from openspiel_policies").fetchone() == (12, 12)
    con.close()
    (rec,) = json.loads((tmp_path / "results" / "lp" / "summary.json").read_text())["groups"]
    assert rec["mode"] == "logprob" and rec["valid_info_states"] == 12
    assert 0 < rec["nash_conv"] < 3


def test_without_open_spiel_the_family_says_how_to_install_it_in_one_line(tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pyspiel.py").write_text("raise ImportError('not installed')\n")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled",
           "PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "distbench.cli", "run", "--family", "openspiel",
                          "--llm-type", "dummy", "--no-parallel"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert lines == ["error: the openspiel family needs OpenSpiel: install it with "
                     ".venv/bin/pip install -e '.[openspiel]'"]


def test_report_and_view_show_the_openspiel_part(tmp_path):
    out = distbench("run", "--family", "openspiel", "--game", "tic_tac_toe", "--opponent",
                    "equilibrium", "--llm-type", "dummy", "--num-games", "3", "--no-parallel",
                    "--run-id", "t", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = tmp_path / "results" / "t"
    rep = distbench("report", str(run), "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    text = "".join(p.read_text() for p in (tmp_path / "rep").glob("*.md"))
    assert "OpenSpiel games" in text and "NashConv" in text
    view = distbench("view", str(run), "--out", str(tmp_path / "v.html"), cwd=tmp_path)
    assert view.returncode == 0, view.stderr
    page = (tmp_path / "v.html").read_text()
    assert "move list with regret" in page and "x(" in page


SPEC = """
name = "three-families"
seeds = [1, 2]
games_per_bucket = 4
trials_per_game = 2
modes = ["pure"]
buckets = ["2x2_lowVar_pure"]

[providers.mock]
type = "llamacpp"
base_url = "{url}"
max_n = 1
cache = false
tiers.A = ["mock-a"]

[negotiation]
games = 2

[openspiel]
games = ["kuhn_poker", "tic_tac_toe"]
matches = 30
opponents = ["random", "equilibrium"]
"""


def test_a_three_family_sweep_resumes_after_kill_9_with_each_match_once(tmp_path, ray_session):
    proc, url = start_cli_server("mock", "--port", "0")
    try:
        spec = tmp_path / "spec.toml"
        spec.write_text(SPEC.format(url=url))
        env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
        argv = [sys.executable, "-m", "distbench.cli", "sweep", "run", str(spec), "--run-id", "s"]
        sweep = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        commits = tmp_path / "results" / "s" / "_commits"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and sweep.poll() is None:
            if commits.is_dir() and len(list(commits.glob("*.json"))) >= 3:
                break
            time.sleep(0.05)
        assert sweep.poll() is None, "the sweep ended before it could be killed"
        os.killpg(sweep.pid, signal.SIGKILL)
        sweep.wait(timeout=30)
        done_before = len(list(commits.glob("*.json")))
        again = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=600)
    finally:
        stop_cli_server(proc)
    assert again.returncode == 0, again.stderr
    assert 3 <= done_before < 20
    con = open_run(tmp_path / "results" / "s")
    rows = con.execute("select game, player_b, count(*), count(distinct match_id) from matches "
                       "group by all order by all").fetchall()
    assert [r[2:] for r in rows] == [(120, 120)] * 4  # 30 matches x 2 seeds x 2 seat orders
    assert con.execute("select count(*) = count(distinct match_id || '/' || ply) "
                       "from moves").fetchone() == (True,)
    assert con.execute("select count(*) from episodes").fetchone()[0] > 0
    assert con.execute("select count(*) from trials").fetchone()[0] == 16
    con.close()
