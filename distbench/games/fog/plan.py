"""Planning of fog-of-war runs: configuration, shards with stable ids, the RunPlan.

A configuration plays ``num_games`` games per (ordered pairing, seed); with
``both_seat_orders`` each pairing is also played with the seats swapped. Shards hold up to
``shard_games`` consecutive games of one (ordered pairing, seed).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

from distbench.games.base import (
    RunPlan,
    check_config,
    check_plan_size,
    config_plan,
    seat_label,
    stable_hash,
)
from distbench.games.family import Identity, declare
from distbench.games.fog.agents import TIERS, check_agent
from distbench.games.fog.rules import Rules
from distbench.games.fog.schema import TABLES
from distbench.games.registry import register
from distbench.llm.base import BackendSpec

AgentSpec = str | BackendSpec
"""A scripted tier name (``tier1``..``tier4``), a user's agent class ``module:Class`` (imported
where the shard plays, see :func:`distbench.games.fog.agents.load_agent_class`) or the spec of
a model."""


def _agent_json(agent: AgentSpec, identity: bool) -> Any:
    if isinstance(agent, str):
        return agent
    if identity:
        return json.loads(json.dumps(agent.identity(), default=str))
    return {"provider": agent.provider, "model": agent.model, "style": agent.style,
            "options": json.loads(json.dumps(dict(agent.options), default=str))}


@dataclass(frozen=True, slots=True)
class FogRunConfig:
    """What a fog-of-war run plays.

    Attributes:
        pairings: (agent a, agent b) pairs; an agent is a tier name (or the design's strategy
            name of a tier, stored as the tier), a user's agent class ``module:Class`` (checked
            here: its module must import and the class have the agent API) or a BackendSpec.
        seeds: Game-stream seeds.
        num_games: Games per (ordered pairing, seed).
        scout_accuracy: Probability that a scout reveals the exact power.
        scouting: Whether Scout orders are allowed.
        board_size: Board side N.
        num_forces: Forces per player K.
        max_turns: Turn limit.
        noose_start: First turn the noose strikes.
        noose_every: Turns between noose strikes.
        scout_range: Chebyshev range of a scout.
        llm_seed: Seed of the models' sampling.
        temperature: Sampling temperature sent to models.
        max_tokens: Completion budget per turn answer.
        both_seat_orders: Also play every pairing with the seats swapped.
        shard_games: Target games per shard.
    """

    pairings: tuple[tuple[AgentSpec, AgentSpec], ...]
    seeds: tuple[int, ...] = (0,)
    num_games: int = 10
    scout_accuracy: float = 0.7
    scouting: bool = True
    board_size: int = 7
    num_forces: int = 5
    max_turns: int = 20
    noose_start: int = 8
    noose_every: int = 2
    scout_range: int = 3
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 512
    both_seat_orders: bool = True
    shard_games: int = 200

    def __post_init__(self) -> None:
        if not self.pairings:
            raise ValueError("pairings: at least one pairing is needed")
        pairings = []
        for pair in self.pairings:
            if len(pair) != 2:
                raise ValueError(f"pairings: each pairing is (agent_a, agent_b), got {pair!r}")
            names = []
            for agent in pair:
                if isinstance(agent, str):
                    try:
                        agent = check_agent(agent)
                    except ValueError as exc:
                        raise ValueError(f"pairings: {exc}") from None
                elif not isinstance(agent, BackendSpec):
                    raise ValueError("pairings: an agent is a tier name, module:Class or a "
                                     f"BackendSpec, got {agent!r}")
                names.append(agent)
            pairings.append(tuple(names))
        object.__setattr__(self, "pairings", tuple(pairings))
        check_config(self)
        try:
            self.rules()
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        chunks = math.ceil(self.num_games / self.shard_games)
        pairings = len(self.ordered_pairings())
        check_plan_size(pairings * len(self.seeds) * chunks,
                        f"{pairings} pairing(s) x {len(self.seeds)} seed(s) x {chunks:,} "
                        f"shard(s) of {self.shard_games:,} games")

    def rules(self) -> Rules:
        return Rules(board_size=self.board_size, num_forces=self.num_forces,
                     max_turns=self.max_turns, scout_accuracy=self.scout_accuracy,
                     scouting=self.scouting, scout_range=self.scout_range,
                     noose_start=self.noose_start, noose_every=self.noose_every)

    def ordered_pairings(self) -> list[tuple[AgentSpec, AgentSpec]]:
        """The pairings played, with the swapped seats when asked (no duplicates)."""
        out: list[tuple[AgentSpec, AgentSpec]] = []
        for a, b in self.pairings:
            for pair in ((a, b), (b, a)) if self.both_seat_orders else ((a, b),):
                if pair not in out:
                    out.append(pair)
        return out

    def _json(self, identity: bool) -> dict:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "pairings":
                value = [[_agent_json(a, identity) for a in pair] for pair in value]
            out[name] = value
        return json.loads(json.dumps(out))

    def to_dict(self) -> dict:
        """JSON-shaped configuration (lists, not tuples)."""
        return self._json(identity=False)

    def plan(self, run_id: str) -> RunPlan:
        """The :class:`RunPlan` of this configuration."""
        return plan_fog(self, run_id)

    def identity(self) -> dict:
        """What decides the rows: :meth:`to_dict` with the models' identities."""
        return self._json(identity=True)


