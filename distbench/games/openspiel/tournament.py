"""The openspiel family in a tournament: its seats, its players (models, the scripted
``random``, ``equilibrium`` and ``mcts``), a pairing, the outcome per seat.

A pairing plays ``num_instances`` matches of one seed of the game ``options["game"]``
(default ``kuhn_poker``; ``options["mcts_simulations"]``, default 100), every match in both
seat orders on the same chance outcomes (the deal of match ``i`` comes from the game, the seed
and ``i`` alone: :func:`~distbench.games.openspiel.plan.chance_seed`). The seats are
OpenSpiel's player ids ``0`` (moves first) and ``1``.

A seat's score is the game's own return for that player (what OpenSpiel's ``returns()`` gives:
tic-tac-toe 1 win, 0 draw, -1 loss; poker the chips won or lost), so a rating compares what the
game itself rewards, and in a poker game a large pot counts for more than a small one. A
forfeit (an illegal or unparsable answer, which ends the match: nothing is substituted) scores
the game's lowest utility (``min_utility``) for the seat that forfeited and its highest
(``max_utility``) for the other: the family's forfeit is a loss, and no result of play can be
worse. A match ended by a failed call is left out (the family leaves it out of every figure:
neither player's doing).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from distbench.games.answers.pairing import scripted_player
from distbench.games.base import PairingSettings, SeatOutcome
from distbench.games.openspiel.plan import SCRIPTED, OpenSpielRunConfig

SEATS = ("0", "1")
DEFAULT_GAME = "kuhn_poker"
ALIASES = {"solver": "equilibrium"}
"""Other names of the scripted players: ``solver`` is the exact reference (minimax in
perfect-information games, CFR+ / sequence-form equilibria in small imperfect-information
ones), which the family's CLI calls ``equilibrium``."""

OUTCOMES_SQL = """
SELECT match_id, game, seed, game_index, seat_a, player_a, player_b, returns, forfeit_seat,
       shard_id
FROM matches WHERE outcome_a <> 'call_failed' ORDER BY match_id
"""


def player(text: str) -> tuple[Any, str]:
    """``random``, ``equilibrium`` (or ``solver``), ``mcts``, or a model ``PROVIDER[:MODEL]``
    (the dummy model plays uniformly among the legal moves) (ValueError)."""
    return scripted_player(text, SCRIPTED, ALIASES, f"{'|'.join(SCRIPTED)} (or solver)")


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> OpenSpielRunConfig:
    """Both seat orders of ``player_a`` against ``player_b`` on the same deals (ValueError: a
    scripted player the game cannot have, e.g. ``mcts`` in an imperfect-information game)."""
    from distbench.games.openspiel.command import check_game

    options = dict(settings.options)
    game = options.get("game", DEFAULT_GAME)
    for who in (player_a, player_b):
        check_game(game, who if isinstance(who, str) else None, "play")
    return OpenSpielRunConfig(
        game=game, seeds=(settings.seed,), num_games=settings.num_instances,
        player=player_a, opponent=player_b, mode="play", llm_seed=settings.llm_seed,
        temperature=settings.temperature, max_tokens=settings.max_tokens,
        both_seat_orders=True, mcts_simulations=options.get("mcts_simulations", 100),
    )


@cache
def utility_range(game: str) -> tuple[float, float]:
    """(lowest, highest) return a player can get in ``game`` (OpenSpiel's own bounds)."""
    from distbench.games.openspiel.spiel import load_game

    loaded = load_game(game)
    return float(loaded.min_utility()), float(loaded.max_utility())


def seat_scores(game: str, returns: list[float] | None, forfeit_seat: int | None
                ) -> tuple[float, float]:
    """(player 0's score, player 1's score) of a match (see the module docstring)."""
    if forfeit_seat is not None:
        low, high = utility_range(game)
        return (low, high) if forfeit_seat == 0 else (high, low)
    assert returns is not None
    return float(returns[0]), float(returns[1])


def outcomes(con: Any) -> list[SeatOutcome]:
    """Every match but those ended by a failed call, player 0 first, with each seat's score."""
    out = []
    for (match_id, game, seed, index, seat_a, a, b, returns, forfeit, shard_id) in (
            con.execute(OUTCOMES_SQL).fetchall()):
        first, second = (a, b) if seat_a == 0 else (b, a)
        s0, s1 = seat_scores(game, returns, forfeit)
        out.append(SeatOutcome(match_id, f"{game}/s{seed}/g{index}", first, second, s0, s1,
                               shard_id))
    return out
