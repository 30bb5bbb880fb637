"""The command line, as a user runs it: real subprocesses, real Ray, real files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_server import distbench

REPO = Path(__file__).resolve().parents[2]


def test_demo_run_writes_tables_prints_summary_and_answers_queries(tmp_path):
    run = distbench("run", "--num-games", "10", "--num-trials", "10", "--llm-type", "dummy",
                    "--seed", "42", "--run-id", "demo", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "mean gap" in run.stdout and "3x3_midVar_any" in run.stdout
    run_dir = tmp_path / "results" / "demo"
    for name in ("manifest.json", "summary.json"):
        assert (run_dir / name).is_file()
    assert list((run_dir / "trials").glob("*.parquet")) and list((run_dir / "games").glob("*.parquet"))
    summary = json.loads((run_dir / "summary.json").read_text())
    group = summary["groups"][0]
    assert (group["num_games"], group["num_trials_per_game"], group["total_trials"]) == (10, 10, 100)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["state"] == "complete" and manifest["seeds"]["game_seeds"] == [42]

    count = distbench("query", "results/demo", "select count(*) from trials", cwd=tmp_path)
    assert count.returncode == 0, count.stderr
    assert "100" in count.stdout.split()

    as_json = distbench("query", "results/demo", "--file", str(REPO / "queries" / "summary.sql"),
                        "--format", "json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    rows = json.loads(as_json.stdout)
    assert rows[0]["total_trials"] == 100
    assert rows[0]["mean_nash_gap"] == pytest.approx(group["mean_nash_gap"], rel=1e-12)
    assert rows[0]["std_nash_gap"] == pytest.approx(group["std_nash_gap"], rel=1e-9)

    by_name = distbench("query", "results/demo", "--file", "gap_by_bucket", "--format", "csv",
                        cwd=tmp_path)
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout.splitlines()[0].startswith("bucket,mode,num_games")

    exported = distbench("export", "results/demo", "--format", "json", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    trials = json.loads((run_dir / "export" / "trials.json").read_text())
    games = json.loads((run_dir / "export" / "games.json").read_text())
    assert len(trials) == 100 and len(games) == 10
    assert all(1 <= t["action"] <= 3 for t in trials)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["run", "--num-rows", "0"], "--num-rows"),
        (["run", "--num-trials", "-1"], "--num-trials"),
        (["run", "--llm-type", "gpt5000"], "unknown llm type 'gpt5000'"),
        (["run", "--bucket", "3x3_midVar_mixd"], "unknown equilibrium kind"),
        (["run", "--combined", "--mode", "pure"], "--combined"),
        (["run", "--llm-type", "openai"], "set the environment variable OPENAI_API_KEY"),
        (["run", "--llm-type", "llamacpp", "--base-url", "http://127.0.0.1:9"], "cannot reach"),
        (["run", "--rpm", "0"], "--rpm"),
        (["query", "nowhere", "select 1"], "no such run directory"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_input_gives_one_clear_line_and_a_nonzero_exit(tmp_path, args, fragment):
    result = distbench(*args, cwd=tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and fragment in lines[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "results").exists()


def test_bad_sql_is_one_line_and_keeps_the_run(tmp_path):
    ok = distbench("run", "--num-games", "2", "--num-trials", "2", "--no-parallel",
                   "--run-id", "r", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = distbench("query", "results/r", "select nope from trials", cwd=tmp_path)
    assert bad.returncode != 0
    assert bad.stderr.startswith("error: query failed:") and len(bad.stderr.splitlines()) == 1
    again = distbench("query", "results/r", "select count(*) from trials", cwd=tmp_path)
    assert again.returncode == 0 and "4" in again.stdout.split()


def test_debug_shows_the_traceback(tmp_path):
    result = distbench("--debug", "query", "results/none", "select 1", cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_overwrite_refuses_to_delete_a_folder_that_is_not_a_run(tmp_path):
    (tmp_path / "results" / "precious").mkdir(parents=True)
    (tmp_path / "results" / "precious" / "data.txt").write_text("keep me")
    result = distbench("run", "--run-id", "precious", "--overwrite", "--no-parallel", cwd=tmp_path)
    assert result.returncode != 0 and "refusing to overwrite" in result.stderr
    assert (tmp_path / "results" / "precious" / "data.txt").read_text() == "keep me"


def test_a_run_another_process_is_writing_is_neither_joined_nor_overwritten(tmp_path):
    first = distbench("run", "--llm-type", "dummy", "--num-games", "4", "--num-trials", "2",
                      "--run-id", "busy", "--no-parallel", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run_dir = tmp_path / "results" / "busy"
    holder = subprocess.Popen(  # stands in for a driver still writing the run
        [sys.executable, "-c", "import time\nfrom distbench.store.writer import exclusive\n"
         f"with exclusive({str(run_dir)!r}):\n    print('held', flush=True)\n"
         "    time.sleep(120)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for extra in ((), ("--overwrite",)):
            result = distbench("run", "--llm-type", "dummy", "--num-games", "4",
                               "--num-trials", "2", "--run-id", "busy", "--no-parallel", *extra,
                               cwd=tmp_path)
            assert result.returncode != 0
            lines = result.stderr.strip().splitlines()
            assert lines[-1] == ("error: results/busy is being written by another distbench "
                                 f"process (pid {holder.pid}); wait for it to finish, or choose "
                                 "another --run-id"), result.stderr
            assert "Traceback" not in result.stderr
            assert (run_dir / "summary.json").exists()  # nothing of the run was lost
    finally:
        holder.kill()
        holder.wait()


def test_a_canary_key_reaches_no_file_or_log_of_a_real_ray_run(tmp_path):
    """The whole stack: CLI, local Ray cluster, endpoint actor, HTTP, Parquet, Ray's logs."""
    from distbench.mockserver import ServerConfig, start_server

    canary = "canary-sk-71c0ffee5e"
    env_key = {"LLAMACPP_API_KEY": canary}
    with start_server(ServerConfig(api_key=canary, fail_500=0.2, seed=2)) as server:
        result = subprocess.run(
            [sys.executable, "-m", "distbench.cli", "--debug", "run", "--llm-type", "llamacpp",
             "--base-url", server.url, "--num-games", "3", "--num-trials", "3", "--no-cache",
             "--max-retries", "0", "--max-n", "1", "--parallel", "--run-id", "canary"],
            cwd=tmp_path, env={**os.environ, "RAY_AUTH_MODE": "disabled", **env_key},
            capture_output=True, text=True, timeout=300,
        )
        assert result.returncode == 3, result.stderr  # some calls failed (exit status 3)
        bad = subprocess.run(
            [sys.executable, "-m", "distbench.cli", "run", "--llm-type", "llamacpp",
             "--base-url", server.url, "--no-parallel", "--run-id", "bad"],
            cwd=tmp_path, env={**os.environ, "LLAMACPP_API_KEY": canary + "-wrong"},
            capture_output=True, text=True, timeout=300,
        )
    assert bad.returncode != 0 and "LLAMACPP_API_KEY" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    for text in (result.stdout, result.stderr, bad.stdout, bad.stderr):
        assert canary not in text
    failed = json.loads(distbench("query", "results/canary", "select count(*) as n from calls "
                                  "where status = 'failed'", "--format", "json", cwd=tmp_path).stdout)
    assert failed[0]["n"] > 0  # the faults happened, and their error texts were stored
    # the run's own Ray session (wherever RAY_TMPDIR put it), as the driver logged it
    (session,) = re.findall(r"Ray session folder: (\S+)", result.stderr)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    files += [p for p in (Path(session) / "logs").rglob("*") if p.is_file()]
    assert len(files) > 10
    for path in files:
        assert canary.encode() not in path.read_bytes(), path
