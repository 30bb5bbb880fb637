"""Loading OpenSpiel and its games, with one-line errors a person can act on.

``pyspiel`` is imported only here and only when a game is needed, so the family registers
(and ``--family openspiel`` answers in one line) without the ``openspiel`` extra.
Simultaneous-move games (``goofspiel``) are loaded as OpenSpiel's turn-based equivalent
(``load_game_as_turn_based``): a player does not see the other's simultaneous choice.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

INSTALL_HINT = ("the openspiel family needs OpenSpiel: install it with "
                ".venv/bin/pip install -e '.[openspiel]'")


def pyspiel() -> Any:
    """The ``pyspiel`` module.

    Raises:
        ValueError: OpenSpiel is not installed (the message is :data:`INSTALL_HINT`).
    """
    try:
        import pyspiel as module
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    return module


@functools.lru_cache(maxsize=64)
def load_game(game: str) -> Any:
    """The OpenSpiel game of a registry string with parameters, e.g. ``liars_dice(dice_sides=4)``
    (turn-based when the game is simultaneous).

    Raises:
        ValueError: OpenSpiel is missing, the name is unknown or a parameter is wrong, or the
            game is not one a model can play here (not sequential, or more than 2 players).
    """
    spiel = pyspiel()
    if not isinstance(game, str) or not game.strip():
        raise ValueError("--game: give an OpenSpiel game name, e.g. kuhn_poker")
    name = short_name(game)
    names = spiel.registered_names()
    if name not in names:
        from distbench.errors import did_you_mean

        raise ValueError(f"--game {game!r}: not a game of OpenSpiel's registry."
                         f"{did_you_mean(name, list(names))}")
    try:
        with _quiet_stderr():  # OpenSpiel prints its exceptions to stderr before raising
            loaded = spiel.load_game(game.strip())
    except (spiel.SpielError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"--game {game!r}: OpenSpiel cannot load it ({first})") from None
    gtype = loaded.get_type()
    if gtype.dynamics == spiel.GameType.Dynamics.SIMULTANEOUS:
        loaded = spiel.load_game_as_turn_based(game.strip())
        gtype = loaded.get_type()
    if gtype.dynamics != spiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"--game {game!r}: only sequential (or simultaneous) games can be "
                         "played, this one is " + str(gtype.dynamics))
    if loaded.num_players() != 2:
        raise ValueError(f"--game {game!r}: {loaded.num_players()} players; the openspiel "
                         "family plays two-player games")
    return loaded


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for the block (C++ writes there directly)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def short_name(game: str) -> str:
    """The registry name of a game string: ``liars_dice(dice_sides=4)`` -> ``liars_dice``."""
    return game.strip().partition("(")[0]


def perfect_information(game: Any) -> bool:
    """The game is of perfect information."""
    spiel = pyspiel()
    return game.get_type().information == spiel.GameType.Information.PERFECT_INFORMATION


def zero_sum(game: Any) -> bool:
    """The game is zero-sum (or constant-sum)."""
    spiel = pyspiel()
    return game.get_type().utility in (spiel.GameType.Utility.ZERO_SUM,
                                       spiel.GameType.Utility.CONSTANT_SUM)



def info_string(state: Any, player: int) -> str:
    """The player's information state string; a game without one gives its observation
    string, and one without either ``str(state)``."""
    for method in ("information_state_string", "observation_string"):
        try:
            with _quiet_stderr():  # OpenSpiel prints "not implemented" before raising
                return getattr(state, method)(player)
        except (RuntimeError, pyspiel().SpielError):
            continue
    return str(state)


def observation(state: Any, player: int) -> str | None:
    """What a perfect-information game shows the player (its observation string, e.g. the
    board), when it has one and it differs from the information state; else None."""
    if not perfect_information(state.get_game()):
        return None
    try:
        with _quiet_stderr():
            seen = state.observation_string(player)
    except (RuntimeError, pyspiel().SpielError):
        return None
    return seen if seen.strip() and seen != info_string(state, player) else None
