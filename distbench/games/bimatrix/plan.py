"""The bimatrix family (GAMES.md section 4): configuration, plan, sweep hooks, registration.

A run plays games of one or more instance sets (:mod:`.instances`) with the model in the row
seat, the column seat or both, in pure, mixed or logprob mode, against scripted opponents
(each equilibrium of the game, uniform random, the class rule), another model or itself. A
shard is a chunk of games of one (set, seed); it asks the model every (seat, mode, trial) of
its games once and scores each answer against every opponent.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from distbench.games.base import (
    GameChunk,
    RunPlan,
    check_config,
    check_plan_size,
    chunk_id,
    config_plan,
    game_chunks,
)
from distbench.games.bimatrix.instances import get_set
from distbench.games.bimatrix.schema import FAMILY_TABLES
from distbench.games.family import (
    Comparing,
    Family,
    Identity,
    Play,
    Presentation,
    Rescoring,
    Sweeps,
    Tournaments,
)
from distbench.games.registry import register
from distbench.games.section import Section
from distbench.llm.base import BackendSpec

NAME = "bimatrix"
MODES: tuple[str, ...] = ("pure", "mixed", "logprob")
SEATS: tuple[str, ...] = ("row", "col")
SCRIPTED: tuple[str, ...] = ("eq", "uniform", "class")
"""Scripted opponents: ``eq`` (every equilibrium of the game, each a row of its own),
``uniform``, ``class`` (the class rule; class games only)."""
DEFAULT_OPPONENTS = ("eq", "uniform")
DEFAULT_SHARD_GAMES = 200


@dataclass(frozen=True)
class BimatrixRunConfig:
    """What a bimatrix run plays.

    Attributes:
        sets: Instance set ids (buckets, ``type:rgNNN``, ``class:NAME``).
        llm: The model.
        seeds: Game-stream seeds.
        num_games: Games per (set, seed).
        num_trials: Answers per (game, seat, mode) (logprob mode: one reading).
        modes: Subset of :data:`MODES`.
        seats: Subset of :data:`SEATS`.
        opponents: Scripted names (:data:`SCRIPTED`), ``self``, or other models.
        llm_seed: Seed of the models' sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: by mode and style).
        shard_games: Games per shard.
        logprob_cue: Logprob mode's completion cue.
        min_label_mass: Logprob mode's minimum probability on the labels.
    """

    sets: tuple[str, ...]
    llm: BackendSpec
    seeds: tuple[int, ...] = (42,)
    num_games: int = 20
    num_trials: int = 10
    modes: tuple[str, ...] = ("pure",)
    seats: tuple[str, ...] = SEATS
    opponents: tuple[str | BackendSpec, ...] = DEFAULT_OPPONENTS
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_games: int = DEFAULT_SHARD_GAMES
    logprob_cue: str = "I choose Action"
    min_label_mass: float = 0.5

    def __post_init__(self) -> None:
        check_config(self)
        if not self.sets:
            raise ValueError("at least one game set is needed (--bucket, --class or --types)")
        for s in self.sets:
            get_set(s)
        bad = [m for m in self.modes if m not in MODES]
        if not self.modes or bad:
            raise ValueError(f"bimatrix modes are {', '.join(MODES)}, got {list(self.modes)}")
        bad = [s for s in self.seats if s not in SEATS]
        if not self.seats or bad:
            raise ValueError(f"seats are row, col (or both), got {list(self.seats)}")
        if not self.opponents:
            raise ValueError("at least one opponent is needed")
        for o in self.opponents:
            if isinstance(o, str) and o not in (*SCRIPTED, "self"):
                raise ValueError(f"unknown bimatrix opponent {o!r}: use eq, uniform, class, self "
                                 "or a model PROVIDER[:MODEL]")
        if "class" in self.opponents:
            plain = [s for s in self.sets if get_set(s).kind != "class"]
            if plain:
                raise ValueError(f"the class rule opponent needs class games (--class); "
                                 f"{plain[0]} has no class")
        chunks = -(-self.num_games // self.shard_games)
        check_plan_size(len(self.sets) * len(self.seeds) * chunks,
                        f"{len(self.sets)} set(s) x {len(self.seeds)} seed(s) x {chunks} chunk(s)")

    def specs(self) -> tuple[BackendSpec, ...]:
        """The models a shard calls: the model, then each model opponent."""
        out = [self.llm]
        out += [o for o in self.opponents if isinstance(o, BackendSpec) and o not in out]
        return tuple(out)

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared on resume)."""
        out = json.loads(json.dumps(asdict(self), default=str))
        out["llm"] = self.llm.identity()
        out["opponents"] = [o.identity() if isinstance(o, BackendSpec) else o
                            for o in self.opponents]
        out["opponents"] = json.loads(json.dumps(out["opponents"], default=str))
        if "logprob" not in self.modes:
            del out["logprob_cue"], out["min_label_mass"]
        return out

    def plan(self, run_id: str) -> RunPlan:
        return plan_bimatrix(self, run_id)


@dataclass(frozen=True)
class BimatrixShard(GameChunk):
    """Games ``start..stop-1`` of one (set, seed), every seat, mode and opponent."""

    game_set: str
    config: BimatrixRunConfig
    family: str = NAME

    @property
    def llm(self) -> BackendSpec:
        return self.config.llm

    @property
    def num_units(self) -> int:
        """Progress units: the model's answers (trials) of this shard."""
        c = self.config
        per_game = sum(1 if m == "logprob" else c.num_trials for m in c.modes) * len(c.seats)
        return (self.stop - self.start) * per_game


