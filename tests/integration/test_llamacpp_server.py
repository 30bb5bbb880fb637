"""distbench against a real OpenAI-compatible server: llama-cpp-python's own.

The server is started from the installed package (``python -m llama_cpp.server``) on a free
loopback port, serving the bundled SmolLM2 GGUF or Gemma 3 270M, once per module and one at a
time (the ``server`` fixture is module-scoped and parametrised indirectly, so pytest groups the
tests by server and stops one before starting the next). distbench runs as a user runs it: the
real command line in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from ports import free_port

from distbench.store.catalog import open_run

BUCKET = "3x3_midVar_any"
GAMES, TRIALS = 3, 2
# Pure mode needs at least one valid answer per model. Gemma 3 answers about 80% validly, but
# SmolLM2 about 30% (completion style, plain sampling): 6 trials would all miss about one run
# in eight (the server's answers are not reproducible: it reuses the previous prompt's cache),
# 20 trials about one in a thousand.
PURE_SIZE = {"smollm2": (5, 4), "gemma3": (GAMES, TRIALS)}
STATUSES = {"ok", "no_answer", "out_of_range", "ambiguous", "wrong_length",
            "not_a_distribution", "non_finite", "empty", "low_label_mass", "call_failed"}

# llama.cpp pads a context to a multiple of 256 tokens, and llama-cpp-python 0.3.36 sizes its
# token buffer with the unpadded --n_ctx: with --n_ctx 128 a prompt of 129..255 tokens passes
# its length check and crashes the evaluation (HTTP 500 "could not broadcast input array").
# So the short context is 256 tokens, and the prompts that exceed it are mixed-mode 3x3
# prompts (~300 tokens with both models' tokenizers).
SHORT_CTX = 256


@dataclass
class Server:
    name: str
    url: str
    model_path: Path
    proc: subprocess.Popen
    log: Path

    def tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _model_path(name: str) -> Path:
    from distbench.llm.local import find_model_path

    path = find_model_path() if name == "smollm2" else find_model_path(model="gemma3-270m")
    return Path(path)


SERVERS = {
    # fixture param -> (model, extra server arguments)
    "smollm2": ("smollm2", ()),
    "gemma3": ("gemma3", ()),
    "smollm2-short-ctx": ("smollm2", ("--n_ctx", str(SHORT_CTX))),
}


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _start_server(name: str, log_dir: Path, timeout: float = 120.0) -> Server:
    model, extra = SERVERS[name]
    model_path = _model_path(model)
    port = free_port()
    log = log_dir / f"{name}.log"
    with log.open("wb") as sink:  # a file, not a pipe: the server's output never blocks it
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
             "--host", "127.0.0.1", "--port", str(port), *extra],
            stdout=sink, stderr=subprocess.STDOUT,
        )
    server = Server(name, f"http://127.0.0.1:{port}", model_path, proc, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server ({name}) exited with {proc.returncode} before "
                        f"answering:\n{server.tail()}")
        try:
            if httpx.get(f"{server.url}/v1/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    _stop(proc)
    pytest.fail(f"llama_cpp.server ({name}) did not answer GET /v1/models within "
                f"{timeout:g} s:\n{server.tail()}")


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    """A running llama_cpp.server; ``request.param`` names it (see ``SERVERS``)."""
    srv = _start_server(request.param, tmp_path_factory.mktemp(f"server-{request.param}"))
    yield srv
    _stop(srv.proc)


def on(*names: str):
    """Runs the test against each named server."""
    return pytest.mark.parametrize("server", list(names), indirect=True)


def distbench(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """``distbench <args>`` as a user runs it (as in tests/cli)."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    for key in ("OPENAI_API_KEY", "TOGETHER_API_KEY", "LLAMACPP_API_KEY"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_args(url: str, mode: str, run_id: str, out: Path, *extra: str,
             size: tuple[int, int] = (GAMES, TRIALS)) -> list[str]:
    games, trials = size
    return ["run", "--llm-type", "llamacpp", "--base-url", url, "--style", "completion",
            "--mode", mode, "--num-games", str(games), "--num-trials", str(trials),
            "--bucket", BUCKET, "--run-id", run_id, "--output-dir", str(out), "--no-cache",
            *extra]


def expected_rows(server: Server, mode: str) -> int:
    """Trial rows of ``mode``'s run in :func:`runs` (logprob: one per game)."""
    if mode == "logprob":
        return GAMES
    games, trials = PURE_SIZE[server.name] if mode == "pure" else (GAMES, TRIALS)
    return games * trials


