"""Planning of negotiation runs: configuration, shards with stable ids, the :class:`RunPlan`.

A shard is a range of instances of one seed, played in every configured mode, language and
seat order by the configured pairing. Its id hashes everything that decides its rows.
Every pairing is played in both seat orders when ``both_seat_orders`` (also a model against
itself: the two orders then differ only by their sampling seeds).

With ``instances`` (clembench's instance files, :mod:`.clembench`) the shards hold the file's
instances themselves, each played in its own mode and language; ``seeds``, ``num_games``,
``modes`` and ``langs`` are then not used for planning.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from distbench.games.base import (
    RunPlan,
    check_config,
    check_plan_size,
    config_plan,
    derive_seed,
    seed_key,
    stable_hash,
)
from distbench.games.family import Identity, declare
from distbench.games.negotiation.clembench import FileInstance, load_instances, select
from distbench.games.negotiation.items import LANGS
from distbench.games.negotiation.parse import KEYWORDS
from distbench.games.negotiation.players import SCRIPTED
from distbench.games.negotiation.prompts import MODES
from distbench.games.negotiation.schema import TABLES
from distbench.games.registry import register
from distbench.llm.base import BackendSpec

NAME = "negotiation"
Player = BackendSpec | str


def player_identity(player: Player) -> Any:
    """What decides a player's answers: the label of a scripted one, ``spec.identity()``."""
    return player if isinstance(player, str) else json.loads(json.dumps(player.identity()))


def _check_player(name: str, player: Player) -> None:
    if isinstance(player, str):
        if player not in SCRIPTED:
            raise ValueError(f"{name} must be a model or one of {', '.join(SCRIPTED)}, got {player!r}")
    elif isinstance(player, BackendSpec):
        if player.provider == "dummy":
            raise ValueError(f"{name}: the dummy provider cannot negotiate; use scripted:random")
    else:
        raise ValueError(f"{name} must be a BackendSpec or a scripted player name, got {player!r}")


