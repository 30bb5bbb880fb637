"""Planning of openspiel runs: configuration, shards with stable ids, the :class:`RunPlan`.

``play`` mode: a shard is a range of matches of one seed, each played in both seat orders
(``both_seat_orders``), the chance outcomes of a match drawn from its seed alone (the same deal
in both orders). ``logprob`` mode: one shard asks the model once per information state of the
game (12 for Kuhn poker) and reads its policy from next-token probabilities; no match is
played. A shard's id hashes everything that decides its rows.
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
    derive_seed,
    seat_label,
    seed_key,
    stable_hash,
)
from distbench.games.family import Identity, declare
from distbench.games.openspiel.schema import TABLES
from distbench.games.registry import register
from distbench.llm.base import BackendSpec

NAME = "openspiel"
MAX_MCTS_SIMULATIONS = 10_000
"""Most simulations an MCTS move may take (about a second of search per thousand on one
core): a larger search would hold a shard for hours."""
MODES = ("play", "logprob")
SCRIPTED = ("random", "equilibrium", "mcts")
Player = BackendSpec | str


def player_identity(player: Player) -> Any:
    """What decides a player's moves: a scripted name, or the model's identity."""
    return player if isinstance(player, str) else json.loads(json.dumps(player.identity()))


@dataclass(frozen=True, slots=True)
class OpenSpielRunConfig:
    """What an openspiel run plays.

    Attributes:
        game: OpenSpiel game string (registry name with parameters).
        seeds: Seeds of the matches' chance outcomes.
        num_games: Matches per seed (each in both seat orders).
        player: The evaluated model; in ``play`` mode also a scripted player (a tournament
            seats two players of any kind: :mod:`.tournament`).
        opponent: ``random``, ``equilibrium``, ``mcts``, a model, or None (self-play).
        mode: ``play`` or ``logprob``.
        llm_seed: Seed of the models' sampling and of the scripted players' draws.
        temperature: Sampling temperature.
        max_tokens: Completion budget per answer (None: by style, 256 chat, 16 completion).
        both_seat_orders: Play every match with the seats swapped too.
        shard_games: Matches per shard (about).
        mcts_simulations: Simulations per move of the MCTS opponent.
    """

    game: str
    seeds: tuple[int, ...]
    num_games: int
    player: Player
    opponent: Player | None = "random"
    mode: str = "play"
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    both_seat_orders: bool = True
    shard_games: int = 50
    mcts_simulations: int = 100

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(self.seeds))
        if self.opponent is None:
            object.__setattr__(self, "opponent", self.player)
        check_config(self)
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct, got {list(self.seeds)}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if isinstance(self.player, str):
            if self.mode != "play" or self.player not in SCRIPTED:
                raise ValueError(f"player must be a model (or in play mode one of "
                                 f"{', '.join(SCRIPTED)}), got {self.player!r}")
        elif not isinstance(self.player, BackendSpec):
            raise ValueError(f"player must be a model, got {self.player!r}")
        if isinstance(self.opponent, str) and self.opponent not in SCRIPTED:
            raise ValueError(f"opponent must be a model or one of {', '.join(SCRIPTED)}, "
                             f"got {self.opponent!r}")
        if not 1 <= self.mcts_simulations <= MAX_MCTS_SIMULATIONS:
            raise ValueError(f"mcts_simulations must be from 1 to {MAX_MCTS_SIMULATIONS:,} (a "
                             f"search per move), got {self.mcts_simulations:,}")
        per = len(self.seat_orders())
        size = max(1, self.shard_games // per)
        chunks = math.ceil(self.num_games / size)
        check_plan_size(len(self.seeds) * chunks, f"{len(self.seeds)} seed(s) x {chunks:,} "
                        f"shard(s) of {size:,} matches")

    def to_dict(self) -> dict[str, Any]:
        """JSON-shaped (lists, not tuples)."""
        out = json.loads(json.dumps(asdict(self), default=str))
        out["player"] = seat_label(self.player)
        out["opponent"] = seat_label(self.opponent)
        return out

    def identity(self) -> dict[str, Any]:
        """:meth:`to_dict` with the models' identities (no execution-only options)."""
        out = self.to_dict()
        out["player"] = player_identity(self.player)
        out["opponent"] = player_identity(self.opponent)
        del out["shard_games"]
        return out

    def plan(self, run_id: str) -> RunPlan:
        """The :class:`RunPlan` of this configuration."""
        return plan_openspiel(self, run_id)

    def seat_orders(self) -> tuple[int, ...]:
        return (0, 1) if self.both_seat_orders else (0,)

    def specs(self) -> tuple[BackendSpec, ...]:
        """The models called, once each."""
        out: dict[BackendSpec, None] = {}
        if isinstance(self.player, BackendSpec):
            out[self.player] = None
        if isinstance(self.opponent, BackendSpec):
            out.setdefault(self.opponent, None)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class OpenSpielShard:
    """A range of matches of one seed in every seat order (play), or the policy questions
    (logprob: ``seed`` -1, no matches).

    Attributes:
        shard_id: Stable id.
        game: The game string.
        mode: ``play`` or ``logprob``.
        seed: Chance seed.
        start: First match index.
        stop: One past the last.
        player: The evaluated player (player_a): a model, or a scripted player in a
            tournament.
        opponent: The other player (player_b).
        seat_orders: Seats of player_a played (0: it moves first).
        llm_seed: Sampling seed.
        temperature: Sampling temperature.
        max_tokens: Completion budget.
        mcts_simulations: Simulations per MCTS move.
        specs: The models it calls.
        family: ``"openspiel"``.
        run_id: The run.
    """

    shard_id: str
    game: str
    mode: str
    seed: int
    start: int
    stop: int
    player: Player
    opponent: Player
    seat_orders: tuple[int, ...]
    llm_seed: int
    temperature: float
    max_tokens: int | None
    mcts_simulations: int
    specs: tuple[BackendSpec, ...] = ()
    family: str = NAME
    run_id: str = field(default="", compare=False)

    @property
    def num_units(self) -> int:
        """Matches of this shard (logprob mode: 1, the policy)."""
        if self.mode == "logprob":
            return 1
        return (self.stop - self.start) * len(self.seat_orders)

    def pairing_id(self) -> str:
        """Short stable id of the (player, opponent) pairing."""
        return stable_hash([seed_key(self.player), seed_key(self.opponent)], 4)

    def seats(self, order: int) -> tuple[Player, Player]:
        """(player id 0, player id 1) in seat order ``order`` (0: player_a is player 0)."""
        return (self.player, self.opponent) if order == 0 else (self.opponent, self.player)


