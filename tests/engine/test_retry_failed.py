"""``--retry-failed``: a run against a server that fails 30% of calls, then the same run against
a healthy server: every trial valid, each (game, trial) once, and only the failed calls sent
again (counted at the server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from ports import free_port

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def _run(url: str, cwd, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", "10", "--num-trials", "5",
            "--shard-trials", "10", "--max-retries", "0", "--run-id", "r", "--no-parallel",
            *extra]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _answers(server) -> int:
    """Model calls the server received (not the pre-flight's model listing)."""
    stats = server.stats()
    return stats["requests"] - stats["by_path"].get("/v1/models", 0)


@pytest.mark.parametrize("max_n", ["1", "128"], ids=["request-per-trial", "n-samples"])
def test_retry_failed_sends_only_the_failed_calls_again(tmp_path, max_n):
    """One request per trial, or one request of n samples per game (the server takes n):
    either way only the failed requests are sent again."""
    port = free_port()
    with start_server(ServerConfig(port=port, seed=3, fail_500=0.3)) as flaky:
        first = _run(flaky.url, tmp_path, "--max-n", max_n)
        sent_first = _answers(flaky)
    assert first.returncode == 3, first.stderr  # ended with failed calls
    assert "resume with --retry-failed" in first.stderr.strip().splitlines()[-1]
    run = tmp_path / "results" / "r"
    con = open_run(run)
    failed = con.execute("select count(*) from trials where parse_status = 'call_failed'"
                         ).fetchone()[0]
    requests = con.execute("select count(*) from calls where status = 'failed'").fetchone()[0]
    per_request = 1 if max_n == "1" else 5
    assert failed == requests * per_request
    con.close()
    assert 1 <= requests and sent_first == 50 // per_request  # about 30% failed
    (group,) = json.loads((run / "summary.json").read_text())["groups"]
    assert (group["call_failed"], group["invalid_answers"]) == (failed, 0)  # not the model's
    assert group["invalid_by_status"] == {"call_failed": failed}
    assert f"failed calls (not the model's, left out) {failed} (--retry-failed" in first.stdout

    with start_server(ServerConfig(port=port, seed=3)) as healthy:
        second = _run(healthy.url, tmp_path, "--max-n", max_n, "--retry-failed")
        sent_again = _answers(healthy)
        third = _run(healthy.url, tmp_path, "--max-n", max_n, "--retry-failed")  # none left
        assert _answers(healthy) == sent_again
    assert second.returncode == 0, second.stderr
    assert f"retrying {requests} failed call(s)" in second.stderr
    assert sent_again == requests  # the others came from the response cache

    con = open_run(run)
    assert con.execute("select count(*), count(distinct trial_id), "
                       "count(*) filter (where parse_status = 'call_failed') from trials"
                       ).fetchone() == (50, 50, 0)
    assert con.execute("select count(*), count(*) filter (where status = 'failed') from calls"
                       ).fetchone() == (50 // per_request, 0)
    assert "all shards already committed" in third.stderr
