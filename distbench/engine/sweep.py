"""Sweeps: a spec expanded into the shards of every (provider, tier, model), run as one plan.

Every model is planned with the same buckets, seeds and game ranges, so the shards of different
models share their games chunks (``chunk_id``): the games are generated from (bucket, seed)
alone, written once, and every model is compared on identical instances.
"""

from __future__ import annotations

from typing import Any

from distbench.engine.driver import RunPlan
from distbench.engine.plan import MatrixRunConfig, default_max_tokens, plan_matrix
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
        max_tokens=spec.max_tokens,
        shard_trials=spec.shard_trials,
        logprob_cue=spec.logprob_cue,
        min_label_mass=spec.min_label_mass,
    )


def family_configs(spec: SweepSpec) -> list[Any]:
    """The negotiation and fog configurations of the sweep (dummy models skip them)."""
    from distbench.games.fog.plan import FogRunConfig
    from distbench.games.negotiation.plan import NegotiationRunConfig

    out: list[Any] = []
    for entry in spec.models:
        if entry.spec.provider == "dummy":
            continue
        if spec.negotiation:
            neg = spec.negotiation
            for opponent in neg["opponents"]:
                out.append(NegotiationRunConfig(
                    seeds=spec.seeds, num_games=neg["games"], modes=tuple(neg["modes"]),
                    langs=tuple(neg["langs"]), player_a=entry.spec,
                    player_b=None if opponent == "self" else opponent,
                    max_messages=neg["max_messages"], llm_seed=spec.llm_seed,
                    temperature=spec.temperature, max_tokens=neg.get("max_tokens", 256),
                ))
        if spec.fog:
            fog = spec.fog
            out.append(FogRunConfig(
                pairings=tuple((entry.spec, o) for o in fog["opponents"]), seeds=spec.seeds,
                num_games=fog["games"], scout_accuracy=fog["scout_accuracy"],
                scouting=fog["scouting"], llm_seed=spec.llm_seed, temperature=spec.temperature,
                max_tokens=fog.get("max_tokens", 256), max_turns=fog.get("max_turns", 20),
            ))
    return out


def sweep_identity(spec: SweepSpec) -> dict[str, Any]:
    """What decides the sweep's rows: every configuration's identity."""
    return {"sweep": [model_config(spec, i).identity() for i in range(len(spec.models))],
            "families": [c.identity() for c in family_configs(spec)]}


def sweep_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """The summary records of every family in the run, each with its ``family``; ``offload``
    runs the matrix bootstraps (see :func:`distbench.report.summary.matrix_summary`)."""
    from distbench.games.fog.plan import fog_summary
    from distbench.games.negotiation.summary import negotiation_summary
    from distbench.report.summary import matrix_summary

    out = []
    for family, records in (("matrix", matrix_summary(con, offload)),
                            ("negotiation", negotiation_summary(con)), ("fog", fog_summary(con))):
        out.extend({"family": family, **record} for record in records)
    return out


def plan_sweep(spec: SweepSpec, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a sweep: matrix cells, then negotiation and fog cells."""
    from distbench.games.fog.plan import FogRunConfig, plan_fog_shards
    from distbench.games.negotiation.plan import plan_shards as plan_negotiation_shards

    shards: list[Any] = []
    for i in range(len(spec.models)):
        shards.extend(plan_matrix(model_config(spec, i), run_id=run_id))
    for config in family_configs(spec):
        if isinstance(config, FogRunConfig):
            shards.extend(plan_fog_shards(config, run_id))
        else:
            shards.extend(plan_negotiation_shards(config, run_id))
    return RunPlan(
        family="sweep",
        config={"sweep": spec.to_dict()},
        identity=sweep_identity(spec),
        shards=shards,
        seeds={"game_seeds": list(spec.seeds), "llm_seed": spec.llm_seed},
        summarize=sweep_summary,
        unit="units",
        extra_styles=("completion",) if "logprob" in spec.modes else (),
    )


def describe_plan(spec: SweepSpec) -> dict[str, Any]:
    """Cells, shards, calls and an estimate of tokens, for ``distbench sweep plan``."""
    from distbench.games.matrix.buckets import get_bucket

    plan = plan_sweep(spec, run_id="plan")
    cells = len(spec.seeds) * len(spec.buckets) * len(spec.models) * len(spec.modes)
    matrix = [s for s in plan.shards if s.family == "matrix"]
    calls = sum(s.num_trials_total for s in matrix)
    prompt_tokens = completion_tokens = 0
    for shard in matrix:
        b = get_bucket(shard.bucket)
        # prompt: ~110 words of rules plus the table (about 5 tokens a cell)
        per_prompt = 160 + 5 * b.rows * b.cols + 4 * (b.rows + b.cols)
        prompt_tokens += per_prompt * shard.num_trials_total
        for mode in shard.modes:
            per_game = 1 if mode == "logprob" else shard.num_trials
            budget = 1 if mode == "logprob" else (
                shard.max_tokens or default_max_tokens(shard.llm.style, mode))
            completion_tokens += budget * per_game * shard.num_games
    by_model = {}
    for shard in matrix:
        key = f"{shard.tier}:{shard.llm.provider}:{shard.llm.model}"
        by_model[key] = by_model.get(key, 0) + shard.num_trials_total
    return {
        "cells": cells,
        "shards": len(plan.shards),
        "calls": calls,
        "prompt_tokens_est": prompt_tokens,
        "completion_tokens_max": completion_tokens,
        "calls_by_model": by_model,
        "episodes": sum(s.num_units for s in plan.shards if s.family == "negotiation"),
        "fog_games": sum(s.num_units for s in plan.shards if s.family == "fog"),
    }
