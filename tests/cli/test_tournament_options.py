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
                          text=True, timeout=300, env={**os.environ, "RAY_AUTH_MODE": "disabled"})


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
