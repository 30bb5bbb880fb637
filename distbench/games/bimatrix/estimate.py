"""What a bimatrix plan asks the models, for the estimates (``run``, ``sweep plan``), the
budgets (``--max-cost``, ``--max-tokens-total``) and ``--execution batch``.

A shard asks each (model, seat, mode) once for all its games and trials (the runner's
``answers`` cache): the model in each of its seats and modes, the model in the other seat
when it plays itself (``self``, unless it plays that seat anyway), and each model opponent in
the other seat. Every request is known before any answer (single-turn), so the plan is
batchable. Prompt tokens are those of the prompts rendered (the first :data:`SAMPLE_GAMES`
games of the set and seed, a quarter of their characters); completion tokens at most the
budget of each answer, expected the median of earlier runs of the model in the mode
(``observed``) or else the shortest valid answer of the mode.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from distbench.games.answers.lengths import answer_tokens, approx_tokens
from distbench.games.bimatrix.prompts import answer_policy, prompt, with_cue
from distbench.llm.base import BackendSpec, cost_usd

__all__ = ["asked", "plan_fields", "shard_estimate", "shard_expected"]

SAMPLE_GAMES = 32
"""Games of a (set, seed) whose prompts are rendered to estimate their prompt tokens."""


def _free(spec: BackendSpec) -> bool:
    from distbench.llm.registry import backend_class

    return backend_class(spec.provider).in_process


def asked(shard: Any) -> list[tuple[BackendSpec, str, str]]:
    """The (model, seat, mode) a shard asks, each once (as the runner caches them)."""
    c = shard.config
    out: dict[tuple[BackendSpec, str, str, str], None] = {}
    for seat in c.seats:
        other = "col" if seat == "row" else "row"
        for mode in c.modes:
            out[(c.llm, seat, mode, "")] = None
            for opp in c.opponents:
                if opp == "self":
                    out[(c.llm, other, mode, "")] = None
                elif isinstance(opp, BackendSpec):
                    out[(opp, other, mode, "opp-")] = None
    return [(spec, seat, mode) for spec, seat, mode, _ in out]


@functools.lru_cache(maxsize=4096)
def prompt_tokens(game_set: str, seed: int, seat: str, mode: str, style: str,
                  cue: str) -> float:
    """Mean prompt tokens of a request on the games of (``game_set``, ``seed``), rendered as
    the runner renders them (logprob mode: the completion prompt ending with ``cue``)."""
    from distbench.games.bimatrix.instances import generate

    a, b = generate(game_set, seed, 0, SAMPLE_GAMES)
    total = 0
    for g in range(len(a)):
        if mode == "logprob":
            text = with_cue(prompt(a[g], b[g], seat, "pure", "completion"), cue)
        else:
            text = prompt(a[g], b[g], seat, mode, style)
        total += approx_tokens(text)
    return total / len(a)


def _estimate(shard: Any, observed: Mapping[tuple[str, str, str], float] | None
              ) -> tuple[int, int, int, float | None, float | None, tuple[str, ...]]:
    """(requests, prompt tokens, completion at most, completion expected, cost at most, cost
    expected) of the paid models' calls of one shard, and the sources of the expected."""
    from distbench.games.bimatrix.instances import get_set

    c = shard.config
    s = get_set(shard.game_set)
    games = shard.stop - shard.start
    requests = 0
    prompt_sum = most = likely_sum = 0.0
    cost_max: float | None = 0.0
    cost_likely: float | None = 0.0
    sources: dict[str, None] = {}
    for spec, seat, mode in asked(shard):
        if _free(spec):
            continue
        trials = 1 if mode == "logprob" else c.num_trials
        n = games * trials
        style = "completion" if mode == "logprob" else spec.style
        per_prompt = prompt_tokens(shard.game_set, shard.seed, seat, mode, style,
                                   c.logprob_cue)
        budget = 1 if mode == "logprob" else c.max_tokens or answer_policy(mode, style)[1]
        seen = (observed or {}).get((spec.provider, spec.model, mode))
        if mode != "logprob" and seen is not None:
            likely, source = min(budget, seen), "calls"
        else:
            k = s.rows if seat == "row" else s.cols
            likely, source = min(budget, answer_tokens(mode, style, k)), "format"
        sources.setdefault(source, None)
        p = per_prompt * n
        requests += n
        prompt_sum += p
        most += budget * n
        likely_sum += likely * n
        high = cost_usd(spec, round(p), budget * n)
        low = cost_usd(spec, round(p), round(likely * n))
        cost_max = None if cost_max is None or high is None else cost_max + high
        cost_likely = None if cost_likely is None or low is None else cost_likely + low
    return (requests, round(prompt_sum), round(most), round(likely_sum), cost_max,
            cost_likely, tuple(sources))


def shard_estimate(shard: Any) -> tuple[int, int, float | None]:
    """(prompt tokens about, completion tokens at most, cost at most) of one shard's calls,
    for the budgets."""
    _, prompt_, most, _, cost, _, _ = _estimate(shard, None)
    return prompt_, most, cost


def shard_expected(shard: Any, observed: Mapping[tuple[str, str, str], float] | None = None
                   ) -> tuple[int, int, float | None, str]:
    """(prompt tokens, completion tokens expected, cost expected at the live price, source)
    of one shard's calls."""
    _, prompt_, _, likely, _, cost, sources = _estimate(shard, observed)
    return prompt_, likely, cost, "+".join(sources)


def plan_fields(shards: list[Any]) -> dict[str, Any]:
    """The estimate fields of a bimatrix :class:`~distbench.games.base.RunPlan`: requests,
    tokens and cost at most (None when no paid model is called), the per-shard hooks, and
    ``batchable``."""
    requests = prompt_ = most = 0
    cost: float | None = 0.0
    for shard in shards:
        r, p, m, _, c, _, _ = _estimate(shard, None)
        requests += r
        prompt_ += p
        most += m
        cost = None if cost is None or c is None else cost + c
    paid = requests > 0
    return {"expected_tokens": (prompt_, most) if paid else None,
            "expected_cost": cost if paid else None,
            "expected_requests": requests if paid else None,
            "shard_estimate": shard_estimate, "shard_expected": shard_expected,
            "batchable": True}
