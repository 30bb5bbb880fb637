"""Batch result lines read as untrusted as live bodies (issue 33, item 2), a GET tried again
after a transient failure (item 7), and the token counts of an answered call never trusted
when missing or implausible (item 1: :mod:`distbench.llm.calls`)."""

from __future__ import annotations

import json

import httpx
import pytest

from distbench.llm import batch as batch_mod
from distbench.llm.base import BackendSpec, Request, Response
from distbench.llm.batch import (
    UNUSABLE,
    BatchClient,
    BatchError,
    one_line_per_request,
    response_from,
)
from distbench.llm.calls import calls_table, ceiling_tokens, usage_problem

SPEC = BackendSpec(provider="llamacpp", model="mock",
                   options=(("base_url", "http://127.0.0.1:9/v1"),))
REQ = Request(prompt="Pick 1 or 2." * 10, max_tokens=16, temperature=1.0, seed=7)


def _ok(cid: str, text: str = "Action: 1") -> dict:
    return {"custom_id": cid, "response": {"status_code": 200, "body": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 3}}}, "error": None}


def _client(content: bytes) -> BatchClient:
    return BatchClient(SPEC, transport=httpx.MockTransport(
        lambda request: httpx.Response(200, content=content)))


@pytest.mark.parametrize("cid,raw,why", [
    ("deep", b'{"custom_id": "deep", "response": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "RecursionError"),
    ("big", b'{"custom_id": "big", "response": {"status_code": 200, "body": "'
     + b"x" * (9 * 1024 * 1024) + b'"}}', "too large"),
    ("utf", b'{"custom_id": "utf", "response": "\xff"}', "UnicodeDecodeError"),
])
def test_an_unreadable_line_naming_its_request_is_that_request_failed_call(cid, raw, why):
    client = _client(json.dumps(_ok("a")).encode() + b"\n" + raw + b"\n")
    lines = client.lines("file-1")
    client.close()
    assert [line["custom_id"] for line in lines] == ["a", cid]
    bad = lines[1]
    assert UNUSABLE in bad and why in bad[UNUSABLE]
    r = response_from(SPEC, REQ, bad, "batch_1")
    assert r.status == "failed" and why in r.error and r.batch_id == "batch_1"


def test_a_lone_surrogate_in_a_line_is_replaced_with_a_note_as_live():
    line = _ok("a", "\ud800Action: 1")
    text = json.dumps(line)  # ASCII: the surrogate escaped, as a server sends it
    (got,) = json.loads("[" + text + "]")
    r = response_from(SPEC, REQ, got, "b")
    assert r.status == "ok" and r.text == "\ufffdAction: 1" and "surrogate" in r.notes
    assert json.dumps(got)  # what the driver writes back is encodable (ASCII)


def test_one_line_per_request_drops_foreign_ids_and_distrusts_conflicts():
    a, b, b2, c = _ok("a"), _ok("b"), _ok("b", "Action: 2"), _ok("c")
    got = one_line_per_request([a, a, b, b2, c, b], ["a", "b"], "batch_9")
    assert [line["custom_id"] for line in got] == ["a", "b"]  # one each, c not asked for
    assert got[0] == a
    assert UNUSABLE in got[1] and "different lines" in got[1][UNUSABLE]
    assert response_from(SPEC, REQ, got[1], "batch_9").status == "failed"


def test_a_get_met_by_a_500_is_tried_again_a_post_never(monkeypatch):
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "GET" and seen.count(seen[-1]) < 3:
            return httpx.Response(500, text="busy")
        if request.method == "POST":
            return httpx.Response(502, text="bad gateway")
        return httpx.Response(200, content=json.dumps(_ok("a")).encode())

    client = BatchClient(SPEC, transport=httpx.MockTransport(handler))
    client.retry_delay = 0.01
    assert [line["custom_id"] for line in client.lines("file-1")] == ["a"]
    assert seen.count("GET /v1/files/file-1/content") == 3
    with pytest.raises(BatchError) as info:
        client.create("file-1", "/v1/chat/completions")
    assert info.value.status == 502 and seen.count("POST /v1/batches") == 1
    client.close()


def test_a_get_that_keeps_failing_gives_up_after_its_retries():
    count = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        count[0] += 1
        return httpx.Response(503, text="down")

    client = BatchClient(SPEC, transport=httpx.MockTransport(handler))
    client.retry_delay = 0.001
    with pytest.raises(BatchError, match="HTTP 503"):
        client.retrieve("batch_1")
    assert count[0] == 1 + batch_mod.GET_RETRIES
    client.close()


@pytest.mark.parametrize("prompt,completion,bad_prompt,bad_completion", [
    (None, None, "prompt_tokens None", "completion_tokens None"),
    (0, 0, "prompt_tokens 0", "completion_tokens 0 for a non-empty answer"),
    (None, 3, "prompt_tokens None", ""),
    (30, None, "", "completion_tokens None"),
    (-5, -5, "prompt_tokens -5", "completion_tokens -5"),
    (30, 17, "", "over the 16 the request allowed"),
    (99_999_999, 3, "for a prompt of", ""),
    (30, 3, "", ""),
    (30, 16, "", ""),
])
def test_usage_missing_or_implausible_is_named(prompt, completion, bad_prompt, bad_completion):
    r = Response(text="Action: 1", status="ok", prompt_tokens=prompt,
                 completion_tokens=completion)
    why = usage_problem(REQ, r)
    for got, want in zip(why, (bad_prompt, bad_completion), strict=True):
        assert (want in got and got) if want else got == ""


def test_an_answer_without_usable_counts_is_stored_at_its_ceiling_never_free():
    good = Response(text="Action: 1", status="ok", prompt_tokens=30, completion_tokens=3)
    none = Response(text="Action: 1", status="ok")
    huge = Response(text="Action: 1", status="ok", prompt_tokens=30,
                    completion_tokens=99_999_999)
    cached = Response(text="Action: 1", status="ok", cache_hit=True)
    failed = Response(text=None, status="failed", error="HTTP 500")
    table = calls_table("r", "s", SPEC, "pure", [REQ] * 5, [good, none, huge, cached, failed],
                        [f"c{i}" for i in range(5)], [f"t{i}" for i in range(5)]).to_pylist()
    ceiling = ceiling_tokens(REQ)
    assert ceiling == (-(-len(REQ.prompt) // 4), 16)
    got = [(r["prompt_tokens"], r["completion_tokens"], r["estimated_prompt_tokens"],
            r["estimated_completion_tokens"]) for r in table]
    assert got == [(30, 3, None, None), (None, None, *ceiling),
                   (30, 99_999_999, None, ceiling[1]),  # the prompt's count was plausible
                   (None, None, None, None), (None, None, None, None)]  # as reported, beside
    assert "counted at the request's ceiling" in table[1]["notes"]
