"""What a fog shard may spend, for the budgets (``--max-cost``, ``--max-tokens-total``).

A ceiling: a model seat answers once per turn, at most ``max_turns`` times a game, each answer
at most ``max_tokens`` long. A turn's prompt is the rendered observation (the first turn's of
the shard's first game, counted at four characters a token as the mock server counts), plus
room for what grows during a game: the six fights shown and a scout report per force and turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.games.answers.lengths import approx_tokens
from distbench.games.fog.rules import Game, random_deployment
from distbench.games.fog.text import SYSTEM, render_observation
from distbench.llm.base import cost_usd

__all__ = ["shard_calls", "shard_estimate"]

FIGHT_TOKENS = 30
REVEAL_TOKENS = 8
WRAP_TOKENS = 200  # the system line, the chat template, a reasoning instruction


def turn_prompt_ceiling(shard: Any) -> int:
    """Prompt tokens of one turn of the shard's games, at most (about)."""
    rules = shard.rules
    rng = np.random.default_rng([shard.seed, shard.start])
    deps = tuple(random_deployment(rules.board_size, rules.num_forces, rng) for _ in (0, 1))
    game = Game(rules, deps, rng)  # type: ignore[arg-type]
    base = approx_tokens(render_observation(game.observation(0)) + SYSTEM)
    growth = 6 * FIGHT_TOKENS + rules.max_turns * rules.num_forces * REVEAL_TOKENS
    return base + growth + WRAP_TOKENS


def shard_calls(shard: Any) -> int:
    """The model answers the shard asks for at most: one per turn of each model seat (for the
    progress line's ETA); free in-process models (the dummy) are not counted."""
    from distbench.llm.registry import backend_class

    seats = sum(m is not None and not backend_class(m.provider).in_process
                for m in (shard.llm_a, shard.llm_b))
    return seats * (shard.stop - shard.start) * shard.rules.max_turns


def shard_estimate(shard: Any) -> tuple[int, int, float | None]:
    """(prompt tokens, completion tokens, USD) the shard's model seats may spend, at most."""
    models = [m for m in (shard.llm_a, shard.llm_b) if m is not None]
    if not models:
        return 0, 0, 0.0
    games = shard.stop - shard.start
    calls = games * shard.rules.max_turns
    prompt = calls * turn_prompt_ceiling(shard)
    completion = calls * shard.max_tokens
    costs = [cost_usd(m, prompt, completion) for m in models]
    cost = None if any(c is None for c in costs) else float(sum(costs))  # type: ignore[arg-type]
    return prompt * len(models), completion * len(models), cost
