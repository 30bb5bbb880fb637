"""The HTTP backend without a network: payloads, parsing, retry policy, scripted failures."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest

from distbench.llm.base import Request
from distbench.llm.http import (
    AuthenticationFailed,
    BadBody,
    EndpointUnavailable,
    OpenAICompatibleBackend,
    Parsed,
    build_payload,
    parse_body,
)
from distbench.llm.limits import Limits, backoff_delay, classify_status, retry_after_seconds
from distbench.llm.registry import make_spec

REQ = Request(prompt="Pick.", seed=7, task="matrix.pure:3", max_tokens=16, temperature=0.5)


def _spec(style="chat", **opts):
    base = dict(base_url="http://testserver", rpm=None, max_retries=3, timeout=5.0)
    base.update(opts)
    return make_spec("vllm", "m1", style, **base)


# vLLM's switches for plain temperature sampling (the provider's "vllm" sampling dialect).
VLLM_PLAIN = {"top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0,
              "presence_penalty": 0.0, "frequency_penalty": 0.0}


def test_chat_payload_is_exactly_the_openai_shape():
    path, body = build_payload(_spec("chat"), REQ)
    assert path == "/v1/chat/completions"
    assert body == {"model": "m1", "max_tokens": 16, "temperature": 0.5, "seed": 7,
                    **VLLM_PLAIN, "messages": [{"role": "user", "content": "Pick."}]}


def test_completion_payload_with_logprobs():
    req = Request(prompt="Action:", seed=2**40 + 5, task="", max_tokens=1, logprobs=20)
    path, body = build_payload(_spec("completion"), req)
    assert path == "/v1/completions"
    assert body == {"model": "m1", "max_tokens": 1, "temperature": 1.0, "seed": 5,
                    **VLLM_PLAIN, "prompt": "Action:", "logprobs": 20}
    _, chat = build_payload(_spec("chat"), req)
    assert chat["logprobs"] is True and chat["top_logprobs"] == 20


def test_a_completion_request_goes_to_completions_whatever_the_models_style():
    req = Request(prompt="Action:", seed=1, max_tokens=1, logprobs=20, style="completion")
    path, body = build_payload(_spec("chat"), req)
    assert path == "/v1/completions" and body["prompt"] == "Action:" and body["logprobs"] == 20


@pytest.mark.parametrize(("provider", "expected"), [
    ("llamacpp", {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0,
                  "repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}),
    ("openai", {"top_p": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}),
    ("vllm", VLLM_PLAIN),
])
def test_every_request_declares_plain_sampling_in_its_servers_dialect(provider, expected, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    spec = make_spec(provider, "m", "completion", base_url="http://testserver")
    _, body = build_payload(spec, REQ)
    sent = {k: v for k, v in body.items()
            if k not in ("model", "max_tokens", "temperature", "seed", "prompt")}
    assert sent == expected


def test_sampling_none_sends_temperature_only_and_unknown_dialects_are_refused():
    _, body = build_payload(_spec("chat", sampling="none"), REQ)
    assert set(body) == {"model", "max_tokens", "temperature", "seed", "messages"}
    with pytest.raises(ValueError, match="unknown sampling dialect 'mirostat'"):
        build_payload(_spec("chat", sampling="mirostat"), REQ)


def test_parse_body_reads_text_usage_and_first_token_logprobs():
    completion = {"choices": [{"text": " 2", "logprobs": {"top_logprobs": [{" 2": -0.1, " 1": -2.5}]}}],
                  "usage": {"prompt_tokens": 11, "completion_tokens": 1}}
    assert parse_body("completion", completion) == Parsed(" 2", 11, 1, ((" 2", -0.1), (" 1", -2.5)))
    chat = {"choices": [{"message": {"content": "2"}, "logprobs": {"content": [
        {"token": "2", "logprob": -0.2, "top_logprobs": [{"token": "2", "logprob": -0.2},
                                                          {"token": "3", "logprob": -1.8}]}]}}]}
    assert parse_body("chat", chat) == Parsed("2", None, None, (("2", -0.2), ("3", -1.8)))
    with pytest.raises(BadBody):
        parse_body("chat", {"error": "nope"})


@pytest.mark.parametrize("status, verdict", [
    (200, "ok"), (401, "auth"), (403, "auth"), (408, "retry"), (409, "retry"), (429, "retry"),
    (500, "retry"), (503, "retry"), (400, "fail"), (404, "fail"), (422, "fail"),
])
def test_status_classification(status, verdict):
    assert classify_status(status) == verdict


def test_retry_after_headers():
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"},
                               now=1445412480.0) == pytest.approx(10.0)
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_grows_exponentially_within_its_jitter_band():
    rng = random.Random(0)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (8, 30.0)]:
        d = backoff_delay(attempt, 0.5, 30.0, rng)
        assert ceiling / 2 <= d <= ceiling


def _backend(handler, style="chat", **opts):
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    backend = OpenAICompatibleBackend(_spec(style, **opts), transport=httpx.MockTransport(handler),
                                      sleep=fake_sleep)
    return backend, sleeps


def _ok(text="Action: 2"):
    return httpx.Response(200, json={"choices": [{"message": {"content": text}}],
                                     "usage": {"prompt_tokens": 3, "completion_tokens": 2}})


def test_scripted_failures_then_success_with_the_exact_sleeps():
    script = [
        lambda: (_ for _ in ()).throw(httpx.ConnectError("refused")),
        lambda: httpx.Response(429, headers={"Retry-After": "2"}),
        lambda: httpx.Response(503),
        lambda: _ok(),
    ]
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return script[len(seen) - 1]()

    backend, sleeps = _backend(handler)
    [resp] = asyncio.run(backend.generate([REQ]))
    assert resp.status == "ok" and resp.text == "Action: 2" and resp.attempts == 4
    assert resp.prompt_tokens == 3 and resp.http_status == 200
    assert len(sleeps) == 3
    assert 0.25 <= sleeps[0] <= 0.5            # backoff after the connection error
    assert 2.0 <= sleeps[1] <= 2.0 * 1.1 + 0.01  # honours Retry-After, never earlier
    assert 1.0 <= sleeps[2] <= 2.0              # backoff, attempt 3
    assert all(body == seen[0] for body in seen)


def test_always_500_fails_after_exactly_the_configured_attempts():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(500, text="boom")

    backend, sleeps = _backend(handler, max_retries=2)
    [resp] = asyncio.run(backend.generate([REQ]))
    assert resp.status == "failed" and resp.attempts == 3 and len(calls) == 3
    assert resp.http_status == 500 and "HTTP 500" in resp.error
    assert len(sleeps) == 2


def test_other_4xx_fail_at_once_and_bad_bodies_are_retried():
    backend, _ = _backend(lambda r: httpx.Response(400, json={"error": "bad"}))
    [resp] = asyncio.run(backend.generate([REQ]))
    assert resp.status == "failed" and resp.attempts == 1
    bodies = iter([httpx.Response(200, text="<html>"), _ok("Action: 1")])
    backend, _ = _backend(lambda r: next(bodies))
    [resp] = asyncio.run(backend.generate([REQ]))
    assert resp.status == "ok" and resp.attempts == 2


def test_401_stops_everything_and_names_no_key(monkeypatch):
    monkeypatch.setenv("VLLM_API_KEY", "canary-secret-123")
    calls = []

    def handler(request):
        calls.append(request.headers["authorization"])
        return httpx.Response(401, json={"error": {"message": "bad key canary-secret-123"}})

    backend, _ = _backend(handler, max_concurrency=1)
    with pytest.raises(AuthenticationFailed) as info:
        asyncio.run(backend.generate([REQ] * 10))
    assert len(calls) == 1 and calls[0] == "Bearer canary-secret-123"
    assert "canary" not in str(info.value) and "VLLM_API_KEY" in str(info.value)


def test_missing_required_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EndpointUnavailable, match="OPENAI_API_KEY"):
        OpenAICompatibleBackend(make_spec("openai"))


def test_limits_validate():
    with pytest.raises(ValueError):
        Limits(rpm=0)
    with pytest.raises(ValueError):
        Limits(max_concurrency=0)


def test_rate_limiter_paces_to_the_configured_rate_without_bursts():
    import time

    from distbench.llm.limits import RateLimiter

    async def run() -> list[float]:
        limiter = RateLimiter(Limits(rpm=1200, max_concurrency=8))  # 20 requests/s
        t0 = time.perf_counter()
        stamps: list[float] = []

        async def one() -> None:
            await limiter.acquire()
            stamps.append(time.perf_counter() - t0)

        await asyncio.gather(*(one() for _ in range(30)))
        return sorted(stamps)

    stamps = asyncio.run(run())
    # 30 requests at 20/s: the first at once, the last after 29 intervals of 50 ms.
    assert 1.4 <= stamps[-1] <= 1.9
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert min(gaps) >= 0.03  # never two at once


def test_429s_slow_the_limiter_down_and_successes_win_it_back():
    from distbench.llm.limits import RateLimiter

    limiter = RateLimiter(Limits(rpm=600))
    assert limiter.current_rps == pytest.approx(10.0)
    for _ in range(100):
        limiter.on_throttled()
    assert limiter.current_rps == pytest.approx(1.0)  # floor: a tenth of the configured rate
    for _ in range(500):
        limiter.on_success()
    assert limiter.current_rps == pytest.approx(10.0)
