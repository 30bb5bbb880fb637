"""The Batch API client's reading of output and error lines keeps the live guarantees: every
field untrusted (odd token counts stored as None with a note, an unusable body one failed
call), errors without secrets, downloads capped."""

from __future__ import annotations

import json

import httpx
import pytest

from distbench.llm import batch as batch_mod
from distbench.llm.base import BackendSpec, Request
from distbench.llm.batch import BatchClient, BatchError, batch_line, response_from

SPEC = BackendSpec(provider="llamacpp", model="mock",
                   options=(("base_url", "http://127.0.0.1:9/v1?api-key=sekrit-value"),))
REQ = Request(prompt="Pick 1 or 2.", max_tokens=16, temperature=1.0, seed=7)


def _ok(body: dict) -> dict:
    return {"custom_id": "k", "response": {"status_code": 200, "request_id": "r", "body": body},
            "error": None}


def _body(**usage) -> dict:
    return {"id": "c", "object": "chat.completion", "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Action: 1"},
                         "finish_reason": "stop"}],
            "usage": usage or {"prompt_tokens": 12, "completion_tokens": 3}}


def test_a_line_is_the_live_body_under_the_request_hash():
    from distbench.llm.cache import cache_key
    from distbench.llm.http import build_payload

    key, path, line = batch_line(SPEC, REQ)
    assert key == cache_key(SPEC, REQ) and path == "/v1/chat/completions"
    assert line == {"custom_id": key, "method": "POST", "url": path,
                    "body": build_payload(SPEC, REQ)[1]}


def test_an_answer_is_read_as_a_live_one_with_its_batch_id():
    r = response_from(SPEC, REQ, _ok(_body()), "batch_1")
    assert (r.status, r.text, r.prompt_tokens, r.completion_tokens, r.batch_id) == \
        ("ok", "Action: 1", 12, 3, "batch_1")


def test_an_implausible_token_count_is_none_with_a_note():
    r = response_from(SPEC, REQ, _ok(_body(prompt_tokens=1e30, completion_tokens=3)), "b")
    assert r.status == "ok" and r.prompt_tokens is None and "prompt_tokens" in r.notes


@pytest.mark.parametrize("line", [
    {"custom_id": "k", "response": None, "error": {"code": "batch_expired", "message": "late"}},
    {"custom_id": "k", "response": {"status_code": 500, "body": {"error": "boom"}}},
    _ok({"choices": "not a list"}),
    {"custom_id": "k", "response": "garbage"},
    None,
])
def test_an_unusable_line_is_one_failed_call(line):
    r = response_from(SPEC, REQ, line, "b")
    assert r.status == "failed" and r.text is None and r.batch_id == "b" and r.error


def test_downloads_past_the_cap_are_abandoned_and_errors_hold_no_secret(monkeypatch):
    monkeypatch.setattr(batch_mod, "MAX_FILE_BYTES", 1000)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/content"):
            return httpx.Response(200, content=b"x" * 5000)
        return httpx.Response(401, json={"error": "bad key sekrit-value"})

    client = BatchClient(SPEC, transport=httpx.MockTransport(handler))
    with pytest.raises(BatchError, match="abandoned"):
        client.lines("file-1")
    with pytest.raises(BatchError) as info:
        client.retrieve("batch_1")
    assert "sekrit-value" not in str(info.value) and "HTTP 401" in str(info.value)
    client.close()


def test_lines_that_are_not_json_objects_are_skipped():
    content = b'{"custom_id": "a", "response": null}\nnot json\n[1, 2]\n' + \
        json.dumps({"custom_id": "b"}).encode()
    client = BatchClient(SPEC, transport=httpx.MockTransport(
        lambda request: httpx.Response(200, content=content)))
    assert [line["custom_id"] for line in client.lines("file-1")] == ["a", "b"]
    client.close()
