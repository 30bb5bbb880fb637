"""The repeated family (GAMES.md section 5): configuration, plan, sweep hooks, registration.

A match repeats a stage game (a 2x2 class game, :mod:`distbench.games.answers.classes`, drawn
per match) against one opponent: a classic strategy by its ``axelrod`` name (played by its
finite-state machine, :mod:`.strategies`) or the model itself. The horizon is known (``rounds``)
or not (after each round the match goes on with probability ``continuation``; the number of
rounds is drawn per match, at most ``max_rounds``). A shard is a chunk of matches of one
(opponent, seed); all its matches advance together, one batch of model calls per round.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from distbench.games.answers.classes import CLASSES
from distbench.games.base import (
    GameChunk,
    RunPlan,
    check_config,
    check_plan_size,
    chunk_id,
    config_plan,
    derive_seed,
    game_chunks,
    seat_identity,
)
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
from distbench.games.repeated.schema import FAMILY_TABLES
from distbench.games.repeated.strategies import NAMES, STRATEGIES, get_machine
from distbench.games.section import Section
from distbench.llm.base import BackendSpec

NAME = "repeated"
MAX_ROUNDS = 200
ROUNDS_LIMIT = 10_000
"""Most rounds a match may have (``rounds`` and ``max_rounds``): a match is played, held and
written whole, one model call per seat and round."""


def check_horizon(rounds: int | None, continuation: float | None, max_rounds: int) -> None:
    """Refuses, in one line, a horizon that is not exactly one of a known number of rounds
    (1 to ``max_rounds``) and a continuation probability in (0, 1), or a ``max_rounds``
    beyond :data:`ROUNDS_LIMIT` (ValueError)."""
    if not 1 <= max_rounds <= ROUNDS_LIMIT:
        raise ValueError(f"max_rounds must be from 1 to {ROUNDS_LIMIT:,}, got {max_rounds:,}")
    if (rounds is None) == (continuation is None):
        raise ValueError("give either rounds (a known horizon) or a continuation "
                         "probability, not both")
    if rounds is not None and not 1 <= rounds <= max_rounds:
        raise ValueError(f"rounds must be from 1 to {max_rounds}, got {rounds:,}")
    if continuation is not None and not 0 < continuation < 1:
        raise ValueError(f"continuation must be in (0, 1), got {continuation}")


def check_stage(stage: str) -> None:
    """Refuses, in one line, a stage game that is not one of the classes (ValueError)."""
    if stage not in CLASSES:
        from distbench.errors import did_you_mean

        raise ValueError(f"unknown stage game {stage!r}; use one of "
                         f"{', '.join(CLASSES)}.{did_you_mean(stage, list(CLASSES))}")


def check_matches(config: Any, strategies: Any) -> int:
    """Checks what a run and a tournament pairing of repeated matches share: the fields'
    types, the stage game, each named strategy and the horizon (ValueError, one line); the
    chunks of ``shard_games`` matches per seed."""
    check_config(config)
    check_stage(config.stage)
    for name in strategies:
        get_machine(name)
    check_horizon(config.rounds, config.continuation, config.max_rounds)
    return -(-config.num_games // config.shard_games)


@dataclass(frozen=True)
class RepeatedRunConfig:
    """What a repeated run plays.

    Attributes:
        llm: The model.
        stage: The stage game's class.
        opponents: axelrod strategy names (:data:`.strategies.NAMES`) or our variants (``GTFTPayoff``), ``self``, or other
            models (the column seat, asked as the model is).
        seeds: Match-stream seeds.
        num_games: Matches per (opponent, seed).
        rounds: Known horizon T; None: ``continuation`` decides.
        continuation: Probability that the match goes on after a round (0 < p < 1); None:
            the horizon ``rounds`` is known.
        max_rounds: Cap on the drawn number of rounds with a continuation probability.
        predict: Also ask for the probability that the opponent cooperates this round.
        llm_seed: Seed of the model's sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: 256 in chat style, 16 in completion style).
        shard_games: Matches per shard.
    """

    llm: BackendSpec
    stage: str = "prisoners_dilemma"
    opponents: tuple[str | BackendSpec, ...] = ("TitForTat",)
    seeds: tuple[int, ...] = (42,)
    num_games: int = 10
    rounds: int | None = 10
    continuation: float | None = None
    max_rounds: int = MAX_ROUNDS
    predict: bool = False
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_games: int = 50

    def __post_init__(self) -> None:
        if not self.opponents:
            raise ValueError("at least one opponent is needed")
        chunks = check_matches(self, [o for o in self.opponents
                                      if isinstance(o, str) and o != "self"])
        check_plan_size(len(self.opponents) * len(self.seeds) * chunks,
                        f"{len(self.opponents)} opponent(s) x {len(self.seeds)} seed(s) x "
                        f"{chunks} chunk(s)")

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared on resume)."""
        out = json.loads(json.dumps(asdict(self), default=str))
        out["llm"] = self.llm.identity()
        out["opponents"] = [o.identity() if isinstance(o, BackendSpec) else o
                            for o in self.opponents]
        return json.loads(json.dumps(out, default=str))

    def plan(self, run_id: str) -> RunPlan:
        return plan_repeated(self, run_id)


