"""The bimatrix family in a tournament: its seats, its players, a pairing, the outcome per seat.

A tournament seats two players of any kind in the row and column seats: models of any provider
and the family's scripted players, named as its ``--opponent`` names them: ``eq`` (the game's
first equilibrium, ``eq1``: pure ones first), ``uniform``, ``class`` (the class rule, action
1; class games only), and ``maxmin`` (the seat's security strategy: a mixed strategy securing
its maximin value). A pairing is a :class:`BimatrixPairConfig`: ``num_instances`` games, each
played in both seat orders, spread round-robin over the game sets (instance ``j`` is game
``j // S`` of set ``j % S``, ``S`` sets), the games of every pairing the same. Its shards are
played by :func:`distbench.games.bimatrix.runner.run_pair_shard` into the ``bimatrix_duels``
table (one row per game and seat order); the family's other tables are untouched.

``options`` of the tournament may give ``sets`` (set ids; default every named class,
``class:prisoners_dilemma`` ... ``class:harmony``) and ``mode`` (``pure``, the default, or
``mixed``: how models answer).

A seat's score is its expected payoff of the joint play **normalised to its own payoff
range** in that game, ``(x'Py - min P) / (max P - min P)`` in [0, 1] (``P`` the seat's payoff
matrix): the two seats of a general-sum game have different payoffs, and games differ in scale
(a bucket's spread, a class's draw), so raw payoffs would let a few large games and the
luckier seat decide; normalised, every game counts the same and a seat's score says how much
of what it could get it got. An invalid answer (a forfeit: no action is substituted) scores 0,
the bottom of the range (the family's quality of an invalid answer), and the other seat 1; both
invalid tie at 0. A game whose model call failed is left out (not a player's doing, as the
family leaves it out of its headline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distbench.games.answers.pairing import (
    PairShard,
    pair_plan,
    pair_shards,
    pair_summary,
    scripted_player,
    seat_outcomes,
)
from distbench.games.base import (
    PairConfig,
    PairingSettings,
    RunPlan,
    SeatOutcome,
    check_config,
    check_plan_size,
)
from distbench.games.bimatrix.instances import CLASSES, get_set
from distbench.games.bimatrix.plan import NAME
from distbench.llm.base import BackendSpec

SEATS = ("row", "col")
TABLE = "bimatrix_duels"
PLAYERS: tuple[str, ...] = ("eq", "uniform", "maxmin", "class")
"""The scripted players of a tournament (see the module docstring)."""
ALIASES = {"equilibrium": "eq"}
"""Other names of the scripted players (``equilibrium``, as the openspiel family calls its
solver player)."""
PAIR_MODES = ("pure", "mixed")
DEFAULT_SETS: tuple[str, ...] = tuple(f"class:{c}" for c in CLASSES)
Player = BackendSpec | str


@dataclass(frozen=True)
class BimatrixPairConfig(PairConfig):
    """One pairing of a tournament: ``player_a`` against ``player_b`` in both seat orders.

    Attributes:
        player_a: A scripted name (:data:`PLAYERS`) or a model.
        player_b: Another.
        sets: Game set ids, the instances spread over them round-robin.
        seed: Game-stream seed.
        num_games: Instances (games), each in both seat orders.
        mode: How models answer: ``pure`` or ``mixed``.
        llm_seed: Seed of the models' sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: by mode and style).
        shard_games: Games per shard (each in both orders).
    """

    player_a: Player
    player_b: Player
    sets: tuple[str, ...] = DEFAULT_SETS
    seed: int = 0
    num_games: int = 20
    mode: str = "pure"
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_games: int = 200

    def __post_init__(self) -> None:
        object.__setattr__(self, "sets", tuple(self.sets))
        check_config(self)
        if not self.sets:
            raise ValueError("at least one game set is needed")
        for s in self.sets:
            get_set(s)
        if self.mode not in PAIR_MODES:
            raise ValueError(f"a tournament's bimatrix mode is pure or mixed, got {self.mode!r}")
        for p in (self.player_a, self.player_b):
            if isinstance(p, str) and p not in PLAYERS:
                raise ValueError(f"unknown bimatrix player {p!r}: use {', '.join(PLAYERS)} or a "
                                 "model PROVIDER[:MODEL]")
            if p == "class":
                plain = [s for s in self.sets if get_set(s).kind != "class"]
                if plain:
                    raise ValueError(f"the class rule player needs class games; {plain[0]} "
                                     "has no class")
        self.check_players()
        chunks = -(-self.num_games // self.shard_games)
        check_plan_size(chunks, f"{chunks} chunk(s) of {self.shard_games} games")

    def plan(self, run_id: str) -> RunPlan:
        return plan_pairs(self, run_id)


@dataclass(frozen=True)
class BimatrixPairShard(PairShard):
    """Instances ``start..stop-1`` of a pairing (instance ``j``: game ``j // S`` of set
    ``j % S``), each in both seat orders; progress units are plays."""

    family: str = NAME

    def games(self) -> list[tuple[str, int, int]]:
        """``(set, first index, stop index)`` of each set's games in this shard."""
        sets = self.config.sets
        out = []
        for k, game_set in enumerate(sets):
            idx = [j // len(sets) for j in range(self.start, self.stop) if j % len(sets) == k]
            if idx:
                out.append((game_set, idx[0], idx[-1] + 1))
        return out


def plan_shards(config: BimatrixPairConfig, run_id: str = "") -> list[BimatrixPairShard]:
    """The shards in a stable order (chunks of instances)."""
    return pair_shards(config, run_id, BimatrixPairShard, "bmp")


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Per (row player, column player): plays, forfeits, mean seat scores."""
    return pair_summary(con, TABLE, "plays")


def plan_pairs(config: BimatrixPairConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a pairing (its calls: each model answers every game in both
    seats; not counted for free in-process models)."""
    return pair_plan(config, plan_shards(config, run_id), [config.seed], unit="plays",
                     table=TABLE, summarize=summarize, calls_per_model=2 * config.num_games)


# -- the family's tournament hooks ----------------------------------------------------------

def player(text: str) -> tuple[Any, str]:
    """``eq`` (or ``equilibrium``), ``uniform``, ``maxmin``, ``class`` or a model ``PROVIDER[:MODEL]`` (the dummy
    model answers at random) (ValueError)."""
    return scripted_player(text, PLAYERS, ALIASES)


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> BimatrixPairConfig:
    """Both seat orders of ``player_a`` against ``player_b`` on the same games."""
    options = dict(settings.options)
    sets = options.get("sets", DEFAULT_SETS)
    return BimatrixPairConfig(
        player_a=player_a, player_b=player_b,
        sets=(sets,) if isinstance(sets, str) else tuple(sets), seed=settings.seed,
        num_games=settings.num_instances, mode=options.get("mode", "pure"),
        llm_seed=settings.llm_seed, temperature=settings.temperature,
        max_tokens=settings.max_tokens)


def outcomes(con: Any) -> list[SeatOutcome]:
    """Every play of the run's pairings (but those whose call failed), row seat first, with
    each seat's score (see the module docstring)."""
    return seat_outcomes(con, TABLE, "duel_id", "game_id")