def query(run_dir: Path, sql: str) -> list[tuple]:
    return open_run(run_dir).execute(sql).fetchall()


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


@dataclass
class Run:
    result: subprocess.CompletedProcess
    run_dir: Path

    def check(self) -> None:
        assert self.result.returncode == 0, self.result.stderr

    def json(self, name: str) -> dict:
        return json.loads((self.run_dir / name).read_text())


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory) -> dict[str, Run]:
    """Pure, mixed and logprob runs in completion style on ``server``, one after the other."""
    out = tmp_path_factory.mktemp(f"runs-{server.name}")
    done = {}
    for mode in ("pure", "mixed", "logprob"):
        size = PURE_SIZE[server.name] if mode == "pure" else (GAMES, TRIALS)
        result = distbench(*run_args(server.url, mode, mode, out, "--no-parallel", size=size),
                           cwd=out)
        done[mode] = Run(result, out / mode)
    return done


# --- completion-style runs of both models ------------------------------------------------


@on("smollm2", "gemma3")
@pytest.mark.parametrize("mode", ["pure", "mixed", "logprob"])
def test_every_mode_finishes_with_every_trial_row(server, runs, mode):
    run, rows = runs[mode], expected_rows(server, mode)
    run.check()
    found = query(run.run_dir, "select trial_id, parse_status from trials")
    assert len(found) == rows and len({t for t, _ in found}) == rows
    assert {status for _, status in found} <= STATUSES
    assert not any(status == "call_failed" for _, status in found), found
    manifest = run.json("manifest.json")
    assert manifest["state"] == "complete"


@on("smollm2", "gemma3")
def test_pure_mode_gets_valid_answers(server, runs):
    valid, total = query(runs["pure"].run_dir,
                         "select count(*) filter (where parse_status = 'ok'), count(*) "
                         "from trials")[0]
    assert valid >= 1, query(runs["pure"].run_dir, "select parse_status, raw_text from trials")
    assert total == expected_rows(server, "pure")
    # a valid row carries its decision and its score
    assert query(runs["pure"].run_dir,
                 "select count(*) from trials where parse_status = 'ok' and (decision is null "
                 "or nash_gap is null or nash_gap < 0)")[0][0] == 0


@on("smollm2", "gemma3")
def test_logprob_mode_reads_the_strategy_from_the_labels(server, runs):
    run_dir = runs["logprob"].run_dir
    rows = query(run_dir, "select parse_status, label_mass, strategy from trials")
    assert {status for status, _, _ in rows} <= {"ok", "low_label_mass"}, rows
    masses = [mass for _, mass, _ in rows]
    assert all(mass is not None and 0.0 <= mass <= 1.0 + 1e-9 for mass in masses), rows
    assert sum(masses) / len(masses) >= 0.5, rows
    for status, _, strategy in rows:
        if status == "ok":
            assert len(strategy) == 3 and sum(strategy) == pytest.approx(1.0)
    # logprob mode asks /v1/completions for logprobs, one reading per game (plus follow-ups)
    calls = query(run_dir, "select count(*), count(distinct trial_id) from calls")[0]
    assert calls[0] >= GAMES and calls[1] == GAMES


@on("smollm2", "gemma3")
@pytest.mark.parametrize("mode", ["pure", "mixed", "logprob"])
def test_calls_are_timed_and_answered(server, runs, mode):
    run_dir = runs[mode].run_dir
    calls = query(run_dir, "select status, http_status, latency_ms, queue_ms, attempts, "
                           "cache_hit, endpoint, style from calls")
    assert len(calls) >= expected_rows(server, mode)
    for status, http_status, latency, queue, attempts, cache_hit, endpoint, style in calls:
        assert (status, http_status, attempts, cache_hit) == ("ok", 200, 1, False)
        assert latency > 0 and queue >= 0
        assert endpoint == f"llamacpp:{server.url}" and style == "completion"


@on("smollm2", "gemma3")
@pytest.mark.parametrize("mode", ["pure", "mixed", "logprob"])
def test_manifest_declares_llamacpp_plain_sampling(server, runs, mode):
    llm = runs[mode].json("manifest.json")["config"]["llm"]
    options = dict(llm["options"])
    assert (llm["provider"], llm["style"]) == ("llamacpp", "completion")
    assert options["sampling"] == "llamacpp"
    assert options["base_url"] == server.url and options["cache"] is False


