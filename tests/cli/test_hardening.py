"""Hostile run folders and oversized requests at the command line: one ``error:`` line, no
traceback, a non-zero exit, and an answer within seconds."""

from __future__ import annotations

import json
import time

import pytest
from cli_server import distbench


def _one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("hard")
    for run_id in ("a", "b"):
        run = distbench("run", "--llm-type", "dummy", "--num-games", "4", "--num-trials", "2",
                        "--run-id", run_id, "--no-parallel", cwd=cwd)
        assert run.returncode == 0, run.stderr
    return cwd


def test_a_marker_pointing_at_the_environment_is_one_line_naming_it(results):
    evil = results / "results" / "a" / "_commits" / "evil.json"
    evil.write_text(json.dumps({"files": {"x": {"file": "../../../../proc/self/environ"}}}))
    try:
        out = distbench("query", "results/a", "select * from read_text('/proc/self/environ')",
                        cwd=results)
    finally:
        evil.unlink()
    line = _one_error_line(out)
    assert "_commits/evil.json" in line and "PATH=" not in out.stdout + out.stderr


def test_check_lists_damaged_shards_and_a_resume_repairs_them(results):
    run = results / "results" / "b"
    assert distbench("check", "results", cwd=results).returncode == 0
    victim = sorted((run / "trials").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:50])
    out = distbench("check", "results/b", cwd=results)
    assert out.returncode == 1 and victim.name in out.stdout
    assert victim.name in _one_error_line(distbench("query", "results/b",
                                                    "select count(*) from trials", cwd=results))
    resumed = distbench("run", "--llm-type", "dummy", "--num-games", "4", "--num-trials", "2",
                        "--run-id", "b", "--no-parallel", cwd=results)
    assert resumed.returncode == 0, resumed.stderr
    assert "damaged: trials/" in resumed.stderr and "played again" in resumed.stderr
    assert distbench("check", "results/b", cwd=results).returncode == 0
    out = distbench("query", "results/b", "select count(*), count(distinct trial_id) from trials",
                    "--format", "csv", cwd=results)
    assert out.stdout.splitlines()[1] == "8,8"


@pytest.mark.parametrize("args,says", [
    (["--num-games", "1000000000000"], "shards"),
    (["--num-games", "1", "--num-trials", "10000000000"], "num_trials must be at most"),
    (["--num-games", "1", "--num-trials", "1000000000", "--shard-trials", "1"], "parts of a game"),
    (["--num-games", "10", "--shard-trials", "1000000000"], "shard_trials must be at most"),
    (["--family", "fog", "--agent", "tier1", "--num-games", "1000000000000"], "shards"),
    (["--family", "negotiation", "--llm-type", "scripted:fair", "--num-games",
      "1000000000000"], "shards"),
    (["--run-id", "run*"], "--run-id must be"),
    (["--run-id", "br[1]"], "--run-id must be"),
    (["--run-id", "a\nb"], "--run-id must be"),
    (["--run-id", "x" * 300], "--run-id must be"),
    (["--run-id", "../up"], "--run-id must be"),
    (["--run-id", ".hidden"], "--run-id must be"),
])
def test_oversized_or_unsafe_runs_are_refused_at_once_in_one_line(tmp_path, args, says):
    args = [*args] if "--llm-type" in args else ["--llm-type", "dummy", *args]
    started = time.monotonic()
    out = distbench("run", *args, cwd=tmp_path)
    assert time.monotonic() - started < 10  # the process's start-up included; planning: none
    assert says in _one_error_line(out)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
