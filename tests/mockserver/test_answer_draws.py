"""The mock's gama answers drawn on Python integers equal the dummy's numpy draws: the answers
a run gets from the mock server do not change with how the draws are computed."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.llm.dummy import uniforms
from distbench.mockserver.answerers import (
    _GAMA_PLAN,
    _GAMA_RANGE,
    MockAnswerer,
    gama_answer,
    seed_uniforms,
)

SEEDS = [0, 1, 2**32 + 7, 2**63, 2**64 - 1, *range(3, 400, 37),
         *np.random.default_rng(5).integers(0, 2**63, 40, dtype=np.int64).tolist()]


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_uniforms_are_the_dummys_uniforms(seed):
    expected = uniforms(np.array([seed], dtype=np.uint64), 16)[0]
    assert seed_uniforms(seed, 16) == expected.tolist()


def _numpy_answer(prompt: str, seed: int) -> str:
    """The answer as drawn from the dummy's numpy uniforms (16 of them, sliced)."""
    u = uniforms(np.array([seed & 0xFFFF_FFFF_FFFF_FFFF], dtype=np.uint64), 16)[0]
    if (plan := _GAMA_PLAN.search(prompt)) is not None:
        n, gold = int(plan.group(1)), int(plan.group(2))
        edges = [0, *sorted(int(x * (gold + 1)) for x in u[: n - 1]), gold]
        return "Answer: " + ", ".join(str(b - a) for a, b in zip(edges[:-1], edges[1:], strict=True))
    if (span := _GAMA_RANGE.search(prompt)) is not None:
        low, high = int(span.group(1)), int(span.group(2))
        return f"Answer: {low + min(int(u[0] * (high - low + 1)), high - low)}"
    return f"Answer: {'go' if u[0] < 0.5 else 'stay'}"


PROMPTS = [
    "Round 3.\n\nEnd your reply with one line: Answer: <a whole number from 0 to 100>",
    "Answer: <a whole number from 17 to 19>",
    "Answer: go, or Answer: stay",
    *(f"Answer: <{n} whole numbers separated by commas, adding up to {gold}>"
      for n, gold in [(0, 100), (1, 100), (2, 7), (5, 100), (10, 100), (20, 1000)]),
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_gama_answers_equal_the_numpy_draws(prompt):
    for seed in SEEDS:
        assert gama_answer(prompt, seed) == _numpy_answer(prompt, seed)


def test_a_chat_answer_reads_the_last_user_message():
    messages = [{"role": "system", "content": "rules"},
                {"role": "user", "content": "intro"},
                {"role": "assistant", "content": "Answer: 3"},
                {"role": "user", "content": PROMPTS[0]}]
    chat = MockAnswerer().chat(messages, seed=11)
    assert chat["choices"][0]["message"]["content"] == _numpy_answer(PROMPTS[0], 11)
    assert chat["usage"]["prompt_tokens"] == -(-len("\n".join(m["content"] for m in messages)) // 4)
