"""Sweeps on a real local multi-node Ray cluster (cluster/local.sh: a head and 2 workers on
loopback): completion, a killed worker process, a killed and resumed driver."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from ports import free_port

from distbench.engine.driver import run_plan
from distbench.engine.sweep import plan_sweep
from distbench.mockserver import ServerConfig, start_server
from distbench.spec import parse_spec
from distbench.store.catalog import open_run
from distbench.store.schema import TIMING_COLUMNS

REPO = Path(__file__).resolve().parents[2]
LOCAL_SH = REPO / "cluster" / "local.sh"
RAY = Path(sys.executable).parent / "ray"

pytestmark = pytest.mark.skipif(not RAY.exists(), reason="the ray CLI is not installed")


@pytest.fixture(scope="module")
def cluster():
    port = free_port()
    # a temp folder of the cluster's own: `local.sh stop` kills every process naming its
    # folder, so sharing the session's (RAY_TMPDIR) would stop the session's own Ray too
    tmp = tempfile.mkdtemp(prefix="dcl-")
    env = {**os.environ, "RAY": str(RAY), "RAY_PORT": str(port), "RAY_TMPDIR": tmp}
    subprocess.run(["bash", str(LOCAL_SH), "start", "2"], env=env, check=True, timeout=180,
                   capture_output=True)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", str(LOCAL_SH), "stop"], env=env, timeout=60, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    with start_server(ServerConfig(latency_ms=150, seed=4)) as running:
        yield running


def _spec_file(tmp_path: Path, url: str) -> Path:
    text = f"""
name = "cluster-test"
seeds = [1, 2]
games_per_bucket = 8
trials_per_game = 4
modes = ["pure", "mixed"]
buckets = ["3x3_midVar_mixed", "2x2_lowVar_pure"]
shard_trials = 16

[providers.mock]
type = "llamacpp"
base_url = "{url}"
max_concurrency = 8
max_n = 1                # one request per trial: the exactly-once checks count them
cache = false
tiers.A = ["mock-a"]

