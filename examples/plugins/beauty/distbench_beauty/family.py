"""The p-beauty contest as a distbench game family: configuration, plan, flags, spec section.

The model and N-1 scripted opponents each pick an integer from 0 to 100; the target is p
times the mean of all picks (p = 2/3 by default), and the pick closest to it wins. A scripted
opponent reasons at level k (drawn per game): level 0 picks uniformly at random, level k
picks round(50 p^k). The model's score is its distance to the target and its regret against
the best response to the opponents' picks; answers that are not a pick are rows with a
``parse_status``, as in every family.

The family registers itself at the bottom of this module (:data:`FAMILY`); the entry point
``distbench.families`` (``pyproject.toml``) names it, so distbench finds it in every process.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import click

from distbench.games.base import CommandRun, RunPlan, check_config, stable_hash
from distbench.games.family import (
    Comparing,
    Family,
    Identity,
    Play,
    Presentation,
    Rescoring,
    Sweeps,
)
from distbench.games.registry import register
from distbench.games.section import Section
from distbench.llm.base import BackendSpec
from distbench_beauty.schema import TABLES

NAME = "beauty"


@dataclass(frozen=True)
class BeautyRunConfig:
    """One model playing ``num_games`` games per seed.

    Attributes:
        llm: The model.
        seeds: Game seeds.
        num_games: Games per seed.
        num_players: Players per game, the model included (2 or more).
        fraction: p, in (0, 1].
        llm_seed: Seed of the model's sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget.
        shard_games: Games per shard.
    """

    llm: BackendSpec
    seeds: tuple[int, ...] = (42,)
    num_games: int = 20
    num_players: int = 5
    fraction: float = 2 / 3
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 32
    shard_games: int = 1000

    def __post_init__(self) -> None:
        check_config(self)  # seeds, num_games, max_tokens, temperature: distbench's checks
        if self.num_players < 2:
            raise ValueError(f"num_players must be at least 2, got {self.num_players}")
        if not 0 < self.fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {self.fraction}")

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared when a run is resumed)."""
        out = json.loads(json.dumps(asdict(self), default=str))
        out["llm"] = self.llm.identity()
        del out["shard_games"]
        return out

    def plan(self, run_id: str) -> RunPlan:
        return plan_beauty(self, run_id)


@dataclass(frozen=True)
class BeautyShard:
    """Games ``start..stop`` of one seed (what a Ray task plays)."""

    shard_id: str
    run_id: str
    llm: BackendSpec
    seed: int
    start: int
    stop: int
    num_players: int
    fraction: float
    llm_seed: int
    temperature: float
    max_tokens: int
    family: str = NAME

    @property
    def num_units(self) -> int:
        """Progress units: games."""
        return self.stop - self.start


def plan_beauty(config: BeautyRunConfig, run_id: str) -> RunPlan:
    """The run plan: shards of at most ``shard_games`` games, with ids that hash what decides
    their rows (so a resumed run skips the committed ones)."""
    from distbench_beauty.summary import summarize

    shards = []
    for seed in config.seeds:
        for start in range(0, config.num_games, config.shard_games):
            stop = min(config.num_games, start + config.shard_games)
            key = {"family": NAME, "llm": config.llm.identity(), "seed": seed, "start": start,
                   "stop": stop, "num_players": config.num_players,
                   "fraction": config.fraction, "llm_seed": config.llm_seed,
                   "temperature": config.temperature, "max_tokens": config.max_tokens}
            shards.append(BeautyShard(
                shard_id=f"b-{stable_hash(key)}", run_id=run_id, llm=config.llm, seed=seed,
                start=start, stop=stop, num_players=config.num_players,
                fraction=config.fraction, llm_seed=config.llm_seed,
                temperature=config.temperature, max_tokens=config.max_tokens))
    return RunPlan(
        family=NAME, config=config.identity(), identity=config.identity(), shards=shards,
        seeds={"game_seeds": list(config.seeds), "llm_seed": config.llm_seed},
        summarize=summarize, unit="games", summary_tables=("beauty_games",))


# -- distbench run --family beauty ----------------------------------------------------------

OPTIONS = [
    click.Option(["--num-players"], type=click.IntRange(min=2), default=5, show_default=True,
                 help="Players per game, the model included."),
    click.Option(["--fraction"], type=click.FloatRange(0, 1, min_open=True), default=2 / 3,
                 show_default="2/3", help="p: the target is p times the mean guess."),
]
"""The family's own flags of ``distbench run`` (listed under "beauty options" in --help)."""


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """``distbench run --family beauty``: the shared options (``num_games``, ``seeds``,
    ``llm_seed``, ``temperature``, ``max_tokens``) and the family's own."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players play negotiation only")
    config = BeautyRunConfig(
        llm=spec, seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        num_players=options["num_players"], fraction=options["fraction"],
        llm_seed=options["llm_seed"], temperature=options["temperature"],
        max_tokens=options["max_tokens"] or 32)
    label = (f"beauty | {spec.provider}:{spec.model} | {config.num_players} players, "
             f"p={config.fraction:.3g} | {config.num_games} games per seed")
    return CommandRun(plan=config.plan, label=label, folder=NAME)


# -- distbench sweep: the [beauty] table ----------------------------------------------------

def section(table: Any) -> dict[str, Any]:
    """``[beauty]``: ``games`` per seed, ``num_players``, ``fraction``, ``max_tokens``."""
    s = Section(table, {"games", "num_players", "fraction", "max_tokens"})
    return {"games": s.int("games", 20), "num_players": s.int("num_players", 5, low=2),
            "fraction": s.number("fraction", 2 / 3, 0, 1), "max_tokens": s.int("max_tokens", 32)}


def sweep_configs(spec: Any, entry: Any) -> list[BeautyRunConfig]:
    """What one model of a sweep plays: nothing without a ``[beauty]`` table."""
    table = spec.section(NAME)
    if not table:
        return []
    return [BeautyRunConfig(
        llm=entry.spec, seeds=spec.seeds, num_games=table["games"],
        num_players=table["num_players"], fraction=table["fraction"],
        llm_seed=spec.llm_seed, temperature=spec.temperature, max_tokens=table["max_tokens"])]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """``distbench sweep plan``'s figures: games, and one call per game."""
    games = sum(s.num_units for s in shards)
    return {"beauty_games": games, "beauty_calls": games} if games else {}


def level_guess(level: int, fraction: float) -> int:
    """The pick of a level-k opponent (k >= 1): round(50 p^k)."""
    return int(math.floor(50 * fraction ** level + 0.5))


FAMILY = register(Family(
    identity=Identity(
        name=NAME,
        description="p-beauty contest: guess p times the average (a distbench plugin example)",
        tables=TABLES, main_table="beauty_games", unit="games"),
    play=Play(
        runner="distbench_beauty.runner:run_shard",
        summarize="distbench_beauty.summary:summarize",
        command="distbench_beauty.family:command",
        options="distbench_beauty.family:OPTIONS"),
    presentation=Presentation(report="distbench_beauty.report:section"),
    sweeps=Sweeps(
        configs="distbench_beauty.family:sweep_configs",
        describer="distbench_beauty.family:describe_shards",
        section="distbench_beauty.family:section"),
    rescoring=Rescoring("distbench_beauty.runner:rescore"),
    comparing=Comparing("distbench_beauty.compare:UNITS"),
))
