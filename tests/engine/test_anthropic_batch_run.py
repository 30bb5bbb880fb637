"""``--llm-type anthropic`` against the mock server, as a user runs it (the CLI in a
subprocess, real HTTP over loopback, the key in ``ANTHROPIC_API_KEY``): a matrix run live
over ``/v1/messages`` and the same run through Message Batches give the same rows, with 0
live calls in the batch run; an expired batch has its unanswered half only sent again; a
driver whose server went away while it waited resumes by polling the batches it recorded,
submitting none again; ``--max-cost`` stops a batched run under the cap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from ports import free_port

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

KEY = "sk-ant-run-secret-7"
TIMING = {"run_id", "latency_ms", "queue_ms", "batch_id"}
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "ANTHROPIC_API_KEY": KEY}


def _argv(url: str, run_id: str, *extra: str, games: int = 40) -> list[str]:
    return [sys.executable, "-m", "distbench", "run", "--llm-type", "anthropic",
            "--llm-model", "mock", "--base-url", url, "--rpm", "100000", "--num-games",
            str(games), "--num-trials", "5", "--no-cache", "--run-id", run_id, "-y", *extra]


def _run(url: str, cwd, run_id: str, *extra: str, games: int = 40) -> subprocess.CompletedProcess:
    return subprocess.run(_argv(url, run_id, *extra, games=games), cwd=cwd, capture_output=True,
                          text=True, timeout=600, env=ENV)


def _rows(run_dir, table: str) -> list[tuple]:
    con = open_run(run_dir)
    columns = [c for c in con.execute(f"select * from {table} limit 0").fetchdf().columns
               if c not in TIMING]
    rows = con.execute(f"select {', '.join(columns)} from {table} order by all").fetchall()
    con.close()
    return rows


def _live_calls(server) -> int:
    return server.stats()["by_path"].get("/v1/messages", 0)


def _trials(run_dir) -> tuple:
    con = open_run(run_dir)
    got = con.execute("select count(*), count(distinct (game_id, trial_id)), count(*) filter "
                      "(where parse_status = 'call_failed') from trials").fetchone()
    con.close()
    return got


def _no_key_in(folder) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_message_batches_give_the_rows_of_the_live_run_with_no_live_call(tmp_path):
    with start_server(ServerConfig(seed=4, api_key=KEY)) as server:
        live = _run(server.url, tmp_path, "live", "--no-parallel")
        assert live.returncode == 0, live.stderr
        sent_live = _live_calls(server)
        assert sent_live == 200
        batch = _run(server.url, tmp_path, "batch", "--execution", "batch",
                     "--batch-max-requests", "100")
        assert batch.returncode == 0, batch.stderr
        stats = server.stats()
    assert stats["batches"]["created"] == 2 and stats["batches"]["requests"] == 200
    assert _live_calls(server) == sent_live  # 0 live calls in the batch run
    assert stats["by_path"]["/v1/messages/batches"] == 2
    for table in ("trials", "games", "calls"):
        assert _rows(tmp_path / "results" / "batch", table) == \
            _rows(tmp_path / "results" / "live", table)
    con = open_run(tmp_path / "results" / "batch")
    assert con.execute("select count(*), count(distinct batch_id), sum(prompt_tokens) from calls "
                       "where batch_id like 'msgbatch_%'").fetchone() == \
        (200, 2, stats["batches"]["prompt_tokens"])
    con.close()
    assert _trials(tmp_path / "results" / "batch") == (200, 200, 0)
    _no_key_in(tmp_path / "results")
    assert KEY not in batch.stdout + batch.stderr + live.stdout + live.stderr


def test_an_expired_message_batch_sends_only_its_unanswered_half_again(tmp_path):
    with start_server(ServerConfig(seed=4, api_key=KEY, batch_expire=True,
                                   batch_faulty=1)) as server:
        out = _run(server.url, tmp_path, "e", "--execution", "batch", games=20)
        assert out.returncode == 0, out.stderr
        batches = server.stats()["batches"]
        assert _live_calls(server) == 0
    assert (batches["created"], batches["requests"]) == (2, 100 + 50)
    assert "50 request(s) unanswered by their batch: sent again, once" in out.stderr
    assert _trials(tmp_path / "results" / "e") == (100, 100, 0)


def test_a_driver_whose_server_went_away_resumes_by_polling_its_recorded_batches(tmp_path):
    port = free_port()
    config = ServerConfig(seed=4, api_key=KEY, port=port, batch_delay=6.0,
                          batch_dir=str(tmp_path / "server"))
    folder = tmp_path / "results" / "r" / "batches"
    with start_server(config) as server:
        proc = subprocess.Popen(_argv(server.url, "r", "--execution", "batch",
                                      "--batch-max-requests", "50", games=20),
                                cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env=ENV)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(folder.glob("*[0-9].json"))) < 2:
            time.sleep(0.05)
        assert len(list(folder.glob("*[0-9].json"))) == 2
        url = server.url
    _, err = proc.communicate(timeout=300)  # its polls find no server: it stops, no traceback
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert not list(folder.glob("*.out.jsonl"))
    with start_server(config) as server:  # the same address and folder: nothing lost
        resumed = _run(url, tmp_path, "r", "--execution", "batch", "--batch-max-requests", "50",
                       games=20)
        assert resumed.returncode == 0, resumed.stderr
        stats = server.stats()
    assert stats["batches"]["created"] == 2  # none submitted again
    assert "/v1/messages/batches" not in stats["by_path"] and _live_calls(server) == 0
    assert _trials(tmp_path / "results" / "r") == (100, 100, 0)


def test_logprob_mode_and_completion_style_are_refused_in_one_line_before_any_call(tmp_path):
    with start_server(ServerConfig(api_key=KEY)) as server:
        for extra in (("--mode", "logprob"), ("--style", "completion")):
            out = _run(server.url, tmp_path, "lp", *extra, games=2)
            assert out.returncode != 0 and "Traceback" not in out.stderr
            [line] = out.stderr.strip().splitlines()
            assert line.startswith("error: ") and "chat only" in line
        assert not any(path.startswith("/v1/messages") for path in server.stats()["by_path"])


def test_max_cost_stops_a_message_batches_run_under_the_cap_by_the_servers_counts(tmp_path):
    price = 155.0  # USD per million tokens, in and out: 10 shards, ~$4 at most batched
    argv = _argv("URL", "b", "--execution", "batch", "--shard-trials", "20", "--max-tokens", "16",
                 "--price", f"{price},{price}", "--max-cost", "0.50")
    with start_server(ServerConfig(seed=6, api_key=KEY)) as server:
        argv[argv.index("URL")] = server.url
        first = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600,
                               env=ENV)
        batches = server.stats()["batches"]
    assert first.returncode == 4, first.stderr
    billed = (batches["prompt_tokens"] + batches["completion_tokens"]) * price / 1e6 * 0.5
    assert 0 < billed <= 0.50
    manifest = json.loads((tmp_path / "results" / "b" / "manifest.json").read_text())
    committed = manifest["shards"]["committed"]
    assert manifest["state"] == "budget_reached" and 0 < committed < 10
    assert manifest["budget"]["spent_usd"] == pytest.approx(billed, abs=1e-6)
    assert batches["requests"] == 20 * committed  # nothing of a shard not admitted was sent
    assert _trials(tmp_path / "results" / "b") == (20 * committed, 20 * committed, 0)