@dataclass(frozen=True)
class RepeatedShard(GameChunk):
    """Matches ``start..stop-1`` of one (opponent, seed)."""

    opponent: str | BackendSpec
    config: RepeatedRunConfig
    family: str = NAME

    @property
    def llm(self) -> BackendSpec:
        return self.config.llm

    @property
    def specs(self) -> tuple[BackendSpec, ...]:
        """The models the shard calls: the model, and a model opponent."""
        if isinstance(self.opponent, BackendSpec) and self.opponent != self.llm:
            return (self.llm, self.opponent)
        return (self.llm,)

    @property
    def opponent_name(self) -> str:
        """The opponent as the tables name it: a strategy, ``self`` or ``provider:model``."""
        o = self.opponent
        return o if isinstance(o, str) else f"{o.provider}:{o.model}"

def planned_rounds(config: Any, seed: int, match: int) -> int:
    """The rounds match ``match`` of ``seed`` is played for: the known horizon, or its draw
    from the continuation probability (at most ``max_rounds``); a forfeit ends it sooner."""
    if config.rounds is not None:
        return config.rounds
    rng = np.random.default_rng(derive_seed("repeated-rounds", config.stage, seed, match))
    return int(min(rng.geometric(1.0 - config.continuation), config.max_rounds))


def shard_calls(shard: RepeatedShard) -> int:
    """The model answers the shard asks for at most: one per planned round of each match for
    the model's seat, and for the other seat when a model plays it (self-play, a model
    opponent); free in-process models (the dummy) are not counted (for the progress line's
    ETA)."""
    from distbench.llm.registry import backend_class

    other = shard.llm if shard.opponent == "self" else (
        shard.opponent if isinstance(shard.opponent, BackendSpec) else None)
    seats = sum(not backend_class(m.provider).in_process
                for m in (shard.llm, other) if m is not None)
    if not seats:
        return 0
    return seats * sum(planned_rounds(shard.config, shard.seed, i)
                       for i in range(shard.start, shard.stop))


def plan_shards(config: RepeatedRunConfig, run_id: str = "") -> list[RepeatedShard]:
    """The shards in a stable order (opponent, seed, chunk)."""
    identity = config.identity()
    del identity["shard_games"], identity["opponents"], identity["seeds"]
    return [RepeatedShard(chunk_id("rp", NAME, identity, opponent=seat_identity(opponent),
                                   seed=seed, start=start, stop=stop),
                          run_id, seed, start, stop, opponent, config)
            for opponent in config.opponents for seed in config.seeds
            for start, stop in game_chunks(config.num_games, config.shard_games)]


