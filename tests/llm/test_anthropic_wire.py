"""The Anthropic Messages wire format without a network: the exact payload, hostile answer
bodies read as untrusted data, the headers (key in ``x-api-key``, never in an error), the
pre-flight's refusal of logprob mode, and the Message Batches client's reading of result
lines."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from distbench.llm import anthropic
from distbench.llm.base import Request
from distbench.llm.batch import (
    AnthropicBatchClient,
    BatchClient,
    BatchError,
    batch_line,
    client_for,
    line_ok,
    response_from,
)
from distbench.llm.http import (
    EndpointUnavailable,
    OpenAICompatibleBackend,
    build_payload,
    check_endpoint,
    parse_body,
)
from distbench.llm.registry import make_spec

KEY = "sk-ant-unit-secret-0123"
REQ = Request(prompt="Pick.", seed=7, task="matrix.pure:3", max_tokens=16, temperature=0.5)


@pytest.fixture
def spec(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return make_spec("anthropic", "claude-x", base_url="http://testserver", rpm=1e9,
                     max_retries=2, timeout=5.0)


def _answer(text="Action: 2", **extra):
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 40, "output_tokens": 3}}
    body.update(extra)
    return body


def test_the_provider_is_chat_only_with_one_sample_per_request(spec):
    assert spec.provider == "anthropic" and spec.style == "chat"
    assert spec.option("wire") == "anthropic" and spec.max_samples() == 1
    assert spec.option("key_env") == "ANTHROPIC_API_KEY"
    assert make_spec("anthropic:claude-3-5-haiku-latest").model == "claude-3-5-haiku-latest"


def test_the_payload_is_exactly_the_messages_shape(spec):
    assert build_payload(spec, REQ) == ("/v1/messages", {
        "model": "claude-x", "max_tokens": 16, "temperature": 0.5,
        "messages": [{"role": "user", "content": "Pick."}]})


def test_system_messages_leave_the_conversation_and_stops_are_stop_sequences(spec):
    req = Request(prompt="", seed=1, max_tokens=8, temperature=0.0, stop=("\n",),
                  messages=(("system", "Be brief."), ("user", "Hi."), ("assistant", "Hello."),
                            ("user", "Move?"), ("user", "Now.")))
    _, body = build_payload(spec, req)
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "Hi."},
                                {"role": "assistant", "content": "Hello."},
                                {"role": "user", "content": "Move?\n\nNow."}]
    assert body["stop_sequences"] == ["\n"]
    assert "seed" not in body and "n" not in body and "stop" not in body


@pytest.mark.parametrize("req", [
    Request(prompt="Action:", seed=1, max_tokens=1, logprobs=20),
    Request(prompt="Action:", seed=1, max_tokens=1, style="completion"),
    Request(prompt="Action:", seed=1, max_tokens=1, samples=(1, 2, 3)),
])
def test_logprobs_completions_and_samples_are_refused(spec, req):
    with pytest.raises(ValueError, match="anthropic"):
        build_payload(spec, req)


def test_an_answer_reads_text_blocks_and_anthropic_token_names():
    data = _answer(content=[{"type": "thinking", "thinking": "hmm"},
                            {"type": "text", "text": "Action: "}, {"type": "text", "text": "2"}])
    parsed = parse_body("chat", data, 1, "anthropic")
    assert (parsed.text, parsed.prompt_tokens, parsed.completion_tokens, parsed.logprobs) == \
        ("Action: 2", 40, 3, None)
    assert parsed.notes == ()


@pytest.mark.parametrize(("usage", "note"), [
    ({"input_tokens": 1e30, "output_tokens": 3}, "usage.input_tokens"),
    ({"input_tokens": float("nan"), "output_tokens": 3}, "usage.input_tokens"),
    ({"input_tokens": 3, "output_tokens": -1}, "usage.output_tokens"),
    ({"input_tokens": "forty", "output_tokens": 3}, "usage.input_tokens"),
    ([40, 3], "usage: a list"),
])
def test_an_implausible_usage_is_null_with_a_note(usage, note):
    parsed = parse_body("chat", _answer(usage=usage), 1, "anthropic")
    assert parsed.text == "Action: 2"
    assert None in (parsed.prompt_tokens, parsed.completion_tokens)
    assert any(note in n for n in parsed.notes)


def test_lone_surrogates_are_replaced_and_noted():
    parsed = parse_body("chat", _answer(text="\ud83dAction: 1"), 1, "anthropic")
    assert parsed.text == "\ufffdAction: 1" and "lone surrogate" in parsed.notes[0]


def test_a_cut_answer_and_an_odd_stop_reason_are_noted_not_failed():
    assert "max_tokens" in parse_body("chat", _answer(stop_reason="max_tokens"), 1,
                                      "anthropic").notes[0]
    assert "stop_reason" in parse_body("chat", _answer(stop_reason=[1]), 1, "anthropic").notes[0]


@pytest.mark.parametrize(("data", "field"), [
    ([1, 2], "not a JSON object"),
    ({"content": "Action: 1"}, "content"),
    ({"content": [1]}, "content[0]"),
    ({"content": [{"type": "text", "text": 5}]}, "content[0].text"),
    ({"content": [{"type": "text"}] * 2000}, "blocks"),
    ({"choices": [{"message": {"content": "Action: 1"}}]}, "content"),  # an OpenAI body
])
def test_a_body_that_is_not_a_messages_answer_names_the_field(data, field):
    with pytest.raises(anthropic.BadMessage, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_body("chat", data, 1, "anthropic")


def _backend(spec, handler, sleeps=None):
    async def sleep(seconds):
        (sleeps if sleeps is not None else []).append(seconds)
    return OpenAICompatibleBackend(spec, transport=httpx.MockTransport(handler), sleep=sleep)


def test_the_key_goes_in_x_api_key_with_the_version_and_no_bearer(spec):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json=_answer())

    [r] = asyncio.run(_backend(spec, handler).generate([REQ]))
    assert (r.status, r.text, r.prompt_tokens, r.completion_tokens) == ("ok", "Action: 2", 40, 3)
    sent = seen[0]
    assert sent.url.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert json.loads(sent.content)["messages"] == [{"role": "user", "content": "Pick."}]


def test_a_hostile_body_is_retried_then_one_failed_call_without_the_key(spec):
    sleeps: list[float] = []

    def handler(request):
        return httpx.Response(200, json={"type": "message", "content": {"echo": KEY}})

    [r] = asyncio.run(_backend(spec, handler, sleeps).generate([REQ]))
    assert r.status == "failed" and r.attempts == 3 and len(sleeps) == 2
    assert "content" in r.error and KEY not in r.error


def test_an_overloaded_529_is_retried(spec):
    answers = iter([httpx.Response(529, json={"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}), httpx.Response(200, json=_answer())])
    [r] = asyncio.run(_backend(spec, lambda request: next(answers)).generate([REQ]))
    assert (r.status, r.attempts) == ("ok", 2)


def test_the_preflight_refuses_logprob_mode_in_one_line(spec):
    with pytest.raises(EndpointUnavailable, match=r"chat only.*\(logprob mode\)") as info:
        asyncio.run(check_endpoint(spec, ("completion",)))
    assert "\n" not in str(info.value)


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(EndpointUnavailable, match="ANTHROPIC_API_KEY"):
        OpenAICompatibleBackend(make_spec("anthropic", base_url="http://testserver"))


# --- Message Batches ----------------------------------------------------------------------


def test_a_batch_line_is_custom_id_and_the_live_params(spec):
    from distbench.llm.cache import cache_key

    key, path, line = batch_line(spec, REQ)
    assert key == cache_key(spec, REQ) and len(key) <= 64 and path == "/v1/messages"
    assert line == {"custom_id": key, "params": build_payload(spec, REQ)[1]}


def test_the_client_is_chosen_by_the_wire(spec, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert isinstance(client_for(spec), AnthropicBatchClient)
    assert type(client_for(make_spec("openai", base_url="http://testserver"))) is BatchClient


def test_a_succeeded_result_is_read_as_a_live_answer(spec):
    line = {"custom_id": "k", "result": {"type": "succeeded", "message": _answer()}}
    r = response_from(spec, REQ, line, "msgbatch_1")
    assert (r.status, r.text, r.prompt_tokens, r.completion_tokens, r.batch_id) == \
        ("ok", "Action: 2", 40, 3, "msgbatch_1")
    assert line_ok(line)


@pytest.mark.parametrize(("result", "shown"), [
    ({"type": "errored", "error": {"type": "error", "error": {
        "type": "api_error", "message": f"boom http://u:{KEY}@h/"}}}, "errored: boom"),
    ({"type": "expired"}, "expired"),
    ({"type": "canceled"}, "canceled"),
    ({"type": "succeeded", "message": {"content": 3}}, "bad response body"),
    ("garbage", "no result"),
])
def test_other_results_are_failed_calls_without_secrets(spec, result, shown):
    line = {"custom_id": "k", "result": result}
    r = response_from(spec, REQ, line, "msgbatch_1")
    assert r.status == "failed" and shown in r.error and KEY not in r.error
    assert line_ok(line) == (isinstance(result, dict) and result["type"] == "succeeded")


def _client(spec, handler):
    return AnthropicBatchClient(spec, transport=httpx.MockTransport(handler))


def test_results_are_read_from_the_configured_host_never_the_given_url(spec):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, content=b'{"custom_id": "a", "result": {"type": "expired"}}\n'
                                           b'not json\n[1]\n')

    batch = {"id": "msgbatch_1", "processing_status": "ended",
             "results_url": "https://evil.example/steal"}
    lines = _client(spec, handler).results(batch)
    assert lines == [{"custom_id": "a", "result": {"type": "expired"}}]
    assert str(seen[0].url) == "http://testserver/v1/messages/batches/msgbatch_1/results"
    assert _client(spec, handler).results({**batch, "processing_status": "in_progress"}) == []


@pytest.mark.parametrize("answer", [
    {"id": "../../v1/models", "processing_status": "ended"},
    {"id": 5, "processing_status": "ended"},
    {"id": "msgbatch_1", "processing_status": "done?"},
])
def test_an_unusable_batch_answer_is_a_batch_error(spec, answer):
    client = _client(spec, lambda request: httpx.Response(200, json=answer))
    with pytest.raises(BatchError):
        client.submit([{"custom_id": "a", "params": {}}], "/v1/messages")


def test_submit_sends_the_requests_inline_and_marks_ended_terminal(spec):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={"id": "msgbatch_9", "processing_status": "in_progress"})

    file_id, batch = _client(spec, handler).submit(
        [{"custom_id": "a", "params": {"model": "m"}}], "/v1/messages", {"run": "x"})
    assert file_id is None and batch["status"] == "in_progress"
    assert seen[0].url.path == "/v1/messages/batches"
    assert json.loads(seen[0].content) == {"requests": [{"custom_id": "a",
                                                         "params": {"model": "m"}}]}
    assert seen[0].headers["x-api-key"] == KEY


def test_a_batch_error_never_shows_the_key(spec):
    client = _client(spec, lambda request: httpx.Response(
        401, json={"error": {"message": f"bad key {KEY}"}}))
    with pytest.raises(BatchError) as info:
        client.retrieve("msgbatch_1")
    assert KEY not in str(info.value) and "401" in str(info.value)
