"""A hostile OpenAI-compatible server (the mock server's ``hostile`` fault, every body of
``HOSTILE_BODIES``) against real runs over loopback: no run is lost, each bad body is one
failed call or a NULL count with a note naming the field, nothing that broke is cached, a
drip and a 1 GB body end within the timeout in bounded memory, and no secret of a base URL's
query string reaches a file. The pure hooks: tests/llm/test_hostile_unit.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cli_server import distbench_argv, start_cli_server, stop_cli_server

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.faults import HOSTILE_HTML
from distbench.store.catalog import open_run

GAMES, TRIALS = 5, 4
CALLS = GAMES * TRIALS


def _config(url: str, cache_path: Path | None = None, **opts) -> MatrixRunConfig:
    base = dict(base_url=url, rpm=None, max_concurrency=4, timeout=10.0, max_retries=0,
                cache=cache_path is not None, cache_path=str(cache_path) if cache_path else None,
                max_n=1, price_in=1.0, price_out=2.0)
    base.update(opts)
    return MatrixRunConfig(
        buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=GAMES, num_trials=TRIALS,
        modes=("pure",), llm=make_spec("llamacpp", "mock", "chat", **base), shard_trials=20,
    )


def _rows(run_dir: Path, sql: str, params: list | None = None) -> list[tuple]:
    return open_run(run_dir).execute(sql, params or []).fetchall()


# (hostile body, what each call that got it becomes, the words its note or error holds)
ODD_BODIES = [
    ("usage_1e30", "null", "usage.prompt_tokens: 1e+30 is not a token count"),
    ("usage_nan", "null", "usage.prompt_tokens: nan is not a token count"),
    ("usage_inf", "null", "usage.completion_tokens: inf is not a token count"),
    ("usage_int64_max", "null", "usage.prompt_tokens: an integer of 63 bits is not a token count"),
    ("usage_negative", "null", "usage.prompt_tokens: -40 is not a token count"),
    ("usage_string_count", "null", "usage.prompt_tokens: the string 'forty' is not a token count"),
    ("usage_list_count", "null", "usage.prompt_tokens: a list is not a token count"),
    ("usage_list", "null", "usage: a list is not a JSON object"),
    ("usage_string", "null", "usage: a str is not a JSON object"),
    ("surrogate", "note", "text: 1 lone surrogate(s) replaced by U+FFFD"),
    ("index_string", "failed", "choices[0].index: 'zero' is not an integer"),
    ("index_duplicate", "failed", "choices[1].index: 0 appears twice"),
    ("index_range", "failed", "choices[0].index: 7 is out of range (0 to 0)"),
]


@pytest.mark.parametrize(("body", "becomes", "words"), ODD_BODIES, ids=[b[0] for b in ODD_BODIES])
def test_a_hostile_body_is_one_failed_call_or_a_null_count_never_a_lost_run(
        tmp_path, body, becomes, words):
    with start_server(ServerConfig(seed=5, hostile=0.3, hostile_body=body)) as server:
        out = run_config(_config(server.url, tmp_path / "cache.sqlite"), tmp_path / "r",
                         parallel=False)
        hostile = server.stats()["faults"].get("hostile", 0)
    run = out.run_dir
    assert 0 < hostile < CALLS
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"
    assert _rows(run, "select count(*) from trials") == [(CALLS,)]
    [(failed, nulls, noted, named)] = _rows(run, (
        "select count(*) filter (where status = 'failed'), "
        "count(*) filter (where status = 'ok' and (prompt_tokens is null "
        "or completion_tokens is null)), count(*) filter (where notes <> ''), "
        "count(*) filter (where contains(notes, ?) or contains(error, ?)) from calls"),
        [words, words])
    expected = {"null": (0, hostile, hostile), "note": (0, 0, hostile),
                "failed": (hostile, 0, 0)}[becomes]
    assert (failed, nulls, noted) == expected
    assert named == hostile
    if becomes == "failed":
        assert _rows(run, "select count(*) from trials where parse_status = 'call_failed'") == [
            (hostile,)]
    if becomes == "note":
        [(text,)] = _rows(run, "select any_value(response_text) from calls where notes <> ''")
        assert "\ufffd" in text
    # The cost is computed from plausible counts only: the mock's counts are a few dozen
    # tokens a call, so 20 calls at $1/$2 per million cost well under a cent.
    cost = out.calls["cost_usd"]
    assert cost is not None and 0 <= cost < 0.01


def test_a_body_that_failed_is_not_cached_and_a_resume_after_the_fix_completes(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with start_server(ServerConfig(seed=5, hostile=0.3, hostile_body="index_string")) as bad:
        port = bad.port
        first = run_config(_config(bad.url, cache), tmp_path / "r", parallel=False)
        hostile = bad.stats()["faults"]["hostile"]
    assert _rows(first.run_dir, "select count(*) from calls where status = 'failed'") == [
        (hostile,)]
    with start_server(ServerConfig(port=port, seed=5)) as fixed:  # the same URL, fixed
        again = run_config(_config(fixed.url, cache), tmp_path / "r", parallel=False,
                           retry_failed=True)
        asked = fixed.stats()["by_path"].get("/v1/chat/completions", 0)
    assert again.retried == 1
    # Only the failed calls reached the model again; the others came from the cache.
    assert asked == hostile
    assert _rows(again.run_dir, "select count(*), count(*) filter (where status = 'ok'), "
                 "count(*) filter (where cache_hit) from calls") == [(CALLS, CALLS, CALLS - hostile)]


@pytest.mark.parametrize("body", ["retry_after_huge", "retry_after_inf", "retry_after_2099"])
def test_an_unbounded_retry_after_waits_the_cap(tmp_path, body):
    with start_server(ServerConfig(seed=5, hostile=0.2, hostile_body=body)) as server:
        t0 = time.monotonic()
        out = run_config(_config(server.url, max_retries=3, retry_after_cap=1.0),
                         tmp_path / "r", parallel=False)
        elapsed = time.monotonic() - t0
        hostile = server.stats()["faults"]["hostile"]
    assert hostile > 0 and elapsed < 60
    waits = _rows(out.run_dir, "select attempts, queue_ms from calls where attempts > 1")
    assert waits and all(1000.0 * (a - 1) <= ms < 1400.0 * (a - 1) + 500 for a, ms in waits)
    assert _rows(out.run_dir, "select count(*) from trials") == [(CALLS,)]



def _cli(out: Path, *args: str) -> tuple[int, str, int, float]:
    """``distbench <args>`` in a child process (off a terminal, without API keys): (exit code,
    stdout + stderr, its peak RSS in bytes, its wall time in seconds).

    The peak is the child's own ``VmHWM``, read every 20 ms while it runs (its rusage
    ``ru_maxrss`` would not do: Linux carries the parent's peak over fork and exec)."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    for key in ("OPENAI_API_KEY", "TOGETHER_API_KEY", "LLAMACPP_API_KEY"):
        env.pop(key, None)
    log = out / f"cli-{time.monotonic_ns()}.log"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    peak = 0
    with open(log, "w") as fh:
        proc = subprocess.Popen(distbench_argv(*args), stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
        while proc.poll() is None:
            peak = max(peak, _hwm_bytes(proc.pid))
            time.sleep(0.02)
    elapsed = time.monotonic() - t0
    text = log.read_text()
    log.unlink()
    return proc.returncode, text, peak, elapsed


def _hwm_bytes(pid: int | str) -> int:
    """Peak resident memory of process ``pid`` so far (``VmHWM``), 0 when gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _run_args(out: Path, url: str, *flags: str) -> list[str]:
    return ["run", "--llm-type", "llamacpp", "--base-url", url, "--style", "chat",
            "--num-games", "1", "--num-trials", "4", "--max-n", "1", "--max-concurrency", "4",
            "--no-parallel", "--no-cache", "--output-dir", str(out), *flags]


def test_a_drip_and_a_1_gb_body_end_within_the_timeout_in_bounded_memory(tmp_path):
    """Four calls at once: each answer drips a byte a second (hundreds of seconds for the
    whole body), or is 1 GB long (5.5 GB of RSS when read whole). Each ends within
    ``--timeout``; the run's peak RSS exceeds that of the same run against a sound server by
    less than 200 MB."""
    with start_server(ServerConfig(seed=1)) as sound:
        code, text, base_rss, base_s = _cli(tmp_path, *_run_args(
            tmp_path, sound.url, "--run-id", "sound", "--timeout", "3"))
    assert code == 0, text
    for body in ("drip", "huge"):
        with start_server(ServerConfig(seed=1, hostile=1.0, hostile_body=body)) as server:
            code, text, rss, elapsed = _cli(tmp_path, *_run_args(
                tmp_path, server.url, "--run-id", body, "--timeout", "3", "--max-retries", "0"))
        assert code == 3 and "error: all 4 model calls failed" in text, text
        rows = _rows(tmp_path / body, "select status, error, latency_ms from calls")
        assert len(rows) == 4 and {r[0] for r in rows} == {"failed"}
        expected = "timeout after 3 s" if body == "drip" else "response body too large"
        assert all(r[1].startswith(expected) for r in rows), rows
        assert max(r[2] for r in rows) < 3000 + 1000
        assert elapsed < base_s + 3 + 20, (body, elapsed, base_s)
        assert rss - base_rss < 200 * 2**20, (body, rss / 2**20, base_rss / 2**20)
        print(f"\n{body}: {elapsed:.1f} s (sound {base_s:.1f} s), peak RSS {rss / 2**20:.0f} MB "
              f"(sound {base_rss / 2**20:.0f} MB), wire {max(r[2] for r in rows):.0f} ms")


def test_no_secret_of_a_base_urls_query_reaches_a_file_or_the_terminal(tmp_path):
    canaries = ("CANARY-Q-key-0001", "CANARY-Q-token-0002", "CANARY-Q-pw-0003")
    with start_server(ServerConfig(seed=2, fail_500=0.3)) as server:
        host = server.url.split("://", 1)[1]
        url = (f"http://user:{canaries[2]}@{host}/v1?api-key={canaries[0]}"
               f"&token={canaries[1]}")
        results = tmp_path / "results"
        outputs = []
        code, text, _, _ = _cli(tmp_path, "--debug", *_run_args(
            results, url, "--run-id", "r", "--max-retries", "1", "--price", "1,2",
            "--timeout", "5"))
        outputs.append(text)
        assert code == 0, text
        assert server.stats()["by_path"].get("/v1/chat/completions", 0) >= 4
    run = results / "r"
    assert _rows(run, "select count(*) from calls") == [(4,)]
    [(endpoint,)] = _rows(run, "select distinct endpoint from calls")
    assert endpoint == f"llamacpp:http://***@{host}/v1?api-key=***&token=***"
    for args in (["report", str(run), "--out", str(tmp_path / "report")],
                 ["view", str(run), "--out", str(tmp_path / "view.html")],
                 ["export", str(run), "--format", "json", "--out", str(tmp_path / "export")],
                 ["query", str(run), "select endpoint, error from calls"],
                 ["--debug", "check", str(run)]):
        code, text, _, _ = _cli(tmp_path, *args)
        assert code == 0, (args, text)
        outputs.append(text)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".svg" for p in files) and any(p.suffix == ".md" for p in files)
    assert any(p.suffix == ".html" for p in files) and any(p.suffix == ".parquet" for p in files)
    # The URL is there, redacted: in the --debug log (httpx's request lines), the manifest,
    # the report's tables.
    assert "api-key=***&token=***" in outputs[0]
    shown = [p.suffix for p in files if b"api-key=***" in p.read_bytes()]
    assert {".json", ".md", ".html"} <= set(shown), shown
    for canary in canaries:
        leaks = [str(p) for p in files if canary.encode() in p.read_bytes()]
        leaks += [f"output {i}" for i, text in enumerate(outputs) if canary in text]
        assert not leaks, (canary, leaks)


def test_html_in_a_model_name_and_its_answers_is_escaped_in_the_markdown_report(tmp_path):
    model = "<img src=x onerror=alert(1)>"
    with start_server(ServerConfig(seed=2, hostile=1.0, hostile_body="html")) as server:
        results = tmp_path / "results"
        code, text, _, _ = _cli(tmp_path, *_run_args(results, server.url, "--run-id", "h",
                                                     "--llm-model", model))
        assert code == 0, text
    run = results / "h"
    assert _rows(run, "select count(*) from calls where contains(response_text, ?)",
                 [HOSTILE_HTML]) == [(4,)]
    for args in (["report", str(run), "--out", str(tmp_path / "report")],
                 ["view", str(run), "--out", str(tmp_path / "view.html")]):
        code, text, _, _ = _cli(tmp_path, *args)
        assert code == 0, (args, text)
    md = (tmp_path / "report" / "report.md").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in md  # the model's name, shown as text
    pages = [md, (tmp_path / "report" / "report.html").read_text(),
             (tmp_path / "view.html").read_text()]
    assert all("<img src=x" not in page for page in pages)


_CLIENT = """
import asyncio, json, sys, time
from distbench.llm.base import Request
from distbench.llm.http import OpenAICompatibleBackend
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
with start_server(ServerConfig(hostile=1.0, hostile_body=sys.argv[1])) as server:
    spec = make_spec("llamacpp", "m", "chat", base_url=server.url, timeout=3.0, max_retries=0,
                     rpm=None, max_concurrency=4)
    t0 = time.monotonic()
    out = asyncio.run(OpenAICompatibleBackend(spec).generate(
        [Request(prompt=f"p{i}", seed=i) for i in range(4)]))
    hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    print(json.dumps({"s": time.monotonic() - t0, "errors": [o.error for o in out],
                      "rss_mb": int(hwm[0].split()[1]) / 1024}))
"""


@pytest.mark.parametrize("body", ["huge", "drip"])
def test_four_hostile_bodies_at_once_take_under_200_mb_in_all(body):
    """The HTTP client alone (with the server in its process): four 1 GB bodies or four
    drips at once end within the 3 s timeout, the process's peak RSS (``VmHWM``) under
    200 MB."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    done = subprocess.run([sys.executable, "-c", _CLIENT, body], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    expected = "timeout after 3 s" if body == "drip" else "response body too large"
    assert len(got["errors"]) == 4 and all(e.startswith(expected) for e in got["errors"])
    assert got["s"] < 3 + 1.5 and got["rss_mb"] < 200, got
    print(f"\n{body}: {got['s']:.1f} s, peak RSS {got['rss_mb']:.0f} MB")


def test_distbench_serve_mock_serves_a_hostile_body_and_refuses_an_unknown_one(tmp_path):
    proc, url = start_cli_server("mock", "--port", "0", "--hostile", "1",
                                 "--hostile-body", "usage_nan")
    try:
        answer = httpx.post(url + "/v1/chat/completions", timeout=10, json={
            "model": "m", "messages": [{"role": "user", "content": "hi"}]})
    finally:
        code, _ = stop_cli_server(proc)
    assert answer.status_code == 200 and b'"prompt_tokens": NaN' in answer.content
    assert code == 0
    code, text, _, _ = _cli(tmp_path, "serve", "mock", "--port", "0", "--hostile-body", "nope")
    assert code != 0 and text.startswith("error: hostile_body must be one of usage_1e30, ")
    assert len(text.strip().splitlines()) == 1
