"""Clean stops at the model's end: an unrequested logprobs field is ignored, URL credentials
are redacted, and an endpoint actor checks its owner."""

from __future__ import annotations

import asyncio

import httpx

from distbench.llm.base import Request, redact, redact_url
from distbench.llm.http import OpenAICompatibleBackend, asked_for
from distbench.llm.registry import make_spec


def test_an_unrequested_malformed_logprobs_field_keeps_the_valid_answer():
    body = {"choices": [{"message": {"content": "Action 1"},
                         "logprobs": {"content": [{"bogus": 1}]}}]}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=body))
    backend = OpenAICompatibleBackend(make_spec("llamacpp", "m", base_url="http://x"),
                                      transport=transport)
    [answer] = asyncio.run(backend.generate(
        [Request(prompt="p", seed=0, max_tokens=4, temperature=0.0)]))
    assert (answer.status, answer.text, answer.logprobs) == ("ok", "Action 1", None)


def test_a_requested_logprobs_field_is_kept():
    body = {"choices": [{"logprobs": {"top_logprobs": [{"1": -0.5}]}}]}
    asked = Request(prompt="p", seed=0, max_tokens=1, temperature=0.0, logprobs=5)
    assert asked_for(asked, body) is body
    plain = Request(prompt="p", seed=0, max_tokens=1, temperature=0.0)
    assert asked_for(plain, body) == {"choices": [{}]}


def test_credentials_of_urls_are_redacted_in_any_text():
    assert redact_url("http://user:secret@host:1/v1") == "http://***@host:1/v1"
    assert redact_url("llamacpp:https://tok@h") == "llamacpp:https://***@h"
    assert redact_url("http://host/a@b") == "http://host/a@b".replace("host/a@", "host/a@")
    assert redact({"a": ["x http://u:p@h y"], "n": 1}) == {"a": ["x http://***@h y"], "n": 1}