[providers.dummy]
tiers.C = ["random"]
"""
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


EXPECTED_TRIALS = 2 * 2 * 8 * 4 * 2 * 2  # seeds x buckets x games x trials x modes x models
MOCK_CALLS = EXPECTED_TRIALS // 2


def _cluster_pids(address: str, pattern: str) -> list[int]:
    """Processes matching ``pattern`` that belong to the cluster at ``address`` (its nodes
    were started with RAY_PORT set, and Ray's workers inherit it)."""
    port = address.rsplit(":", 1)[1]
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    pids = []
    for pid in map(int, found.split()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"RAY_PORT={port}".encode() in environ:
            pids.append(pid)
    return sorted(pids)


def _markers(commits: Path) -> list[Path]:
    """Commit markers (not the temporary file of one being written)."""
    return [p for p in commits.glob("*.json") if not p.name.startswith(".")]


def _sweep(args: list[str], cwd: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    return subprocess.Popen([sys.executable, "-m", "distbench.cli", "sweep", "run", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def _finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out, err


def _rows(run_dir: Path) -> list[tuple]:
    con = open_run(run_dir)
    cols = [d[0] for d in con.execute("select * from trials limit 0").description]
    keep = [c for c in cols if c not in TIMING_COLUMNS and c != "run_id"]
    return con.execute(f"select {', '.join(keep)} from trials order by trial_id, model").fetchall()


def _exactly_once(run_dir: Path) -> None:
    con = open_run(run_dir)
    total, distinct = con.execute(
        "select count(*), count(distinct (shard_id, trial_id)) from trials").fetchone()
    assert total == distinct == EXPECTED_TRIALS
    per_model = con.execute(
        "select model, count(distinct trial_id) from trials group by model order by model"
    ).fetchall()
    assert per_model == [("mock-a", EXPECTED_TRIALS // 2), ("random", EXPECTED_TRIALS // 2)]
    assert con.execute("select count(*) from calls").fetchone()[0] == MOCK_CALLS
    assert con.execute("select count(*), count(distinct game_id) from games").fetchone() == (32, 32)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, server):
    """An uninterrupted run of the same spec, in process."""
    tmp = tmp_path_factory.mktemp("ref")
    from distbench.spec import load_spec

    spec = parse_spec(load_spec(_spec_file(tmp, server.url)))
    run_plan(plan_sweep(spec, "ref"), tmp / "ref", parallel=False)
    return tmp / "ref"


def test_a_sweep_completes_on_a_multinode_cluster(tmp_path, cluster, server, reference):
    spec = _spec_file(tmp_path, server.url)
    out, _ = _finish(_sweep([str(spec), "--run-id", "a", "--address", cluster], cwd=tmp_path))
    run = tmp_path / "results" / "a"
    _exactly_once(run)
    assert _rows(run) == _rows(reference)
    assert "mock-a" in out
    report = run / "report"
    for name in ("big_table_all_runs.csv", "big_table_aggregated.csv", "big_table_aggregated.md",
                 "suite_metadata.json"):
        assert (report / name).is_file()
    meta = json.loads((report / "suite_metadata.json").read_text())
    assert meta["tier_definitions"] == {"mock": {"A": ["mock-a"]}, "dummy": {"C": ["random"]}}


def test_a_plugin_family_and_provider_run_on_the_cluster(tmp_path, cluster):
    """The example plugin (installed by the README's test command): its family and its
    provider, found through entry points by the cluster's workers, not only by the driver."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    out = subprocess.run(
        [sys.executable, "-m", "distbench", "run", "--family", "beauty", "--llm-type", "constant",
         "--llm-model", "Answer: 33", "--num-games", "6", "--seed", "1", "--seed", "2",
         "--address", cluster, "--keep-warm", "0", "--run-id", "p"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "connecting to the Ray cluster" in out.stderr
    con = open_run(tmp_path / "results" / "p")
    assert con.execute("select count(*), min(guess), max(guess), count(distinct shard_id) "
                       "from beauty_games").fetchone() == (12, 33, 33, 2)


def test_a_killed_worker_process_is_retried_and_rows_stay_exactly_once(tmp_path, cluster, server,
                                                                       reference):
    spec = _spec_file(tmp_path, server.url)
    proc = _sweep([str(spec), "--run-id", "b", "--address", cluster], cwd=tmp_path)
    commits = tmp_path / "results" / "b" / "_commits"
    deadline = time.monotonic() + 120
    killed = 0
    while time.monotonic() < deadline and proc.poll() is None and not killed:
        if commits.is_dir() and len(list(commits.glob("*.json"))) >= 3:
            # a warm executor running a shard (or a plain shard task)
            found = (_cluster_pids(cluster, "ray::ShardExecutor.run")
                     or _cluster_pids(cluster, "ray::execute_shard"))
            for pid in found[:1]:
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
        time.sleep(0.05)
    assert killed == 1, "no shard task was running to kill"
    _finish(proc)
    run = tmp_path / "results" / "b"
    _exactly_once(run)
    assert _rows(run) == _rows(reference)


def test_a_killed_driver_resumes_without_repeating_committed_calls(tmp_path, cluster, server,
                                                                    reference):
    spec = _spec_file(tmp_path, server.url)
    run = tmp_path / "results" / "c"
    proc = _sweep([str(spec), "--run-id", "c", "--address", cluster], cwd=tmp_path)
    commits = run / "_commits"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if commits.is_dir() and len(_markers(commits)) >= 16:  # half of 32 shards
            proc.kill()
            break
        time.sleep(0.05)
    proc.communicate(timeout=60)
    assert proc.returncode != 0, "the driver finished before it could be killed"
    before = {p.stem for p in _markers(commits)}
    assert 0 < len(before) < 32
    # The dead driver's tasks die with it, a moment later: wait until the server is quiet.
    last, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < 2.0:
        now = server.stats()["requests"]
        if now != last:
            last, quiet_since = now, time.monotonic()
        time.sleep(0.1)
    server.reset_stats()
    _finish(_sweep(["--resume", str(run), "--address", cluster], cwd=tmp_path))
    con = open_run(run)
    redone = con.execute("select count(*) from calls where not list_contains(?, shard_id)",
                         [sorted(before)]).fetchone()[0]
    stats = server.stats()
    posts = stats["by_path"].get("/v1/chat/completions", 0)
    assert posts == redone  # committed shards made zero calls
    _exactly_once(run)
    assert _rows(run) == _rows(reference)

    server.reset_stats()
    _finish(_sweep(["--resume", str(run), "--address", cluster], cwd=tmp_path))
    assert server.stats()["by_path"].get("/v1/chat/completions", 0) == 0
    _exactly_once(run)


def test_the_next_run_reuses_the_warm_executors_which_then_idle_out(tmp_path, cluster, server,
                                                                     reference):
    # Runs last in this module: it shortens the pool's keep-warm time.
    spec = _spec_file(tmp_path, server.url)
    _finish(_sweep([str(spec), "--run-id", "w1", "--address", cluster], cwd=tmp_path))
    before = _cluster_pids(cluster, "ray::ShardExecutor")
    assert len(before) == 3  # one per CPU: head + 2 workers, 1 CPU each
    _, err = _finish(_sweep([str(spec), "--run-id", "w2", "--address", cluster], cwd=tmp_path))
    assert "connecting to the Ray cluster" in err and "warm executor(s)" not in err
    assert _cluster_pids(cluster, "ray::ShardExecutor") == before  # no new worker processes
    _exactly_once(tmp_path / "results" / "w2")
    assert _rows(tmp_path / "results" / "w2") == _rows(reference)
    # A run that asks for 2 s: executors may even leave while its last shards run elsewhere
    # (a shard sent to one that just left is re-run as a task); the rows stay exactly once.
    _finish(_sweep([str(spec), "--run-id", "w3", "--address", cluster, "--keep-warm", "2"],
                   cwd=tmp_path))
    _exactly_once(tmp_path / "results" / "w3")
    assert _rows(tmp_path / "results" / "w3") == _rows(reference)
    deadline = time.monotonic() + 60
    while _cluster_pids(cluster, "ray::ShardExecutor") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _cluster_pids(cluster, "ray::ShardExecutor") == []  # idle for 2 s: gone
    # the next run has to start a pool again, and says so
    _, err = _finish(_sweep([str(spec), "--run-id", "w4", "--address", cluster, "--keep-warm",
                             "1"], cwd=tmp_path))
    assert "starting 3 warm executor(s) on the cluster" in err
    _exactly_once(tmp_path / "results" / "w4")
