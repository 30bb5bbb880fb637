"""The mock server's Anthropic side over real HTTP: ``/v1/messages`` answers as the chat
endpoint does (same text, usage under Anthropic's names, unknown fields refused, key in
``x-api-key``), and Message Batches: results equal to live answers, delay, partial failure,
expiry, cancel, and a restart on the same folder that loses nothing."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from distbench.mockserver import ServerConfig, start_server

PROMPT = ("You are the row player of a zero-sum game. Payoff matrix (your payoffs):\n"
          "Row 1: 3, -1\nRow 2: -2, 4\nAnswer with one action: Action: <row>")
KEY = "sk-ant-mock-key-42"
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def _params(i: int = 0) -> dict:
    return {"model": "mock", "max_tokens": 16, "temperature": 1.0,
            "system": f"Game {i}.", "messages": [{"role": "user", "content": PROMPT}]}


def _client(server) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers=HEADERS, timeout=30)


def _results(client: httpx.Client, batch: dict) -> list[dict]:
    assert batch["processing_status"] == "ended" and batch["results_url"].endswith("/results")
    got = client.get(batch["results_url"])
    assert got.status_code == 200, got.text
    return [json.loads(x) for x in got.text.splitlines()]


def _poll(client: httpx.Client, batch_id: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        got = client.get(f"/v1/messages/batches/{batch_id}").json()
        if got["processing_status"] == "ended" or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def test_messages_answers_what_the_chat_endpoint_answers_in_anthropic_shape():
    with start_server(ServerConfig(seed=3, api_key=KEY)) as server, _client(server) as client:
        got = client.post("/v1/messages", json=_params())
        chat = client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
                           json={"model": "mock", "max_tokens": 16, "temperature": 1.0,
                                 "messages": [{"role": "system", "content": "Game 0."},
                                              {"role": "user", "content": PROMPT}]})
        stats = server.stats()
    assert got.status_code == 200, got.text
    body, reference = got.json(), chat.json()
    assert body["type"] == "message" and body["role"] == "assistant"
    assert body["content"] == [{"type": "text",
                                "text": reference["choices"][0]["message"]["content"]}]
    assert body["usage"] == {"input_tokens": reference["usage"]["prompt_tokens"],
                             "output_tokens": reference["usage"]["completion_tokens"]}
    assert stats["by_path"]["/v1/messages"] == 1
    assert stats["usage"]["prompt_tokens"] == 2 * reference["usage"]["prompt_tokens"]


@pytest.mark.parametrize(("body", "message"), [
    ({**_params(), "seed": 1}, "seed: Extra inputs are not permitted"),
    ({k: v for k, v in _params().items() if k != "max_tokens"}, "max_tokens: Field required"),
    ({**_params(), "temperature": 1.5}, "temperature"),
    ({**_params(), "messages": [{"role": "system", "content": "x"}]}, "messages.0.role"),
])
def test_a_bad_messages_body_is_refused_with_400(body, message):
    with start_server(ServerConfig(api_key=KEY)) as server, _client(server) as client:
        got = client.post("/v1/messages", json=body)
    assert got.status_code == 400 and message in got.json()["error"]["message"]


def test_the_key_is_checked_in_x_api_key():
    with start_server(ServerConfig(api_key=KEY)) as server:
        wrong = httpx.post(server.url + "/v1/messages", json=_params(),
                           headers={"x-api-key": "nope"})
        none = httpx.post(server.url + "/v1/messages", json=_params())
    assert wrong.status_code == 401 and none.status_code == 401
    assert "Incorrect" in wrong.text and "didn't provide" in none.text


def test_a_message_batch_ends_after_its_delay_with_the_live_answers(tmp_path):
    config = ServerConfig(seed=3, api_key=KEY, batch_delay=0.5, batch_dir=str(tmp_path))
    with start_server(config) as server, _client(server) as client:
        made = client.post("/v1/messages/batches", json={"requests": [
            {"custom_id": f"r{i}", "params": _params(i)} for i in range(4)]})
        assert made.status_code == 200, made.text
        batch = made.json()
        assert batch["processing_status"] == "in_progress" and batch["results_url"] is None
        assert batch["request_counts"]["processing"] == 4
        not_yet = client.get(f"/v1/messages/batches/{batch['id']}/results")
        assert not_yet.status_code == 400
        ended = _poll(client, batch["id"])
        lines = _results(client, ended)
        live = [client.post("/v1/messages", json=_params(i)).json() for i in range(4)]
        counts = server.stats()["batches"]
    assert ended["request_counts"] == {"processing": 0, "succeeded": 4, "errored": 0,
                                       "canceled": 0, "expired": 0}
    assert [line["custom_id"] for line in lines] == ["r0", "r1", "r2", "r3"]
    assert [line["result"]["message"] for line in lines] == live
    assert counts["created"] == 1 and counts["completed"] == 4
    assert counts["prompt_tokens"] == sum(m["usage"]["input_tokens"] for m in live)


@pytest.mark.parametrize(("fail", "expire", "expected"), [
    (0.25, False, {"errored": 2, "succeeded": 6}),
    (0.0, True, {"succeeded": 4, "expired": 4}),
])
def test_faulty_batches_fail_a_share_or_expire_their_second_half(fail, expire, expected):
    config = ServerConfig(seed=3, batch_fail=fail, batch_expire=expire, batch_faulty=1)
    with start_server(config) as server, httpx.Client(base_url=server.url) as client:
        requests = [{"custom_id": f"r{i}", "params": _params(i)} for i in range(8)]
        first = _poll(client, client.post("/v1/messages/batches",
                                          json={"requests": requests}).json()["id"])
        kinds = [line["result"]["type"] for line in _results(client, first)]
        second = _poll(client, client.post("/v1/messages/batches",
                                           json={"requests": requests}).json()["id"])
        again = [line["result"]["type"] for line in _results(client, second)]
        counts = server.stats()["batches"]
    assert {k: kinds.count(k) for k in set(kinds)} == expected
    assert {k: v for k, v in first["request_counts"].items() if v} == expected
    if expire:
        assert kinds[4:] == ["expired"] * 4
    assert again == ["succeeded"] * 8  # only the first batch is faulty
    assert (counts["completed"], counts["failed"]) == (8 + expected["succeeded"],
                                                       8 - expected["succeeded"])


def test_a_canceled_batch_answers_nothing():
    with start_server(ServerConfig(batch_delay=60)) as server, \
            httpx.Client(base_url=server.url) as client:
        batch = client.post("/v1/messages/batches", json={"requests": [
            {"custom_id": "a", "params": _params()}]}).json()
        canceling = client.post(f"/v1/messages/batches/{batch['id']}/cancel").json()
        ended = client.get(f"/v1/messages/batches/{batch['id']}").json()
        lines = _results(client, ended)
    assert canceling["processing_status"] == "canceling"
    assert ended["request_counts"]["canceled"] == 1
    assert lines == [{"custom_id": "a", "result": {"type": "canceled"}}]


@pytest.mark.parametrize(("body", "message"), [
    ({"requests": []}, "non-empty"),
    ({"requests": [{"custom_id": "a/b", "params": {}}]}, "custom_id"),
    ({"requests": [{"custom_id": "x" * 65, "params": {}}]}, "custom_id"),
    ({"requests": [{"custom_id": "a", "params": {}}, {"custom_id": "a", "params": {}}]},
     "repeated"),
    ({"requests": [{"custom_id": "a", "params": 3}]}, "params"),
])
def test_bad_message_batches_are_refused(body, message):
    with start_server(ServerConfig()) as server:
        got = httpx.post(server.url + "/v1/messages/batches", json=body)
        missing = httpx.get(server.url + "/v1/messages/batches/msgbatch_nope")
    assert got.status_code == 400 and message in got.json()["error"]["message"]
    assert missing.status_code == 404


def test_a_restart_on_the_same_folder_keeps_a_pending_message_batch(tmp_path):
    config = ServerConfig(seed=3, batch_delay=1.0, batch_dir=str(tmp_path))
    with start_server(config) as server:
        batch = httpx.post(server.url + "/v1/messages/batches", json={"requests": [
            {"custom_id": "a", "params": _params()}]}).json()
    with start_server(config) as server, httpx.Client(base_url=server.url) as client:
        ended = _poll(client, batch["id"])
        lines = _results(client, ended)
        assert server.stats()["batches"]["created"] == 1
    assert lines[0]["result"]["type"] == "succeeded"


def test_message_batches_are_listed_newest_first_a_page_at_a_time():
    # as Anthropic lists them: ``limit``, ``after_id`` for the older page, ``before_id`` for
    # the newer one, ``has_more``, ``first_id``, ``last_id``; no OpenAI batch among them
    with start_server(ServerConfig(batch_delay=60)) as server, \
            httpx.Client(base_url=server.url) as client:
        made = [client.post("/v1/messages/batches", json={"requests": [
            {"custom_id": f"r{j}", "params": _params(j)} for j in range(i + 1)]}).json()["id"]
            for i in range(5)]
        first = client.get("/v1/messages/batches", params={"limit": 2}).json()
        second = client.get("/v1/messages/batches",
                            params={"limit": 2, "after_id": first["last_id"]}).json()
        last = client.get("/v1/messages/batches",
                          params={"limit": 2, "after_id": second["last_id"]}).json()
        back = client.get("/v1/messages/batches",
                          params={"limit": 2, "before_id": second["first_id"]}).json()
        openai = client.get("/v1/batches").json()
    newest = made[::-1]
    assert [b["id"] for b in first["data"]] == newest[:2] and first["has_more"]
    assert [b["id"] for b in second["data"]] == newest[2:4] and second["has_more"]
    assert [b["id"] for b in last["data"]] == newest[4:] and not last["has_more"]
    assert [b["id"] for b in back["data"]] == newest[:2]
    assert (first["first_id"], first["last_id"]) == (newest[0], newest[1])
    assert [sum(b["request_counts"].values()) for b in first["data"]] == [5, 4]
    assert openai["data"] == []