@dataclass(frozen=True, slots=True)
class NegotiationRunConfig:
    """What a negotiation run plays.

    Attributes:
        seeds: Instance-stream seeds.
        num_games: Instances per seed.
        modes: Subset of ``semi``, ``coop``, ``comp``; every instance is played in each.
        langs: Subset of ``en``, ``de``, ``it``; every instance is played in each.
        player_a: The first player: a model (``BackendSpec``) or ``scripted:<name>``.
        player_b: The other player; None means the same as ``player_a``.
        max_messages: Free messages per player.
        llm_seed: Seed of the models' sampling (and of ``scripted:random``).
        temperature: Sampling temperature.
        max_tokens: Completion budget per answer.
        both_seat_orders: Also play every episode with the players' seats swapped.
        shard_episodes: Target number of episodes per shard (shards hold whole instances).
        instances: Instances of clembench files to play instead of generated ones (each in
            its own mode and language); empty: the generator's.
    """

    seeds: tuple[int, ...]
    num_games: int
    modes: tuple[str, ...]
    langs: tuple[str, ...]
    player_a: Player
    player_b: Player | None = None
    max_messages: int = 5
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 256
    both_seat_orders: bool = True
    shard_episodes: int = 200
    instances: tuple[FileInstance, ...] = ()

    def __post_init__(self) -> None:
        if self.player_b is None:
            object.__setattr__(self, "player_b", self.player_a)
        for name in ("seeds", "modes", "langs", "instances"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        check_config(self)
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, got {list(self.seeds)}")
        langs = tuple(KEYWORDS) if self.instances else LANGS  # files may bring other prompts
        for name, allowed in (("modes", MODES), ("langs", langs)):
            values = getattr(self, name)
            if not values or any(v not in allowed for v in values) or len(set(values)) != len(values):
                raise ValueError(f"{name} must be distinct values among {', '.join(allowed)}, got {list(values)}")
        _check_player("player_a", self.player_a)
        _check_player("player_b", self.player_b)
        if any(not isinstance(fi, FileInstance) for fi in self.instances):
            raise ValueError("instances must be FileInstance values (clembench.load_instances)")
        if not self.instances:
            per_instance = len(self.modes) * len(self.langs) * len(self.seat_orders())
            size = max(1, self.shard_episodes // per_instance)
            chunks = math.ceil(self.num_games / size)
            check_plan_size(len(self.seeds) * chunks, f"{len(self.seeds)} seed(s) x {chunks:,} "
                            f"shard(s) of {size:,} instances")

    def to_dict(self) -> dict[str, Any]:
        """JSON-shaped (lists, not tuples), so it compares equal to a manifest's copy;
        ``instances`` only when there are some."""
        out = json.loads(json.dumps(asdict(self)))
        if not self.instances:
            del out["instances"]
        return out

    def plan(self, run_id: str) -> RunPlan:
        """The :class:`RunPlan` of this configuration."""
        return plan_negotiation(self, run_id)

    def identity(self) -> dict[str, Any]:
        """:meth:`to_dict` with the models' identities (no execution-only options)."""
        out = self.to_dict()
        out["player_a"] = player_identity(self.player_a)
        out["player_b"] = player_identity(self.player_b)
        return out

    def seat_orders(self) -> tuple[int, ...]:
        return (0, 1) if self.both_seat_orders else (0,)

    def specs(self) -> tuple[BackendSpec, ...]:
        """The models called, once each."""
        out: dict[BackendSpec, None] = {}
        for p in (self.player_a, self.player_b):
            if isinstance(p, BackendSpec):
                out.setdefault(p, None)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class NegotiationShard:
    """A range of instances of one seed, in every mode, language and seat order.

    Attributes:
        shard_id: Stable id (hash of every field that decides the rows).
        seed: Instance-stream seed.
        start: First instance index.
        stop: One past the last.
        modes: Modes played.
        langs: Languages played.
        player_a: Configured first player (seat a in seat order 0).
        player_b: Configured second player.
        seat_orders: ``(0,)`` or ``(0, 1)``.
        max_messages: Free messages per player.
        llm_seed: Sampling seed.
        temperature: Sampling temperature.
        max_tokens: Completion budget.
        specs: The models it calls (empty for scripted-only shards).
        family: ``"negotiation"``.
        run_id: The run the rows belong to.
        instances: Instances of clembench files (then ``seed`` is -1 and ``start`` /
            ``stop`` index the run's list of them); empty: generated instances.
    """

    shard_id: str
    seed: int
    start: int
    stop: int
    modes: tuple[str, ...]
    langs: tuple[str, ...]
    player_a: Player
    player_b: Player
    seat_orders: tuple[int, ...]
    max_messages: int
    llm_seed: int
    temperature: float
    max_tokens: int
    specs: tuple[BackendSpec, ...] = ()
    family: str = NAME
    run_id: str = field(default="", compare=False)
    instances: tuple[FileInstance, ...] = ()

    @property
    def num_units(self) -> int:
        """Episodes of this shard."""
        if self.instances:
            return len(self.instances) * len(self.seat_orders)
        return (self.stop - self.start) * len(self.modes) * len(self.langs) * len(self.seat_orders)

    def pairing_id(self) -> str:
        """Short stable id of the (player_a, player_b) pairing, part of episode ids."""
        return stable_hash([seed_key(self.player_a), seed_key(self.player_b)], 4)

    def seats(self, order: int) -> tuple[Player, Player]:
        """(seat a, seat b) in seat order ``order``."""
        return (self.player_a, self.player_b) if order == 0 else (self.player_b, self.player_a)


def turn_seed(llm_seed: int, episode_id: str, turn: int, seat: str) -> int:
    """The per-turn sampling seed: a 63-bit hash of llm_seed, episode, turn and seat."""
    return derive_seed(llm_seed, episode_id, turn, seat) >> 1


def plan_shards(config: NegotiationRunConfig, run_id: str = "") -> list[NegotiationShard]:
    """Expands ``config`` into shards, in a stable order (seed, instance range)."""
    if config.instances:
        return _file_shards(config, run_id)
    per_instance = len(config.modes) * len(config.langs) * len(config.seat_orders())
    size = max(1, config.shard_episodes // per_instance)
    shards = []
    for seed in config.seeds:
        for chunk in range(math.ceil(config.num_games / size)):
            start, stop = chunk * size, min(config.num_games, (chunk + 1) * size)
            key = {
                "family": NAME, "seed": seed, "start": start, "stop": stop,
                "modes": list(config.modes), "langs": list(config.langs),
                "player_a": player_identity(config.player_a),
                "player_b": player_identity(config.player_b),
                "seat_orders": list(config.seat_orders()), "max_messages": config.max_messages,
                "llm_seed": config.llm_seed, "temperature": config.temperature,
                "max_tokens": config.max_tokens,
            }
            shards.append(NegotiationShard(
                shard_id=f"n-{stable_hash(key)}", seed=seed, start=start, stop=stop,
                modes=config.modes, langs=config.langs, player_a=config.player_a,
                player_b=config.player_b, seat_orders=config.seat_orders(),
                max_messages=config.max_messages, llm_seed=config.llm_seed,
                temperature=config.temperature, max_tokens=config.max_tokens,
                specs=config.specs(), run_id=run_id,
            ))
    return shards


def _file_shards(config: NegotiationRunConfig, run_id: str) -> list[NegotiationShard]:
    """Shards of a run of clembench instances: consecutive runs of the list."""
    size = max(1, config.shard_episodes // len(config.seat_orders()))
    shards = []
    for start in range(0, len(config.instances), size):
        chunk = config.instances[start:start + size]
        modes = tuple(dict.fromkeys(fi.mode for fi in chunk))
        langs = tuple(dict.fromkeys(fi.lang for fi in chunk))
        key = {
            "family": NAME, "instances": json.loads(json.dumps([asdict(fi) for fi in chunk])),
            "player_a": player_identity(config.player_a),
            "player_b": player_identity(config.player_b),
            "seat_orders": list(config.seat_orders()), "llm_seed": config.llm_seed,
            "temperature": config.temperature, "max_tokens": config.max_tokens,
        }
        shards.append(NegotiationShard(
            shard_id=f"n-{stable_hash(key)}", seed=-1, start=start, stop=start + len(chunk),
            modes=modes, langs=langs, player_a=config.player_a, player_b=config.player_b,
            seat_orders=config.seat_orders(), max_messages=max(fi.max_messages for fi in chunk),
            llm_seed=config.llm_seed, temperature=config.temperature,
            max_tokens=config.max_tokens, specs=config.specs(), run_id=run_id, instances=chunk,
        ))
    return shards


def plan_negotiation(config: NegotiationRunConfig, run_id: str) -> RunPlan:
    """The :class:`distbench.games.base.RunPlan` of a negotiation configuration."""
    from distbench.games.negotiation.estimate import shard_calls, shard_estimate
    from distbench.games.negotiation.summary import negotiation_summary

    return config_plan(
        config, NAME, plan_shards(config, run_id), seeds_key="instance_seeds",
        recorded=config.to_dict(), summarize=negotiation_summary,
        unit="episodes",
        shard_estimate=shard_estimate,
        shard_calls=shard_calls,
    )


def file_config(path: str, modes: tuple[str, ...], langs: tuple[str, ...],
                **kw: Any) -> NegotiationRunConfig:
    """The configuration playing clembench's instance files at ``path`` (only experiments in
    ``modes`` and ``langs`` when given), each instance once, in clembench's seat order.

    Raises:
        ValueError: the files cannot be read, or nothing is left after the filter.
    """
    every = load_instances(path)
    chosen = select(every, modes, langs)
    if not chosen:
        have = sorted({f"{fi.mode}/{fi.lang}" for fi in every})
        raise ValueError(f"--instances {path}: no experiment in mode {'/'.join(modes) or 'any'} "
                         f"and language {'/'.join(langs) or 'any'} (the files have "
                         f"{', '.join(have)})")
    return NegotiationRunConfig(
        seeds=(0,), num_games=len(chosen), modes=tuple(dict.fromkeys(fi.mode for fi in chosen)),
        langs=tuple(dict.fromkeys(fi.lang for fi in chosen)), instances=chosen,
        both_seat_orders=False, **kw)


def sweep_configs(spec: Any, entry: Any) -> list[NegotiationRunConfig]:
    """The negotiation configurations of one model entry of a sweep spec (one per opponent;
    none for the dummy, which cannot negotiate, or without a ``[negotiation]`` section)."""
    neg = spec.section("negotiation")
    if not neg or entry.spec.provider == "dummy":
        return []
    if neg.get("instances"):
        return [file_config(
            neg["instances"], tuple(neg["modes"]), tuple(neg["langs"]),
            player_a=entry.spec, player_b=None if opponent == "self" else opponent,
            llm_seed=spec.llm_seed, temperature=spec.temperature,
            max_tokens=neg.get("max_tokens", 256),
        ) for opponent in neg["opponents"]]
    return [NegotiationRunConfig(
        seeds=spec.seeds, num_games=neg["games"], modes=tuple(neg["modes"]),
        langs=tuple(neg["langs"]), player_a=entry.spec,
        player_b=None if opponent == "self" else opponent,
        max_messages=neg["max_messages"], llm_seed=spec.llm_seed,
        temperature=spec.temperature, max_tokens=neg.get("max_tokens", 256),
    ) for opponent in neg["opponents"]]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """Episodes of a sweep's negotiation shards."""
    return {"episodes": sum(s.num_units for s in shards)}


FAMILY = register(declare(
    __package__,
    Identity(name=NAME,
             description="Deal or No Deal: multi-turn negotiation with private values, scored "
                         "against the Pareto frontier",
             tables=TABLES, main_table="episodes", unit="episodes", modes=MODES),
    play={"example": ("--llm-type", "scripted:fair", "--num-games", "2")},
    presentation={"export": "distbench.games.negotiation.export:export_json",
                  "formats": {"clembench": "distbench.games.negotiation.export:export_clembench"}},
    sweeps=True, rescoring=True, comparing=True,
    tournaments={"seats": ("a", "b"),
                 "options": {"mode": "semi|coop|comp (default semi)",
                             "lang": "en|de|it (default en)"},
                 "anchors": ("scripted:fair", "scripted:greedy", "scripted:random")},
))
