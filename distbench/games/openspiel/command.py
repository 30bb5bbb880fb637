"""How the openspiel family is configured from outside: its ``distbench run`` flags and its
``[openspiel]`` section of a sweep spec."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import click

from distbench.games.base import CommandRun, parse_player
from distbench.games.openspiel.plan import (
    MAX_MCTS_SIMULATIONS,
    MODES,
    SCRIPTED,
    OpenSpielRunConfig,
    plan_openspiel,
)
from distbench.games.openspiel.summary import format_summary
from distbench.games.section import Section, SectionError
from distbench.llm.base import BackendSpec

log = logging.getLogger(__name__)

OPTIONS = [
    click.Option(["--game", "game"], default="kuhn_poker", show_default=True, metavar="GAME",
                 help="OpenSpiel game with its parameters as OpenSpiel parses them, e.g. "
                      "kuhn_poker, leduc_poker, tic_tac_toe, 'liars_dice(dice_sides=4)', "
                      "'goofspiel(num_cards=4)'."),
    click.Option(["--mcts-simulations"], type=click.IntRange(1, MAX_MCTS_SIMULATIONS),
                 default=100, show_default=True, help="Simulations per move of the mcts opponent."),
]
"""The family's own flags of ``distbench run`` (``Family.options``)."""

SECTION_KEYS = {"games", "matches", "opponents", "mode", "max_tokens", "mcts_simulations"}


def check_game(game: str, opponent: Any, mode: str) -> None:
    """Refuses, in one line, a game that cannot be loaded or an opponent or mode it cannot
    have (the equilibrium player and logprob mode need a reference, mcts perfect information);
    warns, when it is not refused, that the game has no rules text of distbench's own."""
    from distbench.games.openspiel.reference import reference
    from distbench.games.openspiel.rules import RULES
    from distbench.games.openspiel.spiel import load_game, perfect_information, short_name

    if not isinstance(game, str) or not game.strip():
        raise ValueError(f"--game must name an OpenSpiel game (e.g. kuhn_poker), got {game!r}")
    loaded = load_game(game)
    if opponent == "mcts" and not perfect_information(loaded):
        raise ValueError(f"--opponent mcts: OpenSpiel's MCTS searches the true state, so it "
                         f"plays perfect-information games only, and {game} is not; use "
                         "random or equilibrium")
    if opponent == "equilibrium" or mode == "logprob":
        ref = reference(game)
        if opponent == "equilibrium" and ref.kind == "none":
            raise ValueError(f"--opponent equilibrium: {game} has no exact reference "
                             f"({ref.detail}); use random or mcts")
        if mode == "logprob" and ref.kind != "equilibrium":
            raise ValueError(f"--mode logprob needs a small imperfect-information game (one "
                             f"question per information state); {game} has none")
    if short_name(game) not in RULES:  # after the refusals: a refused game is one line
        log.warning("%s has no rules text of distbench's own: the prompt gives OpenSpiel's "
                    "game description", game)


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The openspiel run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("the openspiel family plays a model (--llm-type); scripted players "
                         "are opponents: --opponent random|equilibrium|mcts")
    modes = tuple(dict.fromkeys(options.get("mode_names") or ())) or (MODES[0],)
    if len(modes) > 1:
        raise ValueError("--mode: give one of play or logprob")
    mode = modes[0]
    text = options.get("opponent") or "random"
    opponent = None if text == "self" else parse_player(text, spec, scripted=SCRIPTED)
    game = options.get("game")
    game = "kuhn_poker" if game is None else game
    check_game(game, opponent, mode)
    config = OpenSpielRunConfig(
        game=game, seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        player=spec, opponent=opponent, mode=mode, llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options.get("max_tokens"),
        mcts_simulations=options.get("mcts_simulations") or 100,
    )
    label = (f"openspiel | {game} | {mode} | " + (
        "one question per information state" if mode == "logprob" else
        f"{config.num_games} matches per seed x {len(config.seat_orders())} seat orders "
        f"against {text}"))
    return CommandRun(plan=lambda run_id: plan_openspiel(config, run_id), label=label,
                      folder="openspiel", format_summary=format_summary)


def section(table: Any) -> dict[str, Any]:
    """The ``[openspiel]`` table of a sweep spec, defaults filled in: every model plays
    ``matches`` matches per seed (each in both seat orders) of each of ``games`` (OpenSpiel
    game strings) against each of ``opponents`` (``random``, ``equilibrium``, ``mcts`` or
    ``self``), in ``mode`` (``play`` or ``logprob``)."""
    s = Section(table, SECTION_KEYS)
    out = s.rest()
    games = out.get("games", ["kuhn_poker"])
    if not isinstance(games, list) or not games or not all(isinstance(g, str) and g for g in games):
        raise SectionError("games", "must be a non-empty list of OpenSpiel game strings")
    out["games"] = games
    out["matches"] = s.int("matches", 10)
    out["opponents"] = s.names("opponents", ["random"], ("self", *SCRIPTED))
    mode = out.get("mode", MODES[0])
    if mode not in MODES:
        raise SectionError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    out["mode"] = mode
    if "max_tokens" in out:
        s.int("max_tokens", 256)
    out["mcts_simulations"] = s.int("mcts_simulations", 100)
    for game in games:
        for opponent in out["opponents"]:
            try:
                check_game(game, None if opponent == "self" else opponent, mode)
            except ValueError as exc:
                raise SectionError("games", str(exc)) from None
    return out


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the openspiel family (``Family.catalog``): the games
    with a rules text of distbench's own and the exact reference each has (at its default
    parameters), then the scripted players. Any other OpenSpiel game plays too, with
    OpenSpiel's description as its rules and its reference computed on first use."""
    from distbench.games.base import catalog_rows
    from distbench.games.openspiel.rules import REFERENCES, RULES

    games = catalog_rows(((name, text.split(". ")[0]) for name, text in RULES.items()),
                         rules={name: True for name in RULES}, reference=REFERENCES)
    games.append({"name": "any other OpenSpiel game",
                  "description": "OpenSpiel's own description as its rules (the run warns)",
                  "rules": False, "reference": "computed on first use (none if too large)"})
    players = catalog_rows([
        ("random", "uniform over the legal actions"),
        ("equilibrium", "the exact reference's equilibrium (alias solver; needs a reference)"),
        ("mcts", "OpenSpiel's MCTS bot (perfect-information games only)"),
    ])
    return {"games": games, "strategies": players, "players": players}
