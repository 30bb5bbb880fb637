"""The mock server's OpenAI Batch API over real HTTP: upload, create, poll, output and error
files; answers equal to live answers; completion delay, partial failure, expiry, cancel; and a
restart on the same folder that loses nothing."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from distbench.mockserver import ServerConfig, start_server

PROMPT = ("You are the row player of a zero-sum game. Payoff matrix (your payoffs):\n"
          "Row 1: 3, -1\nRow 2: -2, 4\nAnswer with one action: Action: <row>")


def _line(i: int) -> dict:
    return {"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "mock", "seed": i, "max_tokens": 16,
                     "messages": [{"role": "user", "content": PROMPT}]}}


def _submit(client: httpx.Client, lines: list[dict]) -> dict:
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    up = client.post("/v1/files", data={"purpose": "batch"},
                     files={"file": ("in.jsonl", data, "application/jsonl")})
    assert up.status_code == 200, up.text
    assert up.json()["bytes"] == len(data)
    made = client.post("/v1/batches", json={"input_file_id": up.json()["id"],
                                            "endpoint": "/v1/chat/completions",
                                            "completion_window": "24h"})
    assert made.status_code == 200, made.text
    return made.json()


def _jsonl(client: httpx.Client, file_id: str | None) -> list[dict]:
    if file_id is None:
        return []
    got = client.get(f"/v1/files/{file_id}/content")
    assert got.status_code == 200
    return [json.loads(x) for x in got.text.splitlines()]


def _stable(body: dict) -> dict:
    return {k: v for k, v in body.items() if k != "created"}


def test_a_batch_completes_after_its_delay_with_the_live_answers(tmp_path):
    with start_server(ServerConfig(seed=2, batch_delay=0.5, batch_dir=str(tmp_path))) as server, \
            httpx.Client(base_url=server.url) as client:
        lines = [_line(i) for i in range(20)]
        batch = _submit(client, lines)
        assert batch["status"] == "in_progress"
        assert client.get(f"/v1/batches/{batch['id']}").json()["status"] == "in_progress"
        time.sleep(0.6)
        done = client.get(f"/v1/batches/{batch['id']}").json()
        assert done["status"] == "completed"
        assert done["request_counts"] == {"total": 20, "completed": 20, "failed": 0}
        out = _jsonl(client, done["output_file_id"])
        assert done["error_file_id"] is None
        assert [o["custom_id"] for o in out] == [f"r{i}" for i in range(20)]
        before = server.stats()["by_path"].get("/v1/chat/completions", 0)
        for o, line in zip(out, lines, strict=True):
            live = client.post("/v1/chat/completions", json=line["body"]).json()
            assert o["response"]["status_code"] == 200
            assert _stable(o["response"]["body"]) == _stable(live)
        stats = server.stats()
        assert stats["by_path"]["/v1/chat/completions"] == before + 20  # only the live ones
        assert stats["batches"]["created"] == 1 and stats["batches"]["completed"] == 20
        assert stats["batches"]["prompt_tokens"] == sum(
            o["response"]["body"]["usage"]["prompt_tokens"] for o in out)


def test_partial_failure_puts_that_share_of_lines_in_the_error_file_of_faulty_batches_only():
    with start_server(ServerConfig(seed=2, batch_fail=0.1, batch_faulty=1)) as server, \
            httpx.Client(base_url=server.url) as client:
        first = client.get(f"/v1/batches/{_submit(client, [_line(i) for i in range(50)])['id']}"
                           ).json()
        assert first["status"] == "completed"
        assert first["request_counts"] == {"total": 50, "completed": 45, "failed": 5}
        errors = _jsonl(client, first["error_file_id"])
        out = _jsonl(client, first["output_file_id"])
        assert len(errors) == 5 and {e["error"]["code"] for e in errors} == {"server_error"}
        assert {e["custom_id"] for e in errors}.isdisjoint(o["custom_id"] for o in out)
        again = [_line(int(e["custom_id"][1:])) for e in errors]
        second = client.get(f"/v1/batches/{_submit(client, again)['id']}").json()
        assert second["request_counts"] == {"total": 5, "completed": 5, "failed": 0}


def test_an_expired_batch_has_its_first_half_answered_and_the_rest_in_the_error_file():
    with start_server(ServerConfig(seed=2, batch_expire=True, batch_faulty=1)) as server, \
            httpx.Client(base_url=server.url) as client:
        batch = client.get(f"/v1/batches/{_submit(client, [_line(i) for i in range(10)])['id']}"
                           ).json()
        assert batch["status"] == "expired"
        assert batch["request_counts"] == {"total": 10, "completed": 5, "failed": 5}
        assert [o["custom_id"] for o in _jsonl(client, batch["output_file_id"])] == \
            [f"r{i}" for i in range(5)]
        errors = _jsonl(client, batch["error_file_id"])
        assert [e["custom_id"] for e in errors] == [f"r{i}" for i in range(5, 10)]
        assert {e["error"]["code"] for e in errors} == {"batch_expired"}


def test_a_cancelled_batch_answers_nothing():
    with start_server(ServerConfig(batch_delay=60)) as server, \
            httpx.Client(base_url=server.url) as client:
        batch = _submit(client, [_line(0)])
        cancelled = client.post(f"/v1/batches/{batch['id']}/cancel").json()
        assert cancelled["status"] == "cancelled"
        assert cancelled["output_file_id"] is None
        assert cancelled["request_counts"]["completed"] == 0


def test_a_restart_on_the_same_folder_keeps_files_and_pending_batches(tmp_path):
    config = ServerConfig(seed=2, batch_delay=1.0, batch_dir=str(tmp_path))
    with start_server(config) as server, httpx.Client(base_url=server.url) as client:
        batch = _submit(client, [_line(i) for i in range(4)])
        input_id = batch["input_file_id"]
    with start_server(config) as server, httpx.Client(base_url=server.url) as client:
        assert client.get(f"/v1/batches/{batch['id']}").json()["status"] == "in_progress"
        assert client.get(f"/v1/files/{input_id}").json()["bytes"] > 0
        time.sleep(1.1)
        done = client.get(f"/v1/batches/{batch['id']}").json()
        assert done["status"] == "completed" and len(_jsonl(client, done["output_file_id"])) == 4
        assert server.stats()["batches"]["created"] == 1  # counted from the folder


@pytest.mark.parametrize(("request_kwargs", "status"), [
    ({"json": {"input_file_id": "file-nope", "endpoint": "/v1/chat/completions",
               "completion_window": "24h"}}, 400),
    ({"json": {"input_file_id": "x", "endpoint": "/v1/embeddings",
               "completion_window": "24h"}}, 400),
])
def test_bad_batches_are_refused_with_openai_errors(request_kwargs, status):
    with start_server(ServerConfig()) as server, httpx.Client(base_url=server.url) as client:
        got = client.post("/v1/batches", **request_kwargs)
        assert got.status_code == status
        assert "error" in got.json()
        assert client.get("/v1/batches/batch_nope").status_code == 404
        assert client.get("/v1/files/../../etc/passwd/content").status_code == 404


def test_a_served_process_restarted_on_its_folder_finishes_the_batch_it_took(tmp_path):
    from cli_server import start_cli_server, stop_cli_server

    args = ("mock", "--port", "0", "--batch-dir", str(tmp_path), "--batch-delay", "1")
    proc, url = start_cli_server(*args)
    try:
        with httpx.Client(base_url=url) as client:
            batch = _submit(client, [_line(i) for i in range(3)])
    finally:
        assert stop_cli_server(proc)[0] == 0
    proc, url = start_cli_server(*args)
    try:
        with httpx.Client(base_url=url) as client:
            deadline = time.monotonic() + 10
            while (got := client.get(f"/v1/batches/{batch['id']}").json())["status"] \
                    == "in_progress" and time.monotonic() < deadline:
                time.sleep(0.2)
            assert got["status"] == "completed"
            assert len(_jsonl(client, got["output_file_id"])) == 3
    finally:
        stop_cli_server(proc)
