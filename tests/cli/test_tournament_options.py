"""``distbench tournament --option NAME=VALUE``: a family's own settings of its games reach the
pairings (tic-tac-toe instead of Kuhn poker, 20 rounds instead of 10), are part of the run's
identity, and bad names or values are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distbench", "tournament", "--no-parallel",
                           "--resamples", "50", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled",
                               "DISTBENCH_CACHE_DIR": str(cwd / "cache")})


def test_openspiel_game_option_plays_tic_tac_toe(tmp_path):
    out = _cli(tmp_path, "--family", "openspiel", "--players", "solver,random", "--option",
               "game=tic_tac_toe", "--num-instances", "2", "--run-id", "t")
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "results" / "t" / "manifest.json").read_text())
    assert manifest["config"]["tournament"]["settings"]["options"] == {"game": "tic_tac_toe"}
    from distbench.store.catalog import open_run

    con = open_run(tmp_path / "results" / "t")
    try:
        games = {g for (g,) in con.execute("select distinct game from matches").fetchall()}
    finally:
        con.close()
    assert games == {"tic_tac_toe"}
    lines = out.stdout.splitlines()
    assert lines[1].split()[1] == "equilibrium"  # the minimax solver ranks first


def test_repeated_rounds_option_changes_the_games_and_the_identity(tmp_path):
    first = _cli(tmp_path, "--family", "repeated", "--players", "TitForTat,Defector",
                 "--option", "rounds=20", "--num-instances", "1", "--run-id", "r")
    assert first.returncode == 0, first.stderr
    again = _cli(tmp_path, "--family", "repeated", "--players", "TitForTat,Defector",
                 "--num-instances", "1", "--run-id", "r")
    assert again.returncode != 0  # another configuration under the same run id
    assert again.stderr.strip().splitlines()[-1].startswith("error:")


@pytest.mark.parametrize(("args", "needle"), [
    (["--family", "openspiel", "--players", "solver,random", "--option", "gme=x"],
     "--option gme: not a setting of the openspiel family's tournaments (it takes game"),
    (["--family", "repeated", "--players", "TitForTat,Defector", "--option", "rounds=abc"],
     "--option rounds: a value of the wrong kind"),
    (["--family", "fog", "--players", "tier1,tier2", "--option", "noequals"],
     "expected NAME=VALUE"),
    (["--family", "fog", "--players", "tier1,tier2", "--option", "scouting=true",
      "--option", "scouting=false"], "given twice"),
])
def test_bad_options_are_one_line(tmp_path, args, needle):
    out = _cli(tmp_path, *args)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert needle in out.stderr.strip().splitlines()[-1]


def test_failed_calls_are_not_rated_and_exit_3_with_the_retry_command(tmp_path):
    """A model whose calls fail (a body over the size limit: one failed call, no retry) leaves those
    games out of the ratings; the tournament exits 3 naming --retry-failed, and
    --allow-failed-calls exits 0 on the same result."""
    from distbench.mockserver import ServerConfig, start_server
    from distbench.store.catalog import open_run

    with start_server(ServerConfig(seed=2, hostile=0.05, hostile_body="huge")) as server:
        args = ["--family", "fog", "--players", "llamacpp:mock,tier1,tier3", "--base-url",
                server.url, "--num-instances", "3", "--max-tokens", "200", "--run-id", "f"]
        out = _cli(tmp_path, *args)
        assert out.returncode == 3, out.stderr
        last = out.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and "model calls failed" in last
        assert "--retry-failed" in last and "--run-id f" in last
        allowed = _cli(tmp_path, *args, "--allow-failed-calls")
        assert allowed.returncode == 0, allowed.stderr
    con = open_run(tmp_path / "results" / "f")
    try:
        failed_games = con.execute(
            "select count(distinct game_id) from fog_reports where report_status = 'call_failed'"
        ).fetchone()[0]
        model_games = con.execute("select count(*) from fog_games where 'llamacpp:mock' in "
                                  "(agent_a, agent_b)").fetchone()[0]
        rated = con.execute("select matches from ratings where player = 'llamacpp:mock'"
                            ).fetchone()[0]
    finally:
        con.close()
    assert 0 < failed_games < model_games
    assert rated == model_games - failed_games