@on("smollm2", "gemma3")
def test_model_is_named_after_the_servers_model_list(server, runs):
    served = httpx.get(f"{server.url}/v1/models", timeout=10).json()["data"][0]["id"]
    assert served.endswith(".gguf")  # llama_cpp.server lists the model's path
    expected = server.model_path.name[: -len(".gguf")]
    for mode, run in runs.items():
        assert query(run.run_dir, "select distinct model from trials") == [(expected,)], mode
        assert query(run.run_dir, "select distinct model from calls") == [(expected,)], mode
        assert {g["model"] for g in run.json("summary.json")["groups"]} == {expected}
    assert f"llamacpp:{expected}" in runs["pure"].result.stdout


@on("smollm2", "gemma3")
@pytest.mark.parametrize("mode", ["pure", "mixed", "logprob"])
def test_summary_counts_no_failed_calls(server, runs, mode):
    run = runs[mode]
    run.check()
    calls = run.json("summary.json")["calls"]
    assert calls["calls"] >= GAMES and calls["failed"] == 0
    assert calls["calls"] == query(run.run_dir, "select count(*) from calls")[0][0]
    assert "model calls failed" not in run.result.stderr


# --- parallel on Ray ------------------------------------------------------------------------


@on("gemma3")
def test_parallel_run_on_ray_gives_the_same_rows(server, runs, ray_session, tmp_path):
    # The command line joins the test session's Ray instance (2 CPUs) instead of starting its
    # own; --keep-warm 0 leaves no executors on it. One game per shard: 3 shards, 2 at once.
    address = ray_session.get_runtime_context().gcs_address
    result = distbench(*run_args(server.url, "pure", "par", tmp_path, "--parallel",
                                 "--num-workers", "2", "--address", address,
                                 "--keep-warm", "0", "--shard-trials", str(TRIALS)),
                       cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "par"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["state"] == "complete" and manifest["execution"]["parallel"] is True
    assert query(run_dir, "select count(distinct shard_id) from trials") == [(GAMES,)]
    sql = "select trial_id, parse_status from trials order by trial_id"
    parallel, serial = query(run_dir, sql), query(runs["pure"].run_dir, sql)
    assert len(parallel) == len(serial) == GAMES * TRIALS
    assert [t for t, _ in parallel] == [t for t, _ in serial]
    assert {s for _, s in parallel} <= STATUSES - {"call_failed"}
    valid = query(run_dir, "select count(*) from trials where parse_status = 'ok' "
                           "and decision is not null and nash_gap >= 0")[0][0]
    assert valid >= 1, query(run_dir, "select parse_status, raw_text from trials")
    calls = json.loads((run_dir / "summary.json").read_text())["calls"]
    assert calls["failed"] == 0 and calls["calls"] == GAMES * TRIALS


# --- failures -------------------------------------------------------------------------------


@on("smollm2")
def test_wrong_base_path_is_one_line_and_no_run(server, tmp_path):
    result = distbench(*run_args(f"{server.url}/nope", "pure", "nope", tmp_path,
                                 "--no-parallel"), cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "404" in lines[0] and "--base-url" in lines[0]
    run_dir = tmp_path / "nope"
    assert not run_dir.exists() or not any(run_dir.iterdir())


@on("smollm2-short-ctx")
def test_prompts_longer_than_the_context_fail_as_data(server, tmp_path):
    result = distbench(*run_args(server.url, "mixed", "ctx", tmp_path, "--no-parallel"),
                       cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = error_lines(result)
    assert len(errors) == 1, result.stderr
    assert f"exceeds the model's context of {SHORT_CTX} tokens" in errors[0], result.stderr
    run_dir = tmp_path / "ctx"
    trials = GAMES * TRIALS
    assert query(run_dir, "select count(*) from trials") == [(trials,)]
    assert query(run_dir, "select count(*) from trials where parse_status = 'call_failed'") \
        == [(trials,)]
    # the server refuses such a prompt (HTTP 400): no retries
    assert query(run_dir, "select distinct status, http_status, attempts from calls") \
        == [("failed", 400, 1)]
    # one request per game's trials (n samples: the context error names no n, so no
    # fallback), each answering every trial of its game
    assert query(run_dir, "select sum(samples) from calls") == [(trials,)]
    calls = json.loads((run_dir / "summary.json").read_text())["calls"]
    assert calls["calls"] == query(run_dir, "select count(*) from calls")[0][0]
    assert calls["failed"] == calls["calls"]
    assert f"context of {SHORT_CTX} tokens" in calls["top_failure"]["explained"]
