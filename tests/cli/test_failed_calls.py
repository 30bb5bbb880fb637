"""Calls that fail at the server are not the model's: through the CLI against the mock server
with failing calls, the run exits 3 with a last line naming ``--retry-failed``, the summary
counts the missing trials and leaves them out of the headline, and a run with no answer has
no headline at all."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from ports import free_port

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def _run(url: str, cwd, run_id: str, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", "8", "--num-trials", "4",
            "--max-retries", "0", "--max-n", "1", "--no-cache", "--run-id", run_id,
            "--no-parallel", *extra]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def test_failed_calls_exit_3_are_counted_missing_and_left_out_of_the_headline(tmp_path):
    with start_server(ServerConfig(port=free_port(), seed=5, fail_500=0.5)) as server:
        out = _run(server.url, tmp_path, "half")
        allowed = _run(server.url, tmp_path, "allowed", "--allow-failed-calls")
    assert out.returncode == 3, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "model calls failed" in last
    assert "resume with --retry-failed: distbench run" in last and "--run-id half" in last
    assert last.rstrip().endswith("--retry-failed")
    assert allowed.returncode == 0, allowed.stderr
    assert "--retry-failed plays them again" in allowed.stderr

    run = tmp_path / "results" / "half"
    (group,) = json.loads((run / "summary.json").read_text())["groups"]
    con = open_run(run)
    failed, answered, valid, quality = con.execute(
        "select count(*) filter (where parse_status = 'call_failed'), "
        "count(*) filter (where answered), count(*) filter (where parse_status = 'ok'), "
        "avg(quality) from matrix_scored").fetchone()
    con.close()
    assert 0 < failed < 32
    assert group["missing_trials"] == group["call_failed"] == failed
    assert group["answered_trials"] == answered == 32 - failed
    # the headline stands on the answered trials only: neither 0 nor chance for a failed call
    assert math.isclose(group["quality"], quality, rel_tol=1e-9)
    assert math.isclose(group["valid_rate"], valid / answered, rel_tol=1e-12)
    assert f"failed calls (not the model's, left out) {failed}" in out.stdout


def test_a_run_without_an_answer_prints_no_headline(tmp_path):
    with start_server(ServerConfig(port=free_port(), seed=5, fail_500=1.0)) as server:
        out = _run(server.url, tmp_path, "dead")
    assert out.returncode == 3, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: all 32 model calls failed") and "--retry-failed" in last
    (group,) = json.loads((tmp_path / "results" / "dead" / "summary.json").read_text())["groups"]
    assert group["missing_trials"] == 32 and group["answered_trials"] == 0
    for key in ("quality", "valid_rate", "quality_of_valid", "honest_exploitability"):
        assert group[key] is None and group[f"{key}_ci95"] is None
    assert "no answer (every call failed): no headline" in out.stdout
    header, _, row = out.stdout.splitlines()[:3]
    cells = dict(zip(header.split(), row.split(), strict=False))
    assert cells["quality"] == "-"
