"""The OpenAI-compatible mock server, over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import httpx
import numpy as np
import pytest
from cli_server import distbench_argv, start_cli_server, stop_cli_server

from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.matrix.prompts import mixed_prompt, pure_prompt
from distbench.llm.base import BackendSpec, Request
from distbench.llm.dummy import DummyBackend
from distbench.mockserver import (
    MockAnswerer,
    ServerConfig,
    detect_task,
    fault_plan,
    start_server,
)

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def _games(count: int, seed: int = 7) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(3, 3), (2, 4), (4, 2), (5, 5), (1, 3)]
    return [rng.integers(-9, 10, size=shapes[i % len(shapes)]) for i in range(count)]


def _chat(client: httpx.Client, prompt: str, **extra) -> httpx.Response:
    return client.post(CHAT, json={"messages": [{"role": "user", "content": prompt}], **extra})


def _complete(client: httpx.Client, prompt: str, timeout=None, **extra) -> httpx.Response:
    kwargs = {} if timeout is None else {"timeout": timeout}
    return client.post(COMPLETIONS, json={"prompt": prompt, **extra}, **kwargs)


def _dummy(prompt: str, seed: int, task: str, style: str) -> str:
    backend = DummyBackend(BackendSpec("dummy", "random", style))
    return backend.answer([Request(prompt, seed=seed, task=task)])[0].text


@pytest.fixture
def mock_server():
    with start_server(ServerConfig(seed=3)) as server:
        yield server


@pytest.fixture
def client(mock_server):
    with httpx.Client(base_url=mock_server.url, timeout=10) as c:
        yield c


# --- answers ------------------------------------------------------------------------------


def test_answers_match_the_dummy_backend_and_parse_as_valid(client):
    for i, game in enumerate(_games(10)):
        m = game.shape[0]
        for mode, make, parse in (("pure", pure_prompt, parse_pure),
                                  ("mixed", mixed_prompt, parse_mixed)):
            seed = 1000 + i
            task = f"matrix.{mode}:{m}"
            chat_prompt = make(game, style="chat")
            chat = _chat(client, chat_prompt, seed=seed)
            assert chat.status_code == 200
            text = chat.json()["choices"][0]["message"]["content"]
            assert text == _dummy(chat_prompt, seed, task, "chat")
            assert parse(text, m).status is ParseStatus.OK

            completion_prompt = make(game, style="completion")
            completion = _complete(client, completion_prompt, seed=seed)
            assert completion.status_code == 200
            text = completion.json()["choices"][0]["text"]
            assert text == _dummy(completion_prompt, seed, task, "completion")
            assert parse(text, m, continuation=True).status is ParseStatus.OK


def test_calls_without_a_seed_are_deterministic_per_server_seed():
    prompts = [pure_prompt(g) for g in _games(20)]

    def answers(server_seed: int) -> list[str]:
        with start_server(ServerConfig(seed=server_seed)) as server, \
                httpx.Client(base_url=server.url) as c:
            return [_chat(c, p).json()["choices"][0]["message"]["content"] for p in prompts]

    first = answers(5)
    assert first == answers(5)
    assert first != answers(6)
    assert all(parse_pure(text, g.shape[0]).ok for text, g in zip(first, _games(20), strict=True))


def test_task_is_detected_from_the_prompt_wording():
    game = np.zeros((4, 2))
    assert detect_task(pure_prompt(game)) == ("pure", 4)
    assert detect_task(pure_prompt(game, style="completion")) == ("pure", 4)
    assert detect_task(mixed_prompt(game)) == ("mixed", 4)
    assert detect_task(mixed_prompt(np.zeros((1, 3)), style="completion")) == ("mixed", 1)
    assert detect_task("What is the capital of France?") is None


def test_unrecognised_prompts_get_a_fixed_harmless_text(client):
    a = _chat(client, "Tell me a joke.").json()["choices"][0]["message"]["content"]
    b = _complete(client, "Once upon a time", seed=9).json()["choices"][0]["text"]
    assert a == b == "I can only answer matrix game questions."


def test_usage_and_models_and_health(client):
    body = _chat(client, pure_prompt(np.eye(3)), seed=1).json()
    assert body["object"] == "chat.completion" and body["model"] == "mock"
    assert body["usage"]["prompt_tokens"] > 10 and body["usage"]["completion_tokens"] >= 1
    assert client.get("/v1/models").json()["data"][0]["id"] == "mock"
    assert client.get("/health").json() == {"status": "ok"}


def test_bad_requests_get_openai_style_errors(client):
    bad_json = client.post(CHAT, content=b"{not json", headers={"Content-Type": "application/json"})
    assert bad_json.status_code == 400
    assert bad_json.json()["error"]["type"] == "invalid_request_error"
    assert client.post(CHAT, json={"messages": []}).status_code == 400
    assert client.post(COMPLETIONS, json={"prompt": 3}).status_code == 400
    assert client.post(CHAT, json={"messages": [{"role": "user", "content": "x"}],
                                   "seed": "one"}).status_code == 400
    assert client.post("/v1/nothing", json={}).status_code == 404
    assert client.get(CHAT).status_code == 405


# --- logprobs -----------------------------------------------------------------------------


def test_completion_logprobs_put_most_mass_on_the_action_labels(client):
    prompt = pure_prompt(np.arange(12).reshape(4, 3), style="completion")
    first = _complete(client, prompt, seed=11, logprobs=6).json()
    again = _complete(client, prompt, seed=11, logprobs=6).json()
    other = _complete(client, prompt, seed=12, logprobs=6).json()
    lp = first["choices"][0]["logprobs"]
    assert lp == again["choices"][0]["logprobs"]
    assert lp["top_logprobs"][0] != other["choices"][0]["logprobs"]["top_logprobs"][0]
    assert len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"])
    assert "".join(lp["tokens"]) == first["choices"][0]["text"]
    top = lp["top_logprobs"][0]
    assert set(top) == {" 1", " 2", " 3", " 4", " The", "\n"}
    labels = sum(math.exp(top[f" {k}"]) for k in range(1, 5))
    assert labels == pytest.approx(0.97)
    assert sum(math.exp(v) for v in top.values()) == pytest.approx(1.0)
    # the sampled first token " k" carries its label's logprob
    assert lp["token_logprobs"][0] == pytest.approx(top[lp["tokens"][0]])


def test_chat_logprobs_use_bare_labels_and_respect_top_logprobs(client):
    prompt = pure_prompt(np.eye(3))
    body = _chat(client, prompt, seed=4, logprobs=True, top_logprobs=2).json()
    content = body["choices"][0]["logprobs"]["content"]
    assert "".join(entry["token"] for entry in content) == body["choices"][0]["message"]["content"]
    alts = content[0]["top_logprobs"]
    assert len(alts) == 2 and alts[0]["logprob"] >= alts[1]["logprob"]
    full = _chat(client, prompt, seed=4, logprobs=True, top_logprobs=5).json()
    tokens = {alt["token"] for alt in full["choices"][0]["logprobs"]["content"][0]["top_logprobs"]}
    assert tokens == {"1", "2", "3", " The", "\n"}
    assert _chat(client, prompt, seed=4).json()["choices"][0]["logprobs"] is None


# --- faults -------------------------------------------------------------------------------


def _classify(response: httpx.Response, m: int, path: str) -> str | None:
    """The fault a response shows, None for a good answer."""
    if response.status_code == 429:
        return "fail_429"
    if response.status_code in (500, 503):
        return f"fail_{response.status_code}"
    assert response.status_code == 200
    if response.headers["content-type"].startswith("text/html"):
        return "non_json"
    try:
        body = response.json()
    except json.JSONDecodeError:
        return "truncate"
    if path == CHAT:
        parsed = parse_pure(body["choices"][0]["message"]["content"], m)
    else:
        parsed = parse_pure(body["choices"][0]["text"], m, continuation=True)
    return None if parsed.ok else "garbage"


def test_each_fault_kind_comes_at_exactly_its_rate_in_a_seeded_order():
    config = ServerConfig(seed=21, fail_429=0.05, retry_after=2, fail_500=0.04, fail_503=0.06,
                          truncate=0.05, non_json=0.03, garbage=0.07)
    plan = fault_plan(config, 200)
    expected = {"fail_429": 10, "fail_500": 8, "fail_503": 12, "truncate": 10, "non_json": 6,
                "garbage": 14}
    assert Counter(kind for kind in plan if kind) == expected
    game = np.arange(9).reshape(3, 3)
    seen, retry_after = [], set()
    with start_server(config) as server, httpx.Client(base_url=server.url) as c:
        for n in range(200):
            path = CHAT if n % 2 else COMPLETIONS
            if path == CHAT:
                response = _chat(c, pure_prompt(game), seed=n)
            else:
                response = _complete(c, pure_prompt(game, style="completion"), seed=n)
            kind = _classify(response, 3, path)
            seen.append(kind)
            if kind == "fail_429":
                retry_after.add((response.headers["retry-after"],
                                 response.headers["retry-after-ms"]))
        stats = server.stats()
    assert seen == plan
    assert retry_after == {("2", "2000")}
    assert stats["requests"] == 200
    assert stats["faults"] == expected
    assert stats["by_status"] == {"200": 200 - 30, "429": 10, "500": 8, "503": 12}
    assert stats["by_path"] == {CHAT: 100, COMPLETIONS: 100}


def test_fault_order_depends_on_the_seed_and_restarts_on_stats_reset():
    config = ServerConfig(seed=1, fail_500=0.5)
    other = fault_plan(ServerConfig(seed=2, fail_500=0.5), 100)
    assert fault_plan(config, 100) != other
    assert fault_plan(config, 100).count("fail_500") == other.count("fail_500") == 50
    with start_server(config) as server, httpx.Client(base_url=server.url) as c:
        first = [_complete(c, "x").status_code for _ in range(30)]
        assert c.post("/stats/reset").json()["requests"] == 0
        second = [_complete(c, "x").status_code for _ in range(30)]
    assert first == second
    assert first == [500 if kind else 200 for kind in fault_plan(config, 30)]


def test_fractions_that_are_not_whole_percentages_are_met_on_average():
    plan = fault_plan(ServerConfig(seed=0, fail_500=0.0025), 40_000)
    assert 60 <= plan.count("fail_500") <= 140  # 100 expected


def test_hung_calls_time_out_the_client_and_are_dropped_after_hang_seconds():
    config = ServerConfig(seed=5, hang=0.5, hang_seconds=0.3)
    plan = fault_plan(config, 8)
    outcomes = []
    with start_server(config) as server, httpx.Client(base_url=server.url) as c:
        for n in range(8):
            try:
                response = _complete(c, "x", seed=n)
                outcomes.append(response.status_code)
            except httpx.RemoteProtocolError:  # dropped without an answer
                outcomes.append("dropped")
        assert server.stats()["faults"] == {"hang": plan.count("hang")}
        with pytest.raises(httpx.ReadTimeout):
            while True:  # the next hang, with a client that gives up first
                _complete(c, "x", timeout=httpx.Timeout(5, read=0.1))
    assert outcomes == ["dropped" if kind == "hang" else 200 for kind in plan]
    assert 0 < plan.count("hang") < 8


def test_a_hung_call_is_released_when_its_client_gives_up():
    with start_server(ServerConfig(hang=1.0)) as server:  # every call hangs for an hour
        baseline = threading.active_count()
        for _ in range(3):
            with httpx.Client(base_url=server.url, timeout=httpx.Timeout(5, read=0.2)) as c, \
                    pytest.raises(httpx.ReadTimeout):
                _complete(c, "x")
        deadline = time.monotonic() + 5
        while threading.active_count() > baseline and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= baseline
        assert server.stats()["faults"] == {"hang": 3}


def test_stop_returns_promptly_with_hung_and_idle_connections_open():
    server = start_server(ServerConfig(hang=1.0))  # every call hangs for an hour
    host, port = server.host, server.port
    hung = []
    for _ in range(3):
        sock = socket.create_connection((host, port))
        body = b'{"prompt": "x"}'
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        hung.append(sock)
    idle = socket.create_connection((host, port))  # connected, never sends anything
    deadline = time.monotonic() + 5
    while server.stats()["faults"].get("hang", 0) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.stats()["faults"] == {"hang": 3}
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2.0
    for sock in [*hung, idle]:
        sock.settimeout(2)
        try:
            data = sock.recv(100)
        except ConnectionResetError:  # closed with a reset: also closed, also no answer
            data = b""
        assert data == b""  # closed by the server, no answer
        sock.close()
    with pytest.raises(OSError):
        socket.create_connection((host, port), timeout=1)


def test_latency_is_added_and_200_concurrent_connections_are_served():
    config = ServerConfig(latency_ms=400)
    prompts = [pure_prompt(g) for g in _games(200, seed=3)]

    async def run(url: str) -> tuple[list[httpx.Response], float]:
        limits = httpx.Limits(max_connections=300, max_keepalive_connections=300)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as c:
            started = time.monotonic()
            responses = await asyncio.gather(*(
                c.post(CHAT, json={"messages": [{"role": "user", "content": p}], "seed": i})
                for i, p in enumerate(prompts)
            ))
            return responses, time.monotonic() - started

    with start_server(config) as server:
        responses, elapsed = asyncio.run(run(server.url))
        stats = server.stats()
    assert [r.status_code for r in responses] == [200] * 200
    assert stats["by_status"] == {"200": 200}
    assert 0.4 <= elapsed < 20  # 80 s if the calls were served one at a time


# --- auth and rate limits -----------------------------------------------------------------


def test_api_key_is_required_when_set_and_never_shown():
    key = "sk-test-not-a-real-key-123"
    config = ServerConfig(api_key=key)
    assert key not in repr(config)
    prompt = pure_prompt(np.eye(2))
    with start_server(config) as server, httpx.Client(base_url=server.url) as c:
        missing = _chat(c, prompt)
        wrong = c.post(
            CHAT, json={"messages": [{"role": "user", "content": prompt}]},
            headers={"Authorization": "Bearer sk-wrong"})
        right = c.post(CHAT, json={"messages": [{"role": "user", "content": prompt}]},
                       headers={"Authorization": f"Bearer {key}"})
        models = c.get("/v1/models")
        health = c.get("/health")
        stats = server.stats()
    assert missing.status_code == wrong.status_code == models.status_code == 401
    assert missing.json()["error"]["code"] == "invalid_api_key"
    assert key not in missing.text + wrong.text
    assert right.status_code == 200 and parse_pure(
        right.json()["choices"][0]["message"]["content"], 2).ok
    assert health.status_code == 200
    assert stats["by_status"] == {"401": 3, "200": 2}


def test_rate_limit_answers_429_with_retry_after_and_stats_count_everything():
    config = ServerConfig(rate_limit_rps=2)  # burst 1, one token every 0.5 s
    with start_server(config) as server, httpx.Client(base_url=server.url) as c:
        responses = [_complete(c, "x") for _ in range(10)]
        limited = [r for r in responses if r.status_code == 429]
        time.sleep(0.6)
        after_wait = _complete(c, "x")
        stats = server.stats()
    assert responses[0].status_code == 200
    assert len(limited) >= 7  # 10 calls take far less than the 1.5 s that refills 3 tokens
    for r in limited:
        assert r.headers["retry-after"] == "1"
        assert 1 <= int(r.headers["retry-after-ms"]) <= 500
        assert r.json()["error"]["code"] == "rate_limit_exceeded"
    assert after_wait.status_code == 200
    assert stats["requests"] == 11
    assert stats["by_status"] == {"200": 11 - len(limited), "429": len(limited)}
    assert stats["faults"] == {"rate_limit": len(limited)}


def test_config_rejects_fractions_that_do_not_fit():
    with pytest.raises(ValueError, match="add up to"):
        ServerConfig(fail_500=0.6, hang=0.5)
    with pytest.raises(ValueError, match="fail_429"):
        ServerConfig(fail_429=1.5)
    with pytest.raises(ValueError, match="rate_limit_rps"):
        ServerConfig(rate_limit_rps=0)


def test_mock_answerer_is_usable_without_a_server():
    answerer = MockAnswerer(seed=1)
    prompt = mixed_prompt(np.eye(3), style="completion")
    text = answerer.complete(prompt, seed=8)["choices"][0]["text"]
    assert text == _dummy(prompt, 8, "matrix.mixed:3", "completion")


# --- the command line ---------------------------------------------------------------------


def test_serve_mock_command_answers_and_exits_cleanly_on_sigterm():
    proc, url = start_cli_server("mock", "--port", "0", "--seed", "4",
                                 "--fail-500", "0.5", env={"DISTBENCH_MOCK_API_KEY": ""})
    try:
        assert url.startswith("http://127.0.0.1:")
        prompt = pure_prompt(np.eye(3), style="completion")
        with httpx.Client(base_url=url, timeout=10) as c:
            statuses = [_complete(c, prompt, seed=n).status_code for n in range(20)]
            ok = _complete(c, prompt, seed=99)
            while ok.status_code != 200:
                ok = _complete(c, prompt, seed=99)
            stats = c.get("/stats").json()
    finally:
        code, err = stop_cli_server(proc)
    plan = fault_plan(ServerConfig(seed=4, fail_500=0.5), 20)
    assert statuses == [500 if kind else 200 for kind in plan]
    assert ok.json()["choices"][0]["text"] == _dummy(prompt, 99, "matrix.pure:3", "completion")
    assert stats["by_status"]["500"] >= plan.count("fail_500")
    assert code == 0, err
    assert "Traceback" not in err


def test_serve_mock_takes_the_api_key_from_the_environment_only():
    key = "sk-env-key-456"
    proc, url = start_cli_server("mock", "--port", "0", env={"DISTBENCH_MOCK_API_KEY": key})
    try:
        with httpx.Client(base_url=url, timeout=10) as c:
            denied = _complete(c, "x")
            allowed = c.post(COMPLETIONS, json={"prompt": "x"},
                             headers={"Authorization": f"Bearer {key}"})
    finally:
        code, err = stop_cli_server(proc)
    assert (denied.status_code, allowed.status_code) == (401, 200)
    assert code == 0 and key not in err


def test_serve_mock_raises_the_gil_switch_interval_while_it_serves_only(monkeypatch):
    from click.testing import CliRunner

    from distbench.cli.main import cli
    from distbench.mockserver import http as mock_http

    seen: list[float] = []

    def start(config, answerer):  # the real server; SIGTERM (to _serve's handler) once up
        server = mock_http.start_server(config, answerer)

        def stop() -> None:
            seen.append(sys.getswitchinterval())
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Timer(0.3, stop).start()
        return server

    monkeypatch.setattr("distbench.mockserver.start_server", start)
    before = sys.getswitchinterval()
    result = CliRunner().invoke(cli, ["serve", "mock", "--port", "0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert seen == [mock_http.SWITCH_INTERVAL] and before != mock_http.SWITCH_INTERVAL
    assert sys.getswitchinterval() == before


def test_serve_mock_on_a_taken_port_is_a_one_line_error():
    with start_server() as taken:
        result = subprocess.run(distbench_argv("serve", "mock", "--port", str(taken.port)),
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "already in use" in result.stderr and "--port" in result.stderr
