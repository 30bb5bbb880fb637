"""The repeated family in a tournament: its seats, its players, a pairing, the outcome per seat.

A tournament seats two players of any kind: axelrod's classic strategies (by the names of
:data:`.strategies.NAMES`, also written ``axelrod:TitForTat``) and models of any provider. A
pairing is a :class:`RepeatedPairConfig`: ``num_instances`` matches of one seed, each in both
seat orders (row and column), on the same stage games and lengths (match ``i`` draws its stage
game and its length from ``(stage, seed, i)`` as :mod:`.runner` does, so a pairing plays the
games a ``distbench run --family repeated`` of that seed plays). Its shards are played by
:func:`distbench.games.repeated.runner.run_pair_shard` into the ``repeated_duels`` table (one
row per match); the family's other tables, which score one model against a fixed opponent,
are untouched.

``options`` of the tournament may give ``stage`` (default ``prisoners_dilemma``), ``rounds``
(default 10, a known horizon) or ``continuation`` (then the length is drawn per match, at most
``max_rounds``).

A seat's score is its **mean payoff per round**: the quantity a repeated-game strategy is
judged by (axelrod's tournaments rank by it), in the stage game's units, comparable across
matches of different lengths. A forfeit (an invalid answer: the match ends, no move is
substituted) scores the stage game's lowest payoff for the seat that forfeited and its highest
for the other, so an invalid answer loses whatever was played before it (the family's forfeit
has quality 0, the worst); both forfeiting in the same round tie at the lowest. A match ended
by a failed call is left out (not a player's doing, as the family leaves it out of its
headline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distbench.games.answers.pairing import (
    PairShard,
    model_player,
    pair_plan,
    pair_shards,
    pair_summary,
    seat_outcomes,
)
from distbench.games.base import (
    PairConfig,
    PairingSettings,
    RunPlan,
    SeatOutcome,
    check_plan_size,
)
from distbench.games.repeated.plan import MAX_ROUNDS, NAME, check_matches
from distbench.games.repeated.strategies import STRATEGIES
from distbench.llm.base import BackendSpec

SEATS = ("row", "col")
TABLE = "repeated_duels"
AXELROD_PREFIX = "axelrod:"
Player = BackendSpec | str


@dataclass(frozen=True)
class RepeatedPairConfig(PairConfig):
    """One pairing of a tournament: ``player_a`` against ``player_b`` in both seat orders.

    Attributes:
        player_a: A strategy name or a model.
        player_b: A strategy name or a model (not ``player_a``).
        stage: The stage game's class.
        seeds: Match-stream seeds.
        num_games: Matches per seed (each in both seat orders).
        rounds: Known horizon; None: ``continuation`` decides.
        continuation: Probability that a match goes on after a round; None: known horizon.
        max_rounds: Cap on a drawn length.
        llm_seed: Seed of the models' sampling and of stochastic strategies' draws.
        temperature: Sampling temperature.
        max_tokens: Completion budget (None: 256 chat, 16 completion).
        shard_games: Matches per shard (each in both orders).
    """

    player_a: Player
    player_b: Player
    stage: str = "prisoners_dilemma"
    seeds: tuple[int, ...] = (0,)
    num_games: int = 10
    rounds: int | None = 10
    continuation: float | None = None
    max_rounds: int = MAX_ROUNDS
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    shard_games: int = 50

    def __post_init__(self) -> None:
        players = (self.player_a, self.player_b)
        for p in players:
            if not isinstance(p, str | BackendSpec):
                raise ValueError(f"a player is a strategy name or a model, got {p!r}")
        chunks = check_matches(self, [p for p in players if isinstance(p, str)])
        self.check_players()
        check_plan_size(len(self.seeds) * chunks, f"{len(self.seeds)} seed(s) x {chunks} "
                        "chunk(s)")

    def plan(self, run_id: str) -> RunPlan:
        return plan_pairs(self, run_id)


@dataclass(frozen=True)
class RepeatedPairShard(PairShard):
    """Matches ``start..stop-1`` of one seed of a pairing, in both seat orders."""

    family: str = NAME


def plan_shards(config: RepeatedPairConfig, run_id: str = "") -> list[RepeatedPairShard]:
    """The shards in a stable order (seed, chunk)."""
    return pair_shards(config, run_id, RepeatedPairShard, "rpp", config.seeds)


def summarize(con: Any, offload: Any = None) -> list[dict[str, Any]]:
    """Per (row player, column player): matches, forfeits, mean seat scores, cooperation."""
    return pair_summary(con, TABLE, "matches", "cooperation_row", "cooperation_col")


def plan_pairs(config: RepeatedPairConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a pairing (its calls, with a known horizon and no forfeit: one
    per model, round and match in both seat orders; not counted for free in-process models
    nor with a continuation probability)."""
    calls = (None if config.rounds is None
             else 2 * config.num_games * len(config.seeds) * config.rounds)
    return pair_plan(config, plan_shards(config, run_id), config.seeds, unit="matches",
                     table=TABLE, summarize=summarize, calls_per_model=calls)


# -- the family's tournament hooks ----------------------------------------------------------

def player(text: str) -> tuple[Any, str]:
    """An axelrod strategy (``TitForTat`` or ``axelrod:TitForTat``) or a model
    ``PROVIDER[:MODEL]`` (the dummy model plays at random) (ValueError)."""
    from distbench.errors import did_you_mean

    name = text[len(AXELROD_PREFIX):] if text.startswith(AXELROD_PREFIX) else text
    if name in STRATEGIES:
        return name, name
    if text.startswith(AXELROD_PREFIX):
        raise ValueError(f"{text!r}: unknown strategy; use one of {', '.join(STRATEGIES)}."
                         f"{did_you_mean(name, list(STRATEGIES))}")
    return model_player(text, f"an axelrod strategy ({', '.join(STRATEGIES)})",
                        did_you_mean(text, list(STRATEGIES)))


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> RepeatedPairConfig:
    """Both seat orders of ``player_a`` against ``player_b`` on the same stage games."""
    options = dict(settings.options)
    continuation = options.get("continuation")
    rounds = options.get("rounds", None if continuation is not None else 10)
    return RepeatedPairConfig(
        player_a=player_a, player_b=player_b,
        stage=options.get("stage", "prisoners_dilemma"), seeds=(settings.seed,),
        num_games=settings.num_instances, rounds=rounds, continuation=continuation,
        max_rounds=options.get("max_rounds", MAX_ROUNDS), llm_seed=settings.llm_seed,
        temperature=settings.temperature, max_tokens=settings.max_tokens)


def outcomes(con: Any) -> list[SeatOutcome]:
    """Every match of the run's pairings (but those ended by a failed call), row seat first,
    with each seat's score (see the module docstring)."""
    return seat_outcomes(con, TABLE, "match_id", "instance")