def plan_shards(config: BimatrixRunConfig, run_id: str = "") -> list[BimatrixShard]:
    """The shards, in a stable order (set, seed, chunk), ids hashing what decides their rows."""
    identity = config.identity()
    del identity["shard_games"], identity["sets"], identity["seeds"]
    return [BimatrixShard(chunk_id("bm", NAME, identity, set=game_set, seed=seed, start=start,
                                   stop=stop), run_id, seed, start, stop, game_set, config)
            for game_set in config.sets for seed in config.seeds
            for start, stop in game_chunks(config.num_games, config.shard_games)]


def plan_bimatrix(config: BimatrixRunConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a configuration."""
    from distbench.games.bimatrix.estimate import plan_fields  # single-turn: batchable
    from distbench.games.bimatrix.summary import summarize

    shards = plan_shards(config, run_id)
    from distbench.llm.registry import backend_class

    free = all(backend_class(s.provider).in_process for s in config.specs())
    calls = sum(s.num_units for s in shards) * (1 + sum(isinstance(o, BackendSpec)
                                                        for o in config.opponents))
    return config_plan(
        config, NAME, shards, summarize=summarize, unit="trials", summary_tables=("bimatrix_trials",),
        extra_styles=("completion",) if "logprob" in config.modes else (),
        expected_calls=None if free else calls, **plan_fields(shards))


# -- distbench sweep: the [bimatrix] table --------------------------------------------------

SECTION_KEYS = {"sets", "classes", "types", "games", "trials", "modes", "seats", "opponents",
                "max_tokens"}


def section(table: Any) -> dict[str, Any]:
    """``[bimatrix]``: ``sets`` (bucket ids), ``classes``, ``types`` (``"all"`` or a list of
    indices), ``games`` per set and seed, ``trials``, ``modes``, ``seats``, ``opponents``
    (scripted names or ``self``), ``max_tokens``."""
    from distbench.games.bimatrix.instances import CLASSES, type_sets
    from distbench.games.section import SectionError

    s = Section(table, SECTION_KEYS)
    sets = list(s.table.get("sets", []))
    classes = s.names("classes", ["prisoners_dilemma"], CLASSES) if "classes" in s.table else []
    types = s.table.get("types")
    try:
        for x in sets:
            get_set(x)
        if types is not None:
            spec = types if isinstance(types, str) else ",".join(str(t) for t in types)
            sets += type_sets(spec)
    except ValueError as exc:
        raise SectionError("sets" if types is None else "types", str(exc)) from None
    sets += [f"class:{c}" for c in classes]
    if not sets:
        raise SectionError(None, "needs at least one of sets, classes, types")
    out = {"sets": sets, "games": s.int("games", 20), "trials": s.int("trials", 10),
           "modes": s.names("modes", ["pure"], MODES),
           "seats": s.names("seats", list(SEATS), SEATS),
           "opponents": s.names("opponents", list(DEFAULT_OPPONENTS), (*SCRIPTED, "self")),
           "max_tokens": s.int("max_tokens", 256)}
    if "class" in out["opponents"] and any(not x.startswith("class:") for x in sets):
        raise SectionError("opponents", "the class rule opponent needs class games only")
    return out


def sweep_configs(spec: Any, entry: Any) -> list[BimatrixRunConfig]:
    """What one model of a sweep plays: nothing without a ``[bimatrix]`` table."""
    table = spec.section(NAME)
    if not table:
        return []
    return [BimatrixRunConfig(
        sets=tuple(table["sets"]), llm=entry.spec, seeds=tuple(spec.seeds),
        num_games=table["games"], num_trials=table["trials"], modes=tuple(table["modes"]),
        seats=tuple(table["seats"]), opponents=tuple(table["opponents"]),
        llm_seed=spec.llm_seed, temperature=spec.temperature, max_tokens=table["max_tokens"])]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """``distbench sweep plan``'s figures: games and the model's answers."""
    games = sum(s.stop - s.start for s in shards)
    return {"bimatrix_games": games, "bimatrix_answers": sum(s.num_units for s in shards)} \
        if games else {}


FAMILY = register(Family(
    identity=Identity(
        name=NAME,
        description="general-sum bimatrix games: regret, equilibrium play, cooperation, "
                    "coordination",
        tables=FAMILY_TABLES, main_table="bimatrix_trials", unit="trials", modes=MODES),
    play=Play(
        runner="distbench.games.bimatrix.runner:run_shard",
        summarize="distbench.games.bimatrix.summary:summarize",
        command="distbench.games.bimatrix.command:command",
        options="distbench.games.bimatrix.command:OPTIONS",
        warm_up="distbench.games.bimatrix.runner:warm_up",
        batch=True),
    presentation=Presentation(
        catalog="distbench.games.bimatrix.command:catalog",
        report="distbench.games.bimatrix.report:section",
        viewer="distbench.games.bimatrix.viewer:view",
        replay="distbench.games.bimatrix.replay:replay"),
    sweeps=Sweeps(
        configs="distbench.games.bimatrix.plan:sweep_configs",
        describer="distbench.games.bimatrix.plan:describe_shards",
        section="distbench.games.bimatrix.plan:section"),
    tournaments=Tournaments(
        seats=SEATS,
        player="distbench.games.bimatrix.tournament:player",
        pairing="distbench.games.bimatrix.tournament:pairing",
        outcomes="distbench.games.bimatrix.tournament:outcomes",
        options={"sets": "a game set or a JSON list of them (default: every named class)",
                 "mode": "pure|mixed (default pure)"},
        anchors=("eq", "uniform", "maxmin", "class")),
    comparing=Comparing("distbench.games.bimatrix.compare:UNITS"),
    rescoring=Rescoring("distbench.games.bimatrix.rescore:rescore"),
))