def move_seed(llm_seed: int, match_id: str, ply: int) -> int:
    """The per-move sampling seed (63 bits), also the scripted players' draws."""
    return derive_seed(llm_seed, match_id, ply) >> 1


def chance_seed(game: str, seed: int, index: int) -> int:
    """The seed of a match's chance outcomes: the game, the seed and the match index."""
    return derive_seed("openspiel-chance", game, seed, index)


def plan_shards(config: OpenSpielRunConfig, run_id: str = "") -> list[OpenSpielShard]:
    """Expands ``config`` into shards, in a stable order."""
    common = {
        "game": config.game, "mode": config.mode, "player": player_identity(config.player),
        "opponent": player_identity(config.opponent), "llm_seed": config.llm_seed,
        "temperature": config.temperature, "max_tokens": config.max_tokens,
        "mcts_simulations": config.mcts_simulations,
    }

    def shard(seed: int, start: int, stop: int) -> OpenSpielShard:
        key = {"family": NAME, **common, "seed": seed, "start": start, "stop": stop,
               "seat_orders": list(config.seat_orders())}
        return OpenSpielShard(
            shard_id=f"o-{stable_hash(key)}", game=config.game, mode=config.mode, seed=seed,
            start=start, stop=stop, player=config.player, opponent=config.opponent,
            seat_orders=config.seat_orders(), llm_seed=config.llm_seed,
            temperature=config.temperature, max_tokens=config.max_tokens,
            mcts_simulations=config.mcts_simulations, specs=config.specs(), run_id=run_id)

    if config.mode == "logprob":
        return [shard(-1, 0, 0)]
    size = max(1, config.shard_games // len(config.seat_orders()))
    return [shard(seed, chunk * size, min(config.num_games, (chunk + 1) * size))
            for seed in config.seeds for chunk in range(math.ceil(config.num_games / size))]


def shard_calls(shard: OpenSpielShard) -> int:
    """The model answers the shard asks for at most (for the progress line's ETA): one per
    decision of a model's seat, so per match the game's longest play in decisions
    (``max_game_length``) when a model sits in either seat or both (a seat's own share of an
    alternating game is about half: the bound is lowered as shards commit with the calls
    they made); free in-process models (the dummy) and scripted players count none. Logprob
    mode reads a policy, which ``expected_calls`` counts: 0 here."""
    from distbench.games.openspiel.spiel import load_game
    from distbench.llm.registry import backend_class

    if shard.mode == "logprob":
        return 0
    models = [p for p in (shard.player, shard.opponent)
              if isinstance(p, BackendSpec) and not backend_class(p.provider).in_process]
    if not models:
        return 0
    return shard.num_units * int(load_game(shard.game).max_game_length())


def plan_openspiel(config: OpenSpielRunConfig, run_id: str) -> RunPlan:
    """The :class:`distbench.games.base.RunPlan` of an openspiel configuration."""
    from distbench.games.openspiel.summary import openspiel_summary

    shards = plan_shards(config, run_id)
    expected = None
    if config.mode == "logprob" and config.player.provider != "dummy":
        from distbench.games.openspiel.reference import reference

        # at least one call per information state (a reading that follows white space or a
        # digit prefix makes more)
        expected = len(reference(config.game).infostates)
    return RunPlan(
        family=NAME, config=config.to_dict(), identity=config.identity(), shards=shards,
        seeds={"chance_seeds": list(config.seeds), "llm_seed": config.llm_seed},
        summarize=openspiel_summary, unit="matches",
        summary_tables=("matches", "moves", "openspiel_policies"),
        extra_styles=("completion",) if config.mode == "logprob" else (),
        expected_calls=expected, shard_calls=shard_calls,
    )


def sweep_configs(spec: Any, entry: Any) -> list[OpenSpielRunConfig]:
    """The openspiel configurations of one model entry of a sweep spec: one per game and
    opponent of its ``[openspiel]`` section (none without the section)."""
    sec = spec.section("openspiel")
    if not sec:
        return []
    return [OpenSpielRunConfig(
        game=game, seeds=spec.seeds, num_games=sec["matches"], player=entry.spec,
        opponent=None if opponent == "self" else opponent, mode=sec["mode"],
        llm_seed=spec.llm_seed, temperature=spec.temperature,
        max_tokens=sec.get("max_tokens"), mcts_simulations=sec["mcts_simulations"],
    ) for game in sec["games"] for opponent in sec["opponents"]]


def describe_shards(spec: Any, shards: list[Any]) -> dict[str, Any]:
    """Matches of a sweep's openspiel shards."""
    return {"matches": sum(s.num_units for s in shards if s.mode == "play")}


FAMILY = register(declare(
    __package__,
    Identity(name=NAME,
             description="OpenSpiel's games (Kuhn and Leduc poker, tic-tac-toe, Liar's Dice, ...) "
                         "played through text, every move scored against an exact solver, "
                         "NashConv of the model's policy",
             tables=TABLES, main_table="matches", unit="matches", modes=MODES),
    sweeps=True, rescoring=True, comparing=True,
    tournaments={"seats": ("0", "1"), "anchors": SCRIPTED,
                 "options": {"game": "an OpenSpiel game with parameters (default kuhn_poker)",
                             "mcts_simulations": "simulations of the mcts player "
                                                 "(default 100)"}},
))