@dataclass(frozen=True, slots=True)
class FogShard:
    """A chunk of games of one (ordered pairing, seed).

    Attributes:
        shard_id: Stable id: hash of everything below but ``run_id``.
        agent_a: Label of player a (tier name or provider:model).
        agent_b: Label of player b.
        llm_a: Player a's model, None for a scripted tier.
        llm_b: Player b's model, None for a scripted tier.
        seed: Game-stream seed.
        start: First game index.
        stop: One past the last game index.
        rules: The game parameters.
        llm_seed: Model sampling seed.
        temperature: Sampling temperature.
        max_tokens: Completion budget.
        specs: The models this shard calls (empty for scripted tiers).
        family: ``"fog"``.
        run_id: The run the rows belong to.
    """

    shard_id: str
    agent_a: str
    agent_b: str
    llm_a: BackendSpec | None
    llm_b: BackendSpec | None
    seed: int
    start: int
    stop: int
    rules: Rules
    llm_seed: int
    temperature: float
    max_tokens: int
    specs: tuple[BackendSpec, ...]
    family: str = "fog"
    run_id: str = field(default="", compare=False)

    @property
    def num_units(self) -> int:
        """Progress units: games."""
        return self.stop - self.start


def plan_fog_shards(config: FogRunConfig, run_id: str = "") -> list[FogShard]:
    """Expands ``config`` into shards (order: pairing, seed, game range)."""
    rules = config.rules()
    shards = []
    for a, b in config.ordered_pairings():
        specs = tuple(dict.fromkeys(x for x in (a, b) if isinstance(x, BackendSpec)))
        for seed in config.seeds:
            for chunk in range(math.ceil(config.num_games / config.shard_games)):
                start = chunk * config.shard_games
                stop = min(config.num_games, start + config.shard_games)
                key = {
                    "family": "fog", "a": _agent_json(a, True), "b": _agent_json(b, True),
                    "seed": seed, "start": start, "stop": stop,
                    "rules": _rules_json(rules),
                    "llm_seed": config.llm_seed if specs else None,
                    "temperature": config.temperature if specs else None,
                    "max_tokens": config.max_tokens if specs else None,
                }
                shards.append(FogShard(
                    shard_id=f"f-{stable_hash(key)}", agent_a=seat_label(a),
                    agent_b=seat_label(b),
                    llm_a=a if isinstance(a, BackendSpec) else None,
                    llm_b=b if isinstance(b, BackendSpec) else None,
                    seed=seed, start=start, stop=stop, rules=rules, llm_seed=config.llm_seed,
                    temperature=config.temperature, max_tokens=config.max_tokens, specs=specs,
                    run_id=run_id,
                ))
    return shards


def _rules_json(rules: Rules) -> dict:
    return {name: getattr(rules, name) for name in rules.__dataclass_fields__}


def round_robin(tiers: tuple[str, ...] = TIERS) -> tuple[tuple[str, str], ...]:
    """Every unordered pair of ``tiers`` (the later one in seat a: the higher tier when they are
    listed in order); play with both_seat_orders. Any agent names work (``module:Class`` too)."""
    return tuple((hi, lo) for lo, hi in itertools.combinations(tiers, 2))


def tournament_config(games_per_pairing: int, seed: int = 0, scout_accuracy: float = 0.7,
                      scouting: bool = True, tiers: tuple[str, ...] = TIERS,
                      **kwargs: Any) -> FogRunConfig:
    """A round robin of ``tiers`` (tier names or user classes ``module:Class``): every pair,
    both seat orders, ``games_per_pairing`` games per pair in total (half in each seat order,
    rounded up)."""
    if games_per_pairing < 1:
        raise ValueError("games_per_pairing must be at least 1")
    return FogRunConfig(pairings=round_robin(tiers), seeds=(seed,),
                        num_games=math.ceil(games_per_pairing / 2), scout_accuracy=scout_accuracy,
                        scouting=scouting, both_seat_orders=True, **kwargs)


def plan_fog(config: FogRunConfig, run_id: str) -> RunPlan:
    """The :class:`~distbench.games.base.RunPlan` of a fog configuration."""
    from distbench.games.fog.estimate import shard_calls, shard_estimate
    from distbench.games.fog.summary import fog_summary

    return config_plan(
        config, "fog", plan_fog_shards(config, run_id), recorded=config.to_dict(),
        summarize=fog_summary,
        unit="games",
        shard_estimate=shard_estimate,
        shard_calls=shard_calls,
    )


def sweep_configs(spec: Any, entry: Any) -> list[FogRunConfig]:
    """The fog configuration of one model entry of a sweep spec (none for the dummy, which
    cannot play, or without a ``[fog]`` section)."""
    fog = spec.section("fog")
    if not fog or entry.spec.provider == "dummy":
        return []
    return [FogRunConfig(
        pairings=tuple((entry.spec, o) for o in fog["opponents"]), seeds=spec.seeds,
        num_games=fog["games"], scout_accuracy=fog["scout_accuracy"],
        scouting=fog["scouting"], llm_seed=spec.llm_seed, temperature=spec.temperature,
        max_tokens=fog.get("max_tokens", 512), max_turns=fog.get("max_turns", 20),
    )]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """Games of a sweep's fog shards."""
    return {"fog_games": sum(s.num_units for s in shards)}


FAMILY = register(declare(
    __package__,
    Identity(name="fog",
             description="fog-of-war skirmish with hidden powers: beliefs (Brier, log loss, "
                         "calibration), theory of mind, wins",
             tables=TABLES, main_table="fog_games", unit="games"),
    play={"commands": "distbench.games.fog.commands:commands",
          "example": ("--agent", "tier3", "--opponent", "tier1", "--num-games", "2")},
    sweeps=True, rescoring=True, comparing=True,
    tournaments={"seats": ("a", "b"), "report": "distbench.games.fog.tournament:report",
                 "options": {"scout_accuracy": "probability a scout report is exact (default 0.7)",
                             "scouting": "true|false (default true)"},
                 "anchors": ("tier1", "tier2", "tier3", "tier4")},
))
