"""``--execution batch`` under the red team's attacks (issue 33, items 2-7), against the mock
server's Batch API with its injected faults, as a user runs it (the CLI in a subprocess, real
HTTP over loopback): a hostile result line is one failed call sent again once, never a dead
run; a create answered 502 that created the batch anyway is found, not paid twice; a batch
the provider forgot (404) has its requests sent again; ``--retry-failed`` retries a batch
run's failed requests (and a live retry asks only those, the batch answers being cached); a
failed batch's errors reach the rows; a batch that never ends is cancelled at its window's
end with status lines meanwhile; a result download answered 500 is tried again; the batch
records hold no password or query token of the base URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

KEY = "sk-ant-batch-safety-3"
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "ANTHROPIC_API_KEY": KEY}
GAMES = 10  # 50 requests


def _argv(url: str, run_id: str, *extra: str, wire: str = "openai") -> list[str]:
    llm = (["--llm-type", "anthropic", "--rpm", "100000"] if wire == "anthropic"
           else ["--llm-type", "llamacpp", "--max-n", "1"])
    return [sys.executable, "-m", "distbench", "run", *llm, "--llm-model", "mock",
            "--base-url", url, "--num-games", str(GAMES), "--num-trials", "5", "--run-id",
            run_id, "-y", "--execution", "batch", *extra]


def _run(argv: list[str], cwd, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=env or ENV)


def _no_cache(argv: list[str]) -> list[str]:
    return [*argv, "--no-cache"]


def _query(run_dir, sql: str) -> list[tuple]:
    con = open_run(run_dir)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _trials(run_dir) -> tuple:
    """(trials, distinct trials, trials whose call failed)."""
    return _query(run_dir, "select count(*), count(distinct (game_id, trial_id)), "
                           "count(*) filter (where parse_status = 'call_failed') from trials")[0]


def _errors(run_dir) -> list[str]:
    return [r[0] for r in _query(run_dir, "select error from calls where status = 'failed'")]


@pytest.mark.parametrize("wire,fault,answered", [
    ("openai", "line_surrogate", 50),  # a lone surrogate in the text: read as live, U+FFFD
    ("openai", "line_deep", 49),       # nesting 100,000 deep: one failed line
    ("openai", "line_huge", 49),       # a 10 MB answer: over the live cap, one failed line
    ("openai", "line_conflict", 49),   # two different lines for one request: neither used
    ("openai", "line_repeat", 50),     # the same line twice: one answer
    ("anthropic", "line_deep", 49),
    ("anthropic", "line_surrogate", 50),
])
def test_a_hostile_result_line_is_one_failed_call_sent_again_once(tmp_path, wire, fault,
                                                                  answered):
    config = ServerConfig(seed=4, batch_faults=(fault,), batch_faulty=1,
                          api_key=KEY if wire == "anthropic" else None)
    with start_server(config) as server:
        out = _run(_no_cache(_argv(server.url, "h", wire=wire)), tmp_path)
        batches = server.stats()["batches"]
    assert out.returncode == 0, out.stderr
    assert f": {answered} of 50 answered" in out.stderr  # never "51 of 50"
    assert (batches["created"], batches["requests"]) == \
        ((1, 50) if answered == 50 else (2, 51))  # the failed line's request once more
    assert _trials(tmp_path / "results" / "h") == (50, 50, 0)
    if fault == "line_surrogate":
        assert _query(tmp_path / "results" / "h", "select count(*) from calls where "
                      "response_text like '%\ufffd%' and notes like '%surrogate%'") == [(1,)]


def test_a_create_answered_502_is_found_by_its_metadata_not_paid_twice(tmp_path):
    config = ServerConfig(seed=4, batch_faults=("create_lost",), batch_faulty=1)
    with start_server(config) as server:
        out = _run(_no_cache(_argv(server.url, "c")), tmp_path)
        batches = server.stats()["batches"]
    assert out.returncode == 0, out.stderr
    assert "was created although its answer was lost" in out.stderr
    assert (batches["created"], batches["requests"], batches["completed"]) == (1, 50, 50)
    assert _trials(tmp_path / "results" / "c") == (50, 50, 0)
    assert not list((tmp_path / "results" / "c" / "batches").glob("*.pending"))


def test_a_message_batch_create_answered_502_is_found_in_the_list_not_paid_twice(tmp_path):
    # a Message Batch has no metadata: it is found among the batches created since the
    # pending note was written, with as many requests; the resume buys nothing twice
    config = ServerConfig(seed=4, batch_faults=("create_lost",), batch_faulty=1, api_key=KEY)
    with start_server(config) as server:
        out = _run(_no_cache(_argv(server.url, "m", wire="anthropic")), tmp_path)
        again = _run(_no_cache(_argv(server.url, "m", wire="anthropic")), tmp_path)
        batches = server.stats()["batches"]
        creates = server.stats()["by_path"].get("/v1/messages/batches", 0)
    assert out.returncode == 0, out.stderr
    assert again.returncode == 0, again.stderr
    assert "was created although its answer was lost" in out.stderr
    assert (batches["created"], batches["requests"], batches["completed"]) == (1, 50, 50)
    assert creates >= 2  # the create that was answered 502, then the list
    assert _trials(tmp_path / "results" / "m") == (50, 50, 0)
    assert not list((tmp_path / "results" / "m" / "batches").glob("*.pending"))


def _plan(url: str, run_id: str, provider: str = "llamacpp"):
    from distbench.games.matrix.plan import MatrixRunConfig
    from distbench.llm.registry import make_spec, resolve_spec

    options = {"max_n": 1} if provider == "llamacpp" else {}
    spec = resolve_spec(make_spec(provider, "mock", None, base_url=url, cache=False,
                                  **options))
    return MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(42,), num_games=4,
                           num_trials=5, modes=("pure",), llm=spec, max_tokens=16,
                           shard_trials=20).plan(run_id), spec


def test_a_resume_after_a_lost_create_finds_the_batch_before_creating_one(tmp_path):
    # a driver died after the provider created its batch, before the record was written:
    # only its pending note stands. The resume looks the batch up by the tag in its
    # metadata and polls it instead of creating another
    from distbench.engine.batching import FOLDER, BatchLimits, BatchRun, _chunk_tag, _pending_note
    from distbench.llm.batch import batch_line, client_for

    lines: list[str] = []
    with start_server(ServerConfig(seed=4)) as server:
        plan, spec = _plan(server.url, "p")
        run = BatchRun(plan.shards, tmp_path, BatchLimits(poll_s=0.05), on_stage=lines.append)
        ids = [k for s in plan.shards for k in run.keys[s.shard_id]]
        client = client_for(spec)
        client.submit([batch_line(*run.wanted[k])[2] for k in ids], "/v1/chat/completions",
                      metadata={"distbench_run": tmp_path.name,
                                "distbench_batch": _chunk_tag(ids)})
        client.close()
        _pending_note(tmp_path, ids).write_text("{}")
        played = [result for _, result in run.results()]
        batches = server.stats()["batches"]
    assert len(played) == len(plan.shards)
    assert (batches["created"], batches["requests"]) == (1, 20)
    assert any("was created although its answer was lost" in line for line in lines), lines
    assert not list((tmp_path / FOLDER).glob("*.pending"))


@pytest.mark.parametrize("note_later,created", [(0.0, 2), (3600.0, 3)])
def test_a_resume_adopts_the_message_batch_whose_results_name_its_requests(
        tmp_path, monkeypatch, note_later, created):
    # the driver died after Anthropic created its batch: only the pending note (with its
    # time) stands. Since then two batches of 20 requests were created: the run's own and,
    # newer, one of other requests. The resume reads both ended batches' results and adopts
    # its own, creating none. With a note written an hour after both batches, neither can be
    # the one it stands for: the batch is created
    import time

    from distbench.engine.batching import FOLDER, BatchLimits, BatchRun, _pending_note
    from distbench.llm.batch import batch_line, client_for

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    lines: list[str] = []
    with start_server(ServerConfig(seed=4, api_key=KEY)) as server:
        plan, spec = _plan(server.url, "p", provider="anthropic")
        run = BatchRun(plan.shards, tmp_path, BatchLimits(poll_s=0.05), on_stage=lines.append)
        ids = [k for s in plan.shards for k in run.keys[s.shard_id]]
        _pending_note(tmp_path, ids).write_text(json.dumps({"since": time.time() + note_later}))
        client = client_for(spec)
        own = client.submit([batch_line(*run.wanted[k])[2] for k in ids], "")[1]["id"]
        other = [{**batch_line(*run.wanted[k])[2], "custom_id": f"x{i}"}
                 for i, k in enumerate(ids)]
        client.submit(other, "")
        client.close()
        played = [result for _, result in run.results()]
        batches = server.stats()["batches"]
    records = [json.loads(p.read_text()) for p in (tmp_path / FOLDER).glob("[0-9]*.json")]
    assert len(played) == len(plan.shards)
    assert batches["created"] == created
    assert (records[0]["batch_id"] == own) == (created == 2)
    assert any("was created although its answer was lost" in line for line in lines) \
        == (created == 2), lines
    assert not list((tmp_path / FOLDER).glob("*.pending"))


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_batch_the_provider_forgot_is_sent_again_and_retry_failed_finishes_it(tmp_path,
                                                                               wire):
    # batches 0 and 1 (the first round and its once-more) answer 404: the run ends with
    # failed calls naming it; --retry-failed sends them once more, nothing answered twice
    config = ServerConfig(seed=4, batch_faults=("lost",), batch_faulty=2,
                          api_key=KEY if wire == "anthropic" else None)
    with start_server(config) as server:
        argv = _no_cache(_argv(server.url, "l", wire=wire))
        first = _run(argv, tmp_path)
        assert first.returncode == 3, first.stderr
        assert "unknown to the provider (HTTP 404)" in first.stderr
        errors = _errors(tmp_path / "results" / "l")
        assert len(errors) == 50 and all("HTTP 404" in e for e in errors)
        again = _run([*argv, "--retry-failed"], tmp_path)
        batches = server.stats()["batches"]
    assert again.returncode == 0, again.stderr
    assert (batches["created"], batches["requests"], batches["completed"]) == (3, 150, 50)
    assert _trials(tmp_path / "results" / "l") == (50, 50, 0)


def test_a_failed_batch_names_its_errors_and_retry_failed_retries_it(tmp_path):
    config = ServerConfig(seed=4, batch_faults=("failed",), batch_faulty=2)
    with start_server(config) as server:
        argv = _no_cache(_argv(server.url, "f"))
        first = _run(argv, tmp_path)
        assert first.returncode == 3, first.stderr
        errors = _errors(tmp_path / "results" / "f")
        assert len(errors) == 50
        assert all("invalid_request: injected: the batch failed (line 1)" in e for e in errors)
        again = _run([*argv, "--retry-failed"], tmp_path)
        batches = server.stats()["batches"]
    assert again.returncode == 0, again.stderr
    assert (batches["created"], batches["completed"]) == (3, 50)
    assert _trials(tmp_path / "results" / "f") == (50, 50, 0)


def test_a_live_retry_of_a_batch_run_asks_only_what_no_batch_answered(tmp_path):
    env = {**ENV, "DISTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    config = ServerConfig(seed=4, batch_fail=0.2)  # every batch fails a fifth of its lines
    with start_server(config) as server:
        argv = _argv(server.url, "v")  # the cache on
        first = _run(argv, tmp_path, env)
        assert first.returncode == 3, first.stderr
        failed = len(_errors(tmp_path / "results" / "v"))
        assert failed == 2  # 10 failed in round 0, 2 of those 10 again in round 1
        live = [a if a != "batch" else "live" for a in argv]
        again = _run([*live, "--retry-failed", "--no-parallel"], tmp_path, env)
        asked = server.stats()["by_path"].get("/v1/chat/completions", 0)
    assert again.returncode == 0, again.stderr
    assert asked == failed  # the 48 batch answers came from the cache
    assert _trials(tmp_path / "results" / "v") == (50, 50, 0)


def test_a_batch_that_never_ends_is_cancelled_at_its_window_end_with_status_lines(tmp_path):
    from distbench.engine.batching import BatchLimits, BatchRun

    config = ServerConfig(seed=4, batch_faults=("never_ends",), batch_faulty=1,
                          batch_window=3.0)
    lines: list[str] = []
    with start_server(config) as server:
        plan, _ = _plan(server.url, "n")
        limits = BatchLimits(poll_s=0.1, poll_max_s=0.2, status_s=0.3, expiry_grace_s=30)
        run = BatchRun(plan.shards, tmp_path, limits, on_stage=lines.append)
        results = [result for _, result in run.results()]
        batches = server.stats()["batches"]
    assert results and len(run) == 0
    assert any(line.startswith("waiting for 1 batch(es): batch_000000_") and "in_progress"
               in line for line in lines), lines
    assert any("not finished by the end of its window" in line and "cancelled" in line
               for line in lines), lines
    assert (batches["created"], batches["completed"]) == (2, 20)  # sent again once, answered


def test_a_result_download_answered_500_is_tried_again(tmp_path):
    config = ServerConfig(seed=4, batch_faults=("download_500",))
    with start_server(config) as server:
        out = _run(_no_cache(_argv(server.url, "d")), tmp_path)
        batches = server.stats()["batches"]
        gets = server.stats()["by_path"]
    assert out.returncode == 0, out.stderr
    assert (batches["created"], batches["requests"]) == (1, 50)
    assert sum(n for path, n in gets.items() if path.endswith("/content")) == 3
    assert _trials(tmp_path / "results" / "d") == (50, 50, 0)


def test_batch_records_hold_no_password_or_query_token_of_the_base_url(tmp_path):
    with start_server(ServerConfig(seed=4)) as server:
        host = server.url.split("://", 1)[1].split("/", 1)[0]
        url = f"http://someone:pa55-secret@{host}/v1?token=tok-secret-9&api-version=2"
        out = _run(_no_cache(_argv(url, "s")), tmp_path)
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "results" / "s" / "batches"
    records = list(folder.glob("*.json"))
    assert records
    for path in folder.rglob("*"):
        data = path.read_bytes()
        assert b"pa55-secret" not in data and b"tok-secret-9" not in data, path
    base_url = json.loads(json.loads(records[0].read_text())["spec"])["options"]["base_url"]
    assert base_url.startswith("http://***@") and "token=***" in base_url