def plan_repeated(config: RepeatedRunConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a configuration."""
    from distbench.games.repeated.summary import summarize

    return config_plan(
        config, NAME, plan_shards(config, run_id), summarize=summarize, unit="matches", summary_tables=("repeated_matches",),
        shard_calls=shard_calls)


# -- distbench sweep: the [repeated] table --------------------------------------------------

SECTION_KEYS = {"stage", "opponents", "games", "rounds", "continuation", "predict",
                "max_tokens"}


def section(table: Any) -> dict[str, Any]:
    """``[repeated]``: ``stage``, ``opponents`` (axelrod names or ``self``), ``games`` per
    opponent and seed, ``rounds`` or ``continuation``, ``predict``, ``max_tokens``."""
    from distbench.games.section import SectionError

    s = Section(table, SECTION_KEYS)
    stage = s.table.get("stage", "prisoners_dilemma")
    if stage not in CLASSES:
        raise SectionError("stage", f"unknown {stage!r}; use {', '.join(CLASSES)}")
    out = {"stage": stage, "opponents": s.names("opponents", ["TitForTat"], (*STRATEGIES, "self")),
           "games": s.int("games", 10), "predict": s.bool("predict", False),
           "max_tokens": s.int("max_tokens", 256)}
    if "continuation" in s.table:
        if "rounds" in s.table:
            raise SectionError("rounds", "give rounds or continuation, not both")
        out["continuation"] = s.number("continuation", 0.9, 0.0, 0.999)
        out["rounds"] = None
    else:
        out["rounds"] = s.int("rounds", 10)
        out["continuation"] = None
    return out


def sweep_configs(spec: Any, entry: Any) -> list[RepeatedRunConfig]:
    """What one model of a sweep plays: nothing without a ``[repeated]`` table."""
    table = spec.section(NAME)
    if not table:
        return []
    return [RepeatedRunConfig(
        llm=entry.spec, stage=table["stage"], opponents=tuple(table["opponents"]),
        seeds=tuple(spec.seeds), num_games=table["games"], rounds=table["rounds"],
        continuation=table["continuation"], predict=table["predict"],
        llm_seed=spec.llm_seed, temperature=spec.temperature, max_tokens=table["max_tokens"])]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """``distbench sweep plan``'s figures: matches."""
    matches = sum(s.num_units for s in shards)
    return {"repeated_matches": matches} if matches else {}


FAMILY = register(Family(
    identity=Identity(
        name=NAME,
        description="repeated 2x2 games against axelrod's classic strategies: regret against "
                    "the exact optimum, cooperation, retaliation, forgiveness, predictions",
        tables=FAMILY_TABLES, main_table="repeated_matches", unit="matches", modes=("pure",)),
    play=Play(
        runner="distbench.games.repeated.runner:run_shard",
        summarize="distbench.games.repeated.summary:summarize",
        command="distbench.games.repeated.command:command",
        options="distbench.games.repeated.command:OPTIONS"),
    presentation=Presentation(
        catalog="distbench.games.repeated.command:catalog",
        report="distbench.games.repeated.report:section",
        viewer="distbench.games.repeated.viewer:view",
        replay="distbench.games.repeated.replay:replay"),
    sweeps=Sweeps(
        configs="distbench.games.repeated.plan:sweep_configs",
        describer="distbench.games.repeated.plan:describe_shards",
        section="distbench.games.repeated.plan:section"),
    tournaments=Tournaments(
        seats=("row", "col"),
        player="distbench.games.repeated.tournament:player",
        pairing="distbench.games.repeated.tournament:pairing",
        outcomes="distbench.games.repeated.tournament:outcomes",
        options={"stage": "the stage game (default prisoners_dilemma)",
                 "rounds": "known number of rounds (default 10)",
                 "continuation": "probability of another round (instead of rounds)",
                 "max_rounds": "cap on rounds with a continuation probability"},
        anchors=NAMES),
    comparing=Comparing("distbench.games.repeated.compare:UNITS"),
    rescoring=Rescoring("distbench.games.repeated.rescore:rescore"),
))
