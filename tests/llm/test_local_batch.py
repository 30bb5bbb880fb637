"""Batched local decoding: several samples of one prompt decoded in one llama.cpp batch."""

from __future__ import annotations

import asyncio

import pytest

from distbench.llm.base import Request
from distbench.llm.local import LocalBackend, local_available, shared_model
from distbench.llm.registry import make_spec

pytestmark = pytest.mark.skipif(not local_available(), reason="bundled model not installed")

PROMPT = ("You are the row player of a zero-sum game with payoffs [[3, -1], [-2, 4]]. "
          "Choose one of your 2 actions.\nAction: ")


def test_same_prompt_seeds_and_settings_give_the_same_texts_whatever_ran_before():
    model = shared_model()
    seeds = [5, 6, 7, 8]
    first = model.complete_many(PROMPT, seeds, max_tokens=12, temperature=1.0)
    model.complete("Something else entirely.", max_tokens=8, seed=1)  # disturbs the caches
    model.complete_many("Another prompt", [1, 2], max_tokens=5)
    again = model.complete_many(PROMPT, seeds, max_tokens=12, temperature=1.0)
    texts = [c["text"] for c in first["choices"]]
    assert texts == [c["text"] for c in again["choices"]]
    assert len(set(texts)) > 1  # each sample has its own sampler
    assert first["usage"]["prompt_tokens"] == again["usage"]["prompt_tokens"]


def test_a_prompt_sharing_a_prefix_with_the_last_one_gives_what_a_fresh_model_gives():
    """The batch context keeps the prefix the previous prompt evaluated (games of a bucket share
    their instructions); the texts must not depend on it."""
    from distbench.games.matrix.generate import generate_games
    from distbench.games.matrix.prompts import pure_prompt
    from distbench.llm.local import LocalModel

    payoffs = generate_games("3x3_midVar_mixed", 7, 0, 3)
    prompts = [pure_prompt(payoffs[g], style="completion") for g in range(3)]
    seeds = [21, 22, 23, 24, 25]
    chained = LocalModel()
    try:
        for prompt in prompts[:2]:
            chained.complete_many(prompt, seeds, max_tokens=10)
        tokens = chained._plain.tokenize(prompts[2].encode())
        assert chained._reusable(tokens) > len(tokens) // 2  # most of the prompt is reused
        after = chained.complete_many(prompts[2], seeds, max_tokens=10)
    finally:
        chained.close()
    fresh = LocalModel()
    try:
        alone = fresh.complete_many(prompts[2], seeds, max_tokens=10)
    finally:
        fresh.close()
    assert [c["text"] for c in after["choices"]] == [c["text"] for c in alone["choices"]]
    assert after["usage"] == alone["usage"]


def test_greedy_samples_all_equal_the_one_sample_answer_first_token():
    model = shared_model()
    many = model.complete_many(PROMPT, [1, 2, 3], max_tokens=1, temperature=0.0)
    one = model.complete(PROMPT, max_tokens=1, temperature=0.0, seed=9)
    assert [c["text"] for c in many["choices"]] == [one["choices"][0]["text"]] * 3


def test_stop_strings_and_budget_as_in_one_sample_calls():
    model = shared_model()
    out = model.complete_many(PROMPT, [1, 2, 3, 4], max_tokens=6, stop=["\n"])
    assert all("\n" not in c["text"] for c in out["choices"])
    assert out["usage"]["completion_tokens"] <= 4 * 6


def test_backend_answers_a_request_of_several_samples_in_one_call():
    backend = LocalBackend(make_spec("local"))
    req = Request(prompt=PROMPT, seed=11, max_tokens=8, samples=(11, 12, 13))
    (answer,) = asyncio.run(backend.generate([req]))
    assert answer.status == "ok" and len(answer.texts) == 3 and answer.text == answer.texts[0]
    (again,) = asyncio.run(backend.generate([req]))
    assert again.texts == answer.texts
    chat = LocalBackend(make_spec("local", style="chat"))
    (reply,) = asyncio.run(chat.generate([Request(prompt="Name a colour.", seed=1, max_tokens=6,
                                                  samples=(1, 2))]))
    assert reply.status == "ok" and len(reply.texts) == 2
