"""The mock's skill: a model named ``...-nash<P>`` answers the game's equilibrium in a share P
of its answers, so the example sweep's tiers differ as real models do, in a known order."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from distbench.games.answers.parse import parse_mixed, parse_pure
from distbench.games.matrix.prompts import mixed_prompt, pure_prompt
from distbench.kernels.zero_sum import solve_zero_sum
from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.answerers import MockAnswerer, equilibrium
from distbench.mockserver.wire import skill_of

# No saddle point: the row player's equilibrium mixes; action 2 has the best worst case (-1)
GAME = np.array([[3.0, -2.0, 1.0], [-1.0, 2.0, 0.0], [0.0, -3.0, 4.0]])


@pytest.mark.parametrize("name, skill", [("mock-nash90", 0.9), ("m-nash0", 0.0),
                                         ("x-nash100", 1.0), ("mock-nash101", None),
                                         ("mock", None), ("nash90", None), (None, None)])
def test_a_skill_is_read_from_the_model_name_only(name, skill):
    assert skill_of(name) == skill


def test_the_equilibrium_is_read_from_the_prompt_and_solved():
    x, safest = equilibrium(mixed_prompt(GAME))
    np.testing.assert_allclose(x, solve_zero_sum(GAME[None]).row[0], atol=1e-9)
    assert safest == 1 and equilibrium("no table here") is None


def test_skill_one_plays_the_equilibrium_and_skill_zero_plays_as_the_dummy():
    answerer = MockAnswerer()
    x, _ = equilibrium(mixed_prompt(GAME))
    for seed in range(20):
        perfect = answerer.answer_text(mixed_prompt(GAME), seed, completion=False, skill=1.0)
        np.testing.assert_allclose(parse_mixed(perfect, 3).strategy, x, atol=1e-3)
        pure = answerer.answer_text(pure_prompt(GAME), seed, completion=False, skill=1.0)
        assert parse_pure(pure, 3).action == 1  # 0-based: Action 2, the best worst case
        assert answerer.answer_text(pure_prompt(GAME), seed, completion=False, skill=0.0) == \
            answerer.answer_text(pure_prompt(GAME), seed, completion=False)


def test_over_http_the_share_of_equilibrium_answers_follows_the_name():
    x, _ = equilibrium(mixed_prompt(GAME))
    shares = {}
    with start_server(ServerConfig()) as server:
        for model in ("mock-nash90", "mock-nash50", "mock"):
            body = {"model": model, "messages": [{"role": "user", "content": mixed_prompt(GAME)}],
                    "seed": 7, "n": 100}
            reply = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=30).json()
            strategies = [parse_mixed(c["message"]["content"], 3).strategy
                          for c in reply["choices"]]
            shares[model] = np.mean([np.allclose(s, x, atol=1e-3) for s in strategies])
    assert shares["mock-nash90"] > 0.8 and 0.35 < shares["mock-nash50"] < 0.65
    assert shares["mock"] == 0.0
