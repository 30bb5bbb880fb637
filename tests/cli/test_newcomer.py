"""The small things a newcomer met (issue 37): ``check`` states a run's state, a closed
stdout does not break a run, ``serve mock``
needs no ``--port``, ``fog tournament`` needs no ``--run-id``, ``tournament`` prints a run
header and the ``Query them:`` hint."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from cli_server import distbench, distbench_argv, start_cli_server, stop_cli_server

RUN = ("run", "--llm-type", "dummy", "--num-games", "4", "--num-trials", "2", "--no-parallel")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("newcomer")
    for run_id in ("a", "b"):
        run = distbench(*RUN, "--run-id", run_id, cwd=cwd)
        assert run.returncode == 0, run.stderr
    return cwd


def _set_state(run, state: str, error: str | None) -> None:
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop("shards", None)
    manifest.update(state=state, error=error)
    path.write_text(json.dumps(manifest))


def test_check_states_complete_failed_and_interrupted_runs(results, tmp_path):
    out = distbench("check", "results/a", cwd=results)
    assert out.returncode == 0
    assert out.stdout.strip().endswith("complete: 1 of 1 committed shard(s) verified"), out.stdout
    for state, error in (("failed", "ConnectionError: refused\nmore"), ("interrupted", None)):
        copy = tmp_path / state
        subprocess.run(["cp", "-r", str(results / "results" / "b"), str(copy)], check=True)
        _set_state(copy, state, error)
        line = distbench("check", str(copy), cwd=results).stdout.strip()
        assert f": {state}" in line and "verified" in line and "--run-id" in line, line
        assert "ok (" not in line
    assert "(ConnectionError: refused)" in distbench("check", str(tmp_path / "failed"),
                                                    cwd=results).stdout


def test_a_run_whose_stdout_is_closed_completes(tmp_path):
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    proc = subprocess.Popen(distbench_argv(*RUN, "--run-id", "piped"), cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    proc.stdout.close()  # as `| head -0` would: every write to stdout meets a closed pipe
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert b"BrokenPipe" not in err and b"error:" not in err
    manifest = json.loads((tmp_path / "results" / "piped" / "manifest.json").read_text())
    assert manifest["state"] == "complete"


def test_serve_mock_without_port_listens_on_a_free_one():
    proc, url = start_cli_server("mock")
    try:
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
    finally:
        code, _ = stop_cli_server(proc)
    assert code == 0


def test_fog_tournament_defaults_its_run_id(tmp_path):
    out = distbench("fog", "tournament", "--games-per-pairing", "2", "--agents", "tier1,tier2",
                    "--no-parallel", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = [p.name for p in (tmp_path / "results").iterdir()]
    assert len(runs) == 1 and runs[0].startswith("fog-tournament-"), runs


def test_tournament_prints_a_run_header_and_the_query_hint(tmp_path):
    out = distbench("tournament", "--family", "repeated", "--players", "TitForTat,Defector",
                    "--num-instances", "2", "--resamples", "20", "--no-parallel",
                    "--run-id", "t", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "running a repeated tournament of 2 players (TitForTat, Defector) as run t" in out.stderr
    assert 'Query them: distbench query results/t "select * from ratings"' in out.stderr
