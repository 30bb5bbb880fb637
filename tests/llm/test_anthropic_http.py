"""The ``anthropic`` provider against the mock server over real HTTP (loopback): injected
faults retried to the clean answers, hostile bodies read as untrusted data (a NULL count with a
note naming Anthropic's field), a rejected key stopping the run with the variable's name and
never the key."""

from __future__ import annotations

import asyncio

import pytest

from distbench.llm.base import Request
from distbench.llm.http import AuthenticationFailed, OpenAICompatibleBackend
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server

KEY = "sk-ant-http-secret-99"
PROMPT = ("You are the row player of a zero-sum game. Payoff matrix (your payoffs):\n"
          "Row 1: 3, -1\nRow 2: -2, 4\nAnswer with one action: Action: <row>")
REQS = [Request(prompt=PROMPT + f"\nGame {i}.", seed=i, max_tokens=16, temperature=1.0)
        for i in range(30)]


def _answers(url: str, monkeypatch, **opts):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    spec = make_spec("anthropic", "mock", base_url=url, rpm=1e9, timeout=5.0,
                     max_retries=opts.pop("max_retries", 6), **opts)
    backend = OpenAICompatibleBackend(spec, sleep=_no_sleep)
    return asyncio.run(backend.generate(REQS))


async def _no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def test_injected_faults_are_retried_to_the_clean_answers(monkeypatch):
    with start_server(ServerConfig(seed=2, api_key=KEY)) as clean:
        expected = _answers(clean.url, monkeypatch)
    config = ServerConfig(seed=2, api_key=KEY, fail_500=0.1, fail_503=0.05, fail_429=0.05,
                          truncate=0.05, non_json=0.05, retry_after=0.01)
    with start_server(config) as server:
        got = _answers(server.url, monkeypatch)
        faults = server.stats()["faults"]
    assert sum(faults.values()) >= 5
    assert all(r.status == "ok" for r in expected)
    assert [(r.status, r.text, r.prompt_tokens, r.completion_tokens) for r in got] == \
        [(r.status, r.text, r.prompt_tokens, r.completion_tokens) for r in expected]
    assert max(r.attempts for r in got) > 1


@pytest.mark.parametrize(("body", "note"), [
    ("usage_nan", "usage.input_tokens: nan is not a token count"),
    ("usage_inf", "usage.output_tokens: inf is not a token count"),
    ("usage_list", "usage: a list is not a JSON object"),
    ("surrogate", "text: 1 lone surrogate(s) replaced by U+FFFD"),
])
def test_hostile_bodies_are_notes_not_lost_calls(monkeypatch, body, note):
    with start_server(ServerConfig(seed=2, hostile=1.0, hostile_body=body)) as server:
        got = _answers(server.url, monkeypatch, max_retries=0)
    assert all(r.status == "ok" for r in got)
    assert all(note in r.notes for r in got), got[0].notes


def test_a_rejected_key_stops_with_the_variable_never_the_key(monkeypatch):
    with start_server(ServerConfig(api_key="another-key")) as server:
        with pytest.raises(AuthenticationFailed) as info:
            _answers(server.url, monkeypatch)
    assert "ANTHROPIC_API_KEY" in str(info.value) and KEY not in str(info.value)
