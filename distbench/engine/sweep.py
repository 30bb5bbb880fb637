"""Sweeps: a spec expanded into the shards of every (provider, tier, model) and every family
the spec names, run as one plan.

Every model is planned with the same buckets, seeds and game ranges, so the shards of different
models share their games chunks (``chunk_id``): the games are generated from (bucket, seed)
alone, written once, and every model is compared on identical instances. Each family says what
it plays in a sweep (its ``sweep`` hook: the configurations of one model entry) and how to
describe its shards (``describe``); the engine names none of them.
"""

from __future__ import annotations

from typing import Any

from distbench.engine.budget import proportional
from distbench.games.base import RunPlan
from distbench.games.registry import families
from distbench.llm.base import price_of
from distbench.spec import SweepSpec


def sweep_configs(spec: SweepSpec) -> dict[str, list[Any]]:
    """The configurations of the sweep, grouped as its identity records them: ``"sweep"``
    (the matrix cells of every model) and ``"families"`` (the other families' cells, model by
    model), each a list of configurations with ``plan(run_id)`` and ``identity()``."""
    out: dict[str, list[Any]] = {"sweep": [], "families": []}
    for entry in spec.models:
        for family in families().values():
            for config in family.sweep_configs(spec, entry):
                out.setdefault(family.sweeps.key, []).append(config)
    return out


def sweep_identity(spec: SweepSpec) -> dict[str, Any]:
    """What decides the sweep's rows: every configuration's identity."""
    return {key: [c.identity() for c in configs] for key, configs in sweep_configs(spec).items()}


def sweep_summary(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """The summary records of every family in the run, each with its ``family``; ``offload``
    runs numeric work such as bootstraps (a run's Ray workers, or None: this process)."""
    out = []
    for name, family in families().items():
        out.extend({"family": name, **record} for record in family.summary(con, offload))
    return out


def plan_sweep(spec: SweepSpec, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a sweep: matrix cells, then the other families' cells."""
    shards: list[Any] = []
    styles: dict[str, None] = {}
    calls = requests = prompt = completion = 0
    cost: float | None = None
    estimators: dict[str, Any] = {}  # shard id -> its plan's per-shard estimate
    expecters: dict[str, Any] = {}  # shard id -> its plan's per-shard expected bill
    batchable = True
    for configs in sweep_configs(spec).values():
        for config in configs:
            plan = config.plan(run_id)
            shards.extend(plan.shards)
            share = plan.shard_estimate or proportional(plan)
            batchable = batchable and plan.batchable
            estimators.update((s.shard_id, share) for s in plan.shards)
            if plan.shard_expected is not None:
                expecters.update((s.shard_id, plan.shard_expected) for s in plan.shards)
            styles.update(dict.fromkeys(plan.extra_styles))
            calls += plan.expected_calls or 0
            requests += plan.expected_requests or plan.expected_calls or 0
            prompt += (plan.expected_tokens or (0, 0))[0]
            completion += (plan.expected_tokens or (0, 0))[1]
            if plan.expected_cost is not None:
                cost = (cost or 0.0) + plan.expected_cost
    return RunPlan(
        family="sweep",
        config={"sweep": spec.to_dict()},
        identity=sweep_identity(spec),
        shards=shards,
        seeds={"game_seeds": list(spec.seeds), "llm_seed": spec.llm_seed},
        summarize=sweep_summary,
        unit="units",
        extra_styles=tuple(styles),
        expected_calls=calls or None,  # the calls the families can count (at least)
        expected_tokens=(prompt, completion) if prompt else None,
        expected_cost=cost,
        expected_requests=requests or None,
        shard_estimate=lambda shard: (estimators.get(shard.shard_id) or _nothing)(shard),
        batchable=batchable,
        shard_expected=lambda shard, observed: (
            expecters.get(shard.shard_id) or _nothing_expected)(shard, observed),
    )


def _nothing(shard: Any) -> tuple[int, int, float | None]:
    return 0, 0, 0.0


def _nothing_expected(shard: Any, observed: Any) -> tuple[int, int, float | None, str]:
    return 0, 0, 0.0, ""


def describe_plan(spec: SweepSpec, batch_price: float = 0.5,
                  observed: Any = None) -> dict[str, Any]:
    """Shards, and each family's figures (cells, calls, token estimates, episodes...), for
    ``distbench sweep plan``: all in one mapping, and by family under ``"families"``. The
    cost at most (``cost_usd_max``, every answer at its whole budget) and the cost expected
    (``expected``: an :class:`~distbench.engine.estimate.Expected` at the live price, with
    ``observed`` completion lengths of earlier runs when given), each also at
    ``batch_price``."""
    from distbench.engine.estimate import expected_of

    plan = plan_sweep(spec, run_id="plan")
    expected = expected_of(plan, observed)
    out: dict[str, Any] = {"shards": len(plan.shards), "families": {},
                           "cost_usd_max": plan.expected_cost,
                           "cost_usd_max_batch": None if plan.expected_cost is None
                           else plan.expected_cost * batch_price,
                           "unpriced_models": sorted({f"{m.spec.provider}:{m.spec.model}"
                                                      for m in spec.models
                                                      if price_of(m.spec) is None
                                                      and m.spec.provider != "dummy"}),
                           "expected": expected,
                           "cost_usd_expected_batch": None
                           if expected is None or expected.cost is None
                           else expected.cost * batch_price}
    for name, family in families().items():
        figures = family.describe(spec, [s for s in plan.shards if s.family == name])
        out.update(figures)
        out["families"][name] = figures
    return out
