"""Sweeps: a spec expanded into the shards of every (provider, tier, model), run as one plan.

Every model is planned with the same buckets, seeds and game ranges, so the shards of different
models share their games chunks (``chunk_id``): the games are generated from (bucket, seed)
alone, written once, and every model is compared on identical instances.
"""

from __future__ import annotations

from typing import Any

from distbench.engine.driver import RunPlan
from distbench.engine.plan import MatrixRunConfig, plan_matrix
from distbench.spec import SweepSpec


def model_config(spec: SweepSpec, index: int) -> MatrixRunConfig:
    """The matrix configuration of the sweep's ``index``-th model."""
    entry = spec.models[index]
    return MatrixRunConfig(
        buckets=spec.buckets,
        seeds=spec.seeds,
        num_games=spec.games_per_bucket,
        num_trials=spec.trials_per_game,
        modes=spec.modes,
        llm=entry.spec,
        llm_seed=spec.llm_seed,
        tier=entry.tier,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens or (256 if entry.spec.style == "chat" else 32),
        shard_trials=spec.shard_trials,
    )


def sweep_identity(spec: SweepSpec) -> dict[str, Any]:
    """What decides the sweep's rows: every model configuration's identity."""
    return {"sweep": [model_config(spec, i).identity() for i in range(len(spec.models))]}


def plan_sweep(spec: SweepSpec, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a sweep."""
    from distbench.report.summary import matrix_summary

    shards = []
    for i in range(len(spec.models)):
        shards.extend(plan_matrix(model_config(spec, i), run_id=run_id))
    return RunPlan(
        family="matrix",
        config={"sweep": spec.to_dict()},
        identity=sweep_identity(spec),
        shards=shards,
        seeds={"game_seeds": list(spec.seeds), "llm_seed": spec.llm_seed},
        summarize=matrix_summary,
    )


def describe_plan(spec: SweepSpec) -> dict[str, Any]:
    """Cells, shards, calls and an estimate of tokens, for ``distbench sweep plan``."""
    from distbench.games.matrix.buckets import get_bucket

    plan = plan_sweep(spec, run_id="plan")
    cells = len(spec.seeds) * len(spec.buckets) * len(spec.models) * len(spec.modes)
    calls = sum(s.num_trials_total for s in plan.shards)
    prompt_tokens = completion_tokens = 0
    for shard in plan.shards:
        b = get_bucket(shard.bucket)
        # prompt: ~110 words of rules plus the table (about 5 tokens a cell)
        per_prompt = 160 + 5 * b.rows * b.cols + 4 * (b.rows + b.cols)
        prompt_tokens += per_prompt * shard.num_trials_total
        completion_tokens += shard.max_tokens * shard.num_trials_total
    by_model = {}
    for shard in plan.shards:
        key = f"{shard.tier}:{shard.llm.provider}:{shard.llm.model}"
        by_model[key] = by_model.get(key, 0) + shard.num_trials_total
    return {
        "cells": cells,
        "shards": len(plan.shards),
        "calls": calls,
        "prompt_tokens_est": prompt_tokens,
        "completion_tokens_max": completion_tokens,
        "calls_by_model": by_model,
    }
