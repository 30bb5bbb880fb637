"""Every field of a response body is untrusted: the pure hooks and the retry loop without a
network (``httpx.MockTransport``). The same bodies over the real mock server:
tests/llm/test_hostile_server.py."""

from __future__ import annotations

import asyncio
import json
import math
import time

import httpx
import pytest

from distbench.llm.base import Request, Response, redact, redact_url
from distbench.llm.cache import ResponseCache
from distbench.llm.http import (
    MAX_BODY_BYTES,
    BadBody,
    OpenAICompatibleBackend,
    parse_body,
    split_base_url,
)
from distbench.llm.limits import RETRY_AFTER_CAP_S, retry_after_seconds
from distbench.llm.registry import make_spec

REQ = Request(prompt="Pick.", seed=7, max_tokens=16)


def _chat(content="Action: 1", usage=None, **choice):
    body = {"choices": [{"index": 0, "message": {"content": content}, **choice}]}
    if usage is not None:
        body["usage"] = usage
    return body


@pytest.mark.parametrize(("value", "shown"), [
    (1e30, "1e+30"), (math.nan, "nan"), (math.inf, "inf"), (2**63 - 1, "63 bits"),
    (-3, "-3"), ("12", "'12'"), ([1], "a list"), ({"a": 1}, "a JSON object"), (True, "True"),
    (12.5, "12.5"),
])
def test_an_implausible_token_count_is_none_with_a_note_naming_the_field(value, shown):
    parsed = parse_body("chat", _chat(usage={"prompt_tokens": value, "completion_tokens": 2}))
    assert parsed.prompt_tokens is None and parsed.completion_tokens == 2
    assert parsed.text == "Action: 1"
    assert len(parsed.notes) == 1
    assert parsed.notes[0].startswith("usage.prompt_tokens: ") and shown in parsed.notes[0]


@pytest.mark.parametrize("usage", [[1, 2], "12 tokens", 7])
def test_usage_that_is_not_an_object_gives_no_counts_and_a_note(usage):
    parsed = parse_body("chat", _chat(usage=usage))
    assert (parsed.prompt_tokens, parsed.completion_tokens) == (None, None)
    assert parsed.notes and parsed.notes[0].startswith("usage: ")


def test_plausible_counts_are_kept_an_integral_float_as_an_int():
    parsed = parse_body("chat", _chat(usage={"prompt_tokens": 40.0, "completion_tokens": 0}))
    assert (parsed.prompt_tokens, parsed.completion_tokens, parsed.notes) == (40, 0, ())
    assert type(parsed.prompt_tokens) is int


def test_lone_surrogates_are_replaced_and_counted():
    body = json.loads('{"choices": [{"message": {"content": "A\\ud83d: 1\\udc00"}}]}')
    parsed = parse_body("chat", body)
    assert parsed.text == "A\ufffd: 1\ufffd"
    parsed.text.encode("utf-8")
    assert parsed.notes == ("text: 2 lone surrogate(s) replaced by U+FFFD",)
    paired = json.loads('{"choices": [{"message": {"content": "\\ud83d\\ude00"}}]}')
    assert parse_body("chat", paired) == ("😀", None, None, None, None, (), None, None)


