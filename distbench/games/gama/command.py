"""How the ``gama`` family is configured from ``distbench run``.

``--game`` names the game (distbench's name or GAMA's folder name, e.g. ``guessing_game``),
``--option NAME=VALUE`` sets any of its parameters (``rules.make_params``: ``players``,
``rounds``, ``ratio=1/2``, ``capacity`` as ``ratio=60%``, ``golds``, ``tokens``,
``multiplier``, prices and utilities, ``mode=explicit|second``, valuations, hit rates,
``gold``) and the presentation (``version``, ``templates=PATH``, ``role``), ``--players``
seats the table and ``--reask K`` sets the re-ask policy (:mod:`.plan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.games.base import CommandRun, seat_label
from distbench.games.gama import rules
from distbench.games.gama.plan import MAX_REASK, GamaRunConfig, plan_gama
from distbench.games.gama.players import parse_seat, table_label, table_seats
from distbench.games.gama.summary import format_summary
from distbench.llm.base import BackendSpec

ALIASES = {**{folder: name for name, folder in rules.GAMA_FOLDERS.items()},
           "guess": "guessing", "el_farol": "bar", "public_goods": "goods",
           "divide_the_dollar": "dollar", "diners_dilemma": "diner",
           "battle_royale": "battle", "pirates": "pirate"}
"""Other names of the games (GAMA's folder names among them)."""

PRESENTATION = ("version", "templates", "role")
"""``--option`` names that are not game parameters."""

OPTIONS = [
    click.Option(["--game", "game"], default=None, metavar="GAME",
                 help="gama: the game: " + ", ".join(rules.GAME_NAMES) + " (or GAMA's folder "
                      "name).  [default: guessing]"),
    click.Option(["--option", "gama_options"], multiple=True, metavar="NAME=VALUE",
                 help="gama: a game parameter (players, rounds, ratio=1/2, golds, tokens, "
                      "multiplier, mode=explicit|second, gold, ...) or version=v1..v5, "
                      "templates=PATH (a GAMA-Bench checkout), role=1..3 (repeatable)."),
    click.Option(["--players", "seat_players"], default=None, metavar="P1,P2,...",
                 help="gama: who sits at the table, seat by seat, repeated to fill it: the "
                      "model (its provider, or self), PROVIDER[:MODEL], scripted:equilibrium, "
                      "scripted:random, scripted:fixed=A/B/...  [default: every seat the "
                      "model]"),
    click.Option(["--reask"], type=click.IntRange(0, MAX_REASK), default=0, show_default=True,
                 help="gama: re-ask an invalid answer up to K times (counted) before it "
                      "forfeits the game."),
]


def game_name(text: str | None) -> str:
    """The game a ``--game`` value names (ValueError: one line)."""
    if text is None:
        return "guessing"
    name = ALIASES.get(text, text)
    if name not in rules.GAME_NAMES:
        from distbench.errors import did_you_mean

        raise ValueError(f"--game {text}: not a gama game; use one of "
                         f"{', '.join(rules.GAME_NAMES)}.{did_you_mean(text, list(ALIASES) + list(rules.GAME_NAMES))}")
    return name


def split_options(pairs: Any) -> tuple[dict[str, str], dict[str, str]]:
    """``--option`` values as (game parameters, presentation settings) (ValueError)."""
    params: dict[str, str] = {}
    other: dict[str, str] = {}
    for text in pairs or ():
        key, sep, value = str(text).partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--option {text!r}: give NAME=VALUE")
        (other if key in PRESENTATION else params)[key] = value.strip()
    return params, other


def base_player(spec: BackendSpec) -> BackendSpec | str:
    """The run's own player: the model, or a scripted player given as ``--llm-type``."""
    return spec.provider if spec.provider.startswith("scripted:") else spec


def build_config(options: Mapping[str, Any], spec: BackendSpec) -> GamaRunConfig:
    """The configuration of ``distbench run``'s options (ValueError: one line)."""
    game = game_name(options.get("game"))
    params, other = split_options(options.get("gama_options"))
    players = rules.make_params(game, params).players
    base = base_player(spec)
    if options.get("seat_players"):
        own = spec if isinstance(base, str) else base
        entries = [parse_seat(t, own) for t in str(options["seat_players"]).split(",") if t.strip()]
    else:
        if isinstance(base, str):
            parse_seat(base, spec)  # an unknown scripted name: one line
        entries = [base]
    role = other.get("role")
    if role is not None and not role.isdigit():
        raise ValueError(f"--option role={role}: 1, 2 or 3")
    return GamaRunConfig(
        game=game, seats=table_seats(entries, players), options=tuple(sorted(params.items())),
        seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        reask=int(options.get("reask") or 0), version=other.get("version", "distbench"),
        templates=other.get("templates"), role=int(role) if role else None,
        llm_seed=options["llm_seed"], temperature=options["temperature"],
        max_tokens=options.get("max_tokens"))


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The ``gama`` run of ``distbench run``'s options (ValueError: one line on bad input)."""
    config = build_config(options, spec)
    seats = sorted({seat_label(s) for s in config.seats})
    p = config.params
    label = (f"gama | {config.game} | {table_label(config.seats)} ({', '.join(seats)}) | "
             f"{p.players} players x {p.rounds} rounds | {config.num_games} games per seed")
    return CommandRun(plan=lambda run_id: plan_gama(config, run_id), label=label,
                      folder=f"gama_{config.game}", format_summary=format_summary)
