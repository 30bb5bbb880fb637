"""What a negotiation shard may spend, for the budgets (``--max-cost``, ``--max-tokens-total``).

A ceiling, not a forecast: how long an episode runs depends on the answers. A seat played by a
model answers at most ``max_messages + 1`` times (its free turns, then the time-out or the
answer to a proposal), and its ``j``-th prompt holds the introduction and at most ``j`` of its
own answers and ``j`` relayed ones, each at most ``max_tokens`` long (plus a few tokens of
wrapping). Introductions are rendered and counted at four characters a token, as the mock
server counts them; real tokenizers count a little differently, which the budget's scaling
(by the spend of the shards that returned) absorbs.
"""

from __future__ import annotations

from typing import Any

from distbench.games.answers.lengths import approx_tokens
from distbench.games.negotiation.instances import generate_instances
from distbench.games.negotiation.prompts import intro
from distbench.llm.base import BackendSpec, cost_usd

__all__ = ["shard_calls", "shard_estimate"]

WRAP_TOKENS = 24
"""Tokens of wrapping per relayed message and per chat message (template, relay phrase)."""


def _seat_ceiling(intro_tokens: int, max_messages: int, max_tokens: int) -> tuple[int, int]:
    """(prompt, completion) tokens of one model seat of one episode, at most."""
    calls = max_messages + 1
    step = 2 * (max_tokens + WRAP_TOKENS)
    prompt = calls * (intro_tokens + WRAP_TOKENS) + step * (calls - 1) * calls // 2
    return prompt, calls * max_tokens


def _episodes(shard: Any) -> list[tuple[Any, str, str, int, Any]]:
    """(instance, mode, lang, max_messages, clembench prompts or None) of the shard's episodes
    (one per seat order each)."""
    if shard.instances:
        return [(fi.instance, fi.mode, fi.lang, fi.max_messages, fi.prompts)
                for fi in shard.instances]
    return [(inst, mode, lang, shard.max_messages, None)
            for inst in generate_instances(shard.seed, shard.start, shard.stop)
            for mode in shard.modes for lang in shard.langs]


def shard_calls(shard: Any) -> int:
    """The model answers the shard asks for at most: ``max_messages + 1`` per model seat of
    each episode, free in-process models (the dummy) not counted (for the progress line's
    ETA)."""
    from distbench.llm.registry import backend_class

    if shard.instances:
        limits = [fi.max_messages for fi in shard.instances]
    else:
        limits = [shard.max_messages] * (shard.num_units // len(shard.seat_orders))
    seats = sum(isinstance(player, BackendSpec) and not backend_class(player.provider).in_process
                for order in shard.seat_orders for player in shard.seats(order))
    return sum(limit + 1 for limit in limits) * seats  # each episode once per seat order


def shard_estimate(shard: Any) -> tuple[int, int, float | None]:
    """(prompt tokens, completion tokens, USD) the shard's model seats may spend, at most
    (cost None when a model of the shard has no price)."""
    by_spec: dict[BackendSpec, list[int]] = {}
    for instance, mode, lang, max_messages, prompts in _episodes(shard):
        for order in shard.seat_orders:
            for seat, player in zip(("a", "b"), shard.seats(order), strict=True):
                if not isinstance(player, BackendSpec):
                    continue
                first = (intro(instance, seat, mode, lang, max_messages) if prompts is None
                         else prompts.first(instance, seat, lang, max_messages))
                p, c = _seat_ceiling(approx_tokens(first), max_messages, shard.max_tokens)
                acc = by_spec.setdefault(player, [0, 0])
                acc[0] += p
                acc[1] += c
    prompt = sum(p for p, _ in by_spec.values())
    completion = sum(c for _, c in by_spec.values())
    costs = [cost_usd(spec, p, c) for spec, (p, c) in by_spec.items()]
    cost = None if any(c is None for c in costs) else float(sum(costs))  # type: ignore[arg-type]
    return prompt, completion, cost
