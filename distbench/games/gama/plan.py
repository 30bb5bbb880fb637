"""The ``gama`` family (GAMES.md §8): GAMA-Bench's eight games of n players, played.

A run plays one game (:data:`rules.GAME_NAMES`) ``num_games`` times per seed, at a table whose
seats (:mod:`.players`) are models of any provider and scripted players, ten copies of one
model by default (GAMA's leaderboard setting). A shard is a chunk of games of one (game,
seed); its games advance together, round by round, and every round asks all the seats of all
its live games at once: one batch per model (the models' batches concurrently), the Pirate
Game in two steps (the proposers, then the voters, who need the plan).

Invalid answers (the re-ask policy, ``reask``): an answer that does not parse or is out of
range is re-asked up to ``reask`` times (each counted, in ``gama_moves.reasks``); an answer
still invalid **forfeits the game**: that round is not resolved, the game ends with status
``forfeit``, its rounds so far are kept and scored (GAMA's score over the rounds resolved, NULL
when none), and the forfeiting seats finish last (``gama_players.rank``), ahead of nobody. A
call that failed at the server (after the client's retries) ends the game as ``failed``: no
seat's doing, left out of ratings. With ``reask = 0`` (the default) the first invalid answer
forfeits, as in every two-player family; GAMA's own protocol re-asks without limit and throws
the failed text away (a large ``reask`` approximates it, and its cost shows in the counts).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from distbench.games.base import (
    GameChunk,
    RunPlan,
    check_config,
    check_plan_size,
    chunk_id,
    game_chunks,
    seat_identity,
    seed_key,
    stable_hash,
)
from distbench.games.family import Identity, declare
from distbench.games.gama import rules
from distbench.games.gama.schema import TABLES
from distbench.games.registry import register
from distbench.llm.base import BackendSpec

NAME = "gama"
MAX_REASK = 20
DEFAULT_SHARD_GAMES = 10
VERSIONS = ("distbench", "v1", "v2", "v3", "v4", "v5")


@dataclass(frozen=True)
class GamaRunConfig:
    """What a ``gama`` run plays.

    Attributes:
        game: One of :data:`rules.GAME_NAMES`.
        seats: The player of each seat (a model, or a scripted player's name).
        options: The game's parameter overrides as (name, text) pairs (``--option``), e.g.
            ``(("ratio", "1/2"),)``; the parameters are ``rules.make_params(game, options)``.
        seeds: Game-stream seeds.
        num_games: Games per seed.
        reask: Re-asks of an invalid answer before it forfeits the game.
        version: ``distbench`` (distbench's own prompts) or a GAMA template version v1..v5
            (needs ``templates``).
        templates: Path of a GAMA-Bench checkout whose templates are used (None: ours).
        role: GAMA's role prompt 1..3 (templates only), or None.
        llm_seed: Seed of the models' sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: 256, or the cot budget).
        shard_games: Games per shard.
    """

    game: str
    seats: tuple[BackendSpec | str, ...]
    options: tuple[tuple[str, str], ...] = ()
    seeds: tuple[int, ...] = (42,)
    num_games: int = 5
    reask: int = 0
    version: str = "distbench"
    templates: str | None = None
    role: int | None = None
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_games: int = DEFAULT_SHARD_GAMES
    params: rules.Params = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_config(self)
        params = rules.make_params(self.game, dict(self.options))
        object.__setattr__(self, "params", params)
        if len(self.seats) != params.players:
            raise ValueError(f"--players: {len(self.seats)} seats for a game of "
                             f"{params.players} players")
        if not 0 <= self.reask <= MAX_REASK:
            raise ValueError(f"--reask must be from 0 to {MAX_REASK}, got {self.reask}")
        if self.version not in VERSIONS:
            raise ValueError(f"--option version={self.version}: one of {', '.join(VERSIONS)}")
        if self.version != "distbench" and not self.templates:
            raise ValueError(f"--option version={self.version}: GAMA's templates need "
                             "--option templates=PATH (a GAMA-Bench checkout)")
        if self.templates:
            from distbench.games.gama.templates import open_templates

            if self.version == "distbench":
                object.__setattr__(self, "version", "v1")
            open_templates(self.templates, self.version)  # one line when there are none
        if self.role is not None and not 1 <= self.role <= 3:
            raise ValueError(f"--option role={self.role}: 1, 2 or 3")
        chunks = -(-self.num_games // self.shard_games)
        check_plan_size(len(self.seeds) * chunks,
                        f"{len(self.seeds)} seed(s) x {chunks} chunk(s)")

    def specs(self) -> tuple[BackendSpec, ...]:
        """The models at the table, once each, in seat order."""
        return tuple(dict.fromkeys(s for s in self.seats if isinstance(s, BackendSpec)))

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared on resume): every field but ``shard_games``, the
        players by their identity, the parameters in full."""
        out = {k: v for k, v in asdict(self).items() if k not in ("seats", "params",
                                                                 "shard_games")}
        out["seats"] = [seat_identity(s) for s in self.seats]
        out["params"] = json.loads(self.params.to_json())
        return json.loads(json.dumps(out, default=str))

    def table_key(self) -> str:
        """A short hash of what sets a table apart (the game, its players, parameters, words
        and sampling: the identity but the seeds and the count of games), so that games of
        several tables in one run (a suite, a sweep, a tournament) never share an id. The
        players by their :func:`seed_key` (not where a model is reached): the game ids seed the
        games and their calls, so one model behind two addresses plays the same games."""
        identity = self.identity()
        for name in ("seeds", "num_games"):
            identity.pop(name, None)
        identity["seats"] = [seed_key(s) for s in self.seats]
        return stable_hash(identity, size=4)

    def game_id(self, seed: int, index: int) -> str:
        """Game ``index`` of seed ``seed`` at this table: ``gama/<game>/<table>/s<seed>/g<i>``,
        unique in a run."""
        return f"{NAME}/{self.game}/{self.table_key()}/s{seed}/g{index}"

    def plan(self, run_id: str) -> RunPlan:
        return plan_gama(self, run_id)


@dataclass(frozen=True)
class GamaShard(GameChunk):
    """Games ``start..stop-1`` of one (game, seed)."""

    config: GamaRunConfig
    family: str = NAME

    @property
    def parts(self) -> tuple[tuple[GamaRunConfig, int, int, int], ...]:
        """(config, seed, start, stop) of the games the shard plays."""
        return ((self.config, self.seed, self.start, self.stop),)


@dataclass(frozen=True)
class GamaSuiteShard:
    """Games of several configurations played together, round by round (the leaderboard
    protocol of one model: every game at once, so its rounds overlap)."""

    shard_id: str
    run_id: str
    parts: tuple[tuple[GamaRunConfig, int, int, int], ...]
    family: str = NAME

    @property
    def specs(self) -> tuple[BackendSpec, ...]:
        return tuple(dict.fromkeys(s for c, *_ in self.parts for s in c.specs()))

    @property
    def num_units(self) -> int:
        """Progress units: games."""
        return sum(stop - start for _, _, start, stop in self.parts)


def plan_shards(config: GamaRunConfig, run_id: str = "") -> list[GamaShard]:
    """The shards in a stable order (seed, chunk)."""
    identity = config.identity()
    del identity["seeds"]
    return [GamaShard(chunk_id("gm", NAME, identity, seed=seed, start=start, stop=stop), run_id,
                      seed, start, stop, config)
            for seed in config.seeds
            for start, stop in game_chunks(config.num_games, config.shard_games)]


def expected_calls(config: GamaRunConfig) -> int:
    """The model answers a run asks for at least (every seat every round; Battle Royale one
    seat a round; the Pirate Game one round of a proposer and voters), for the ETA."""
    p = config.params
    model_seats = sum(isinstance(s, BackendSpec) and s.provider != "dummy" for s in config.seats)
    per_round = 1 if config.game == "battle" else model_seats
    rounds = 1 if config.game == "pirate" else p.rounds
    if config.game == "battle":
        per_round = model_seats / max(1, p.players)
    return int(round(per_round * rounds * config.num_games * len(config.seeds)))


def plan_gama(config: GamaRunConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a configuration."""
    from distbench.games.gama.summary import summarize

    calls = expected_calls(config)
    return RunPlan(
        family=NAME, config=config.identity(), identity=config.identity(),
        shards=plan_shards(config, run_id),
        seeds={"game_seeds": list(config.seeds), "llm_seed": config.llm_seed},
        summarize=summarize, unit="games", summary_tables=tuple(TABLES),
        expected_calls=calls or None)


# -- distbench sweep: the [gama] table ------------------------------------------------------

SECTION_KEYS = {"games", "runs", "players", "rounds", "reask", "max_tokens"}


def section(table: Any) -> dict[str, Any]:
    """``[gama]``: ``games`` (names, default all eight), ``runs`` per game and seed (5),
    ``players`` (10) and ``rounds`` (20) per game, ``reask`` (0), ``max_tokens`` (256)."""
    from distbench.games.section import Section, SectionError

    s = Section(table, SECTION_KEYS)
    games = s.names("games", list(rules.GAME_NAMES), rules.GAME_NAMES)
    reask = s.int("reask", 0, 0)
    if reask > MAX_REASK:
        raise SectionError("reask", f"at most {MAX_REASK}")
    return {"games": games, "runs": s.int("runs", 5), "players": s.int("players", 10, 2),
            "rounds": s.int("rounds", 20), "reask": reask,
            "max_tokens": s.int("max_tokens", 256)}


def sweep_configs(spec: Any, entry: Any) -> list[GamaRunConfig]:
    """What one model of a sweep plays: each game of ``[gama]`` with ten seats of the model
    (GAMA's leaderboard protocol); nothing without the table."""
    table = spec.section(NAME)
    if not table:
        return []
    options = (("players", str(table["players"])), ("rounds", str(table["rounds"])))
    return [GamaRunConfig(
        game=game, seats=(entry.spec,) * table["players"], options=options,
        seeds=tuple(spec.seeds), num_games=table["runs"], reask=table["reask"],
        llm_seed=spec.llm_seed, temperature=spec.temperature, max_tokens=table["max_tokens"])
        for game in table["games"]]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """``distbench sweep plan``'s figures: games."""
    games = sum(s.num_units for s in shards)
    return {"gama_games": games} if games else {}


FAMILY = register(declare(
    __package__,
    Identity(name=NAME,
             description="GAMA-Bench's eight games of ten players (Guess 2/3, El Farol, Divide "
                         "the Dollar, Public Goods, Diner, Auction, Battle Royale, Pirate): "
                         "GAMA's score with intervals, distance to equilibrium, invalid answers, "
                         "mixed tables",
             tables=TABLES, main_table="gama_games", unit="games"),
    play={"summarize": "distbench.games.gama.summary:summarize",
          "shared": {"import": "distbench.games.gama.commands:import_command",
                     "suite": "distbench.games.gama.commands:suite_command"},
          "example": ("--game", "guessing", "--llm-type", "dummy", "--num-games", "1",
                      "--option", "rounds=2")},
    presentation={"catalog": None},
    sweeps={"section": "distbench.games.gama.plan:section"},
    tournaments={"seats": tuple(str(k) for k in range(1, 11)),
                 "table": "distbench.games.gama.tournament:table",
                 "options": {"game": "the game played (guessing, bar, divide, goods, diner, "
                                     "auction, battle, pirate)",
                             "players": "seats at a table (default: one per player)",
                             "rounds": "rounds per game", "ratio": "Guess 2/3's ratio (e.g. 2/3)"},
                 "anchors": ("scripted:equilibrium", "scripted:random")},
))