@pytest.mark.parametrize(("choices", "names"), [
    ([{"index": "zero", "message": {"content": "a"}}, {"index": 1, "message": {"content": "b"}}],
     "choices[0].index: 'zero' is not an integer"),
    ([{"index": 0, "message": {"content": "a"}}, {"index": 0, "message": {"content": "b"}}],
     "choices[1].index: 0 appears twice"),
    ([{"index": 0, "message": {"content": "a"}}, {"index": 7, "message": {"content": "b"}}],
     "choices[1].index: 7 is out of range (0 to 1)"),
    ([{"index": True, "message": {"content": "a"}}], "choices[0].index: 'True' is not an integer"),
    ([], "choices: missing, empty or not a list"),
    (["text"], "choices[0]: not a JSON object"),
    ([{"index": 0, "message": "hi"}], "choices[0].message.content: missing"),
])
def test_bad_choices_are_a_bad_body_naming_the_field(choices, names):
    with pytest.raises(BadBody, match=names.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        parse_body("chat", {"choices": choices}, n=2)


def test_choices_are_read_in_index_order():
    body = {"choices": [{"index": 1, "message": {"content": "b"}},
                        {"index": 0, "message": {"content": "a"}}]}
    parsed = parse_body("chat", body, n=2)
    assert parsed.text == "a" and parsed.texts == ("a", "b")


def test_unreadable_logprobs_are_a_bad_body_not_an_internal_error():
    with pytest.raises(BadBody, match=r"choices\[0\].logprobs"):
        parse_body("completion", {"choices": [{"text": "1", "logprobs": {
            "top_logprobs": [{"1": "high"}]}}]})
    with pytest.raises(BadBody, match=r"choices\[0\].logprobs"):
        parse_body("chat", {"choices": [{"message": {"content": "1"}, "logprobs": {
            "content": [{"top_logprobs": [{"token": "1"}]}]}}]})


@pytest.mark.parametrize("value", [math.nan, math.inf, 3.5, -(10**400), "-0.1", None])
def test_a_logprob_that_is_not_a_log_probability_is_a_bad_body(value):
    body = {"choices": [{"text": "1", "logprobs": {"top_logprobs": [{"1": value}]}}]}
    with pytest.raises(BadBody, match=r"choices\[0\].logprobs: unreadable"):
        parse_body("completion", body)
    ok = {"choices": [{"text": "1", "logprobs": {"top_logprobs": [{"1": -math.inf, "2": 0}]}}]}
    assert parse_body("completion", ok).logprobs == (("1", -math.inf), ("2", 0.0))


@pytest.mark.parametrize("content", [b"[" * 100_000, b"{\"a\": 1" + b"0" * 5000 + b"}", b"",
                                     b"\xff\xfe{}", b"null"])
def test_a_body_that_is_not_usable_json_is_one_failed_call_naming_it(content):
    backend, _ = _backend(lambda r: httpx.Response(200, content=content), max_retries=0)
    [answer] = asyncio.run(backend.generate([REQ]))
    assert answer.status == "failed" and answer.error.startswith("bad response body: ")
    assert "internal error" not in answer.error


@pytest.mark.parametrize(("header", "expected"), [
    ({"Retry-After": "999999999"}, RETRY_AFTER_CAP_S),
    ({"Retry-After": "inf"}, RETRY_AFTER_CAP_S),
    ({"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT"}, RETRY_AFTER_CAP_S),
    ({"retry-after-ms": "1e400"}, RETRY_AFTER_CAP_S),
    ({"Retry-After": "-4"}, 0.0),
    ({"Retry-After": "3"}, 3.0),
])
def test_retry_after_is_capped(header, expected):
    assert retry_after_seconds(header) == expected
    assert retry_after_seconds(header, cap=2.0) == min(expected, 2.0)


def test_query_values_of_any_url_are_redacted_like_passwords():
    url = "https://user:pw@gw.example/v1?api-key=S3CRET&token=T0KEN;access_token=A1"
    shown = redact_url(f"openai:{url} failed")
    assert shown == "openai:https://***@gw.example/v1?api-key=***&token=***;access_token=*** failed"
    assert redact({"a": [url], "b": "no url ?key=x"}) == {
        "a": ["https://***@gw.example/v1?api-key=***&token=***;access_token=***"],
        "b": "no url ?key=x"}


def test_a_base_urls_query_is_sent_with_every_request_and_never_shown():
    assert split_base_url("http://h:1/v1/?key=k1&v=2") == ("http://h:1", [("key", "k1"), ("v", "2")])
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(500, text="bad key k1-secret-value at " + str(request.url))

    spec = make_spec("vllm", "m", "chat", base_url="http://gw/v1?key=k1-secret-value",
                     rpm=None, max_retries=0)
    backend = OpenAICompatibleBackend(spec, transport=httpx.MockTransport(handler))
    [answer] = asyncio.run(backend.generate([REQ]))
    assert seen == ["http://gw/v1/chat/completions?key=k1-secret-value"]
    assert answer.status == "failed" and "k1-secret-value" not in answer.error


def _backend(handler, **opts):
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    base = dict(base_url="http://testserver", rpm=None, max_retries=2, timeout=5.0)
    base.update(opts)
    backend = OpenAICompatibleBackend(make_spec("vllm", "m", "chat", **base),
                                      transport=httpx.MockTransport(handler), sleep=fake_sleep)
    return backend, sleeps


def test_a_bad_index_is_one_failed_call_among_good_ones():
    def handler(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        if prompt == "bad":
            return httpx.Response(200, json={"choices": [
                {"index": "zero", "message": {"content": "1"}}]})
        return httpx.Response(200, json=_chat())

    backend, _ = _backend(handler)
    answers = asyncio.run(backend.generate([REQ, Request(prompt="bad", seed=1), REQ]))
    assert [a.status for a in answers] == ["ok", "failed", "ok"]
    assert answers[1].attempts == 3
    assert answers[1].error == "bad response body: choices[0].index: 'zero' is not an integer"


def test_the_calls_response_carries_the_notes():
    backend, _ = _backend(lambda r: httpx.Response(200, content=(
        b'{"choices":[{"message":{"content":"x\\ud83d"}}],'
        b'"usage":{"prompt_tokens":NaN,"completion_tokens":1e30}}')))
    [answer] = asyncio.run(backend.generate([REQ]))
    assert answer.status == "ok" and answer.text == "x\ufffd"
    assert (answer.prompt_tokens, answer.completion_tokens) == (None, None)
    assert answer.notes == ("text: 1 lone surrogate(s) replaced by U+FFFD; "
                            "usage.prompt_tokens: nan is not a token count (stored as NULL); "
                            "usage.completion_tokens: 1e+30 is not a token count (stored as NULL)")


def test_a_body_over_the_cap_is_abandoned_and_the_call_fails_at_once():
    chunk = b"x" * 65536

    async def endless():
        while True:
            yield chunk

    backend, sleeps = _backend(lambda r: httpx.Response(200, content=endless()))
    [answer] = asyncio.run(backend.generate([REQ]))
    assert answer.status == "failed" and answer.attempts == 1 and sleeps == []
    assert answer.error.startswith("response body too large") and f"{MAX_BODY_BYTES:,}" in answer.error


def test_the_timeout_bounds_the_whole_attempt_not_each_read():
    async def drip():
        yield b'{"choices": ['
        while True:
            await asyncio.sleep(0.05)
            yield b" "

    backend, _ = _backend(lambda r: httpx.Response(200, content=drip()), timeout=0.5,
                          max_retries=0)
    t0 = time.monotonic()
    [answer] = asyncio.run(backend.generate([REQ]))
    assert time.monotonic() - t0 < 2.0
    assert answer.status == "failed" and answer.error == "timeout after 0.5 s"


def test_the_cache_stores_nothing_a_run_could_not_store_and_ignores_such_entries(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    good = Response(text="ok", prompt_tokens=3, completion_tokens=1)
    cache.put_many([("bad-text", Response(text="x\ud83d")),
                    ("bad-count", Response(text="x", prompt_tokens=2**63 - 1)),
                    ("good", good)])
    assert set(cache.get_many(["bad-text", "bad-count", "good"])) == {"good"}
    # An entry an older version wrote (before these checks) is a miss, not an answer.
    cache._con.execute("INSERT INTO responses (key, text, prompt_tokens) VALUES ('old', ?, ?)",
                       ("fine", 2**62))
    assert set(cache.get_many(["old", "good"])) == {"good"}
    cache.close()


def test_a_body_announced_over_the_cap_is_not_read():
    read = []

    async def body():
        read.append(1)
        yield b"{}"

    backend, _ = _backend(lambda r: httpx.Response(
        200, headers={"Content-Length": str(2**30)}, content=body()))
    [answer] = asyncio.run(backend.generate([REQ]))
    assert answer.status == "failed" and answer.attempts == 1 and read == []
    assert answer.error == ("response body too large (1,073,741,824 bytes announced, at most "
                            "8,388,608 are read): not read")
