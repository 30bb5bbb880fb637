"""How the repeated family is configured from ``distbench run``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.games.answers.classes import CLASSES
from distbench.games.base import CommandRun, parse_player
from distbench.games.repeated.plan import RepeatedRunConfig, plan_repeated
from distbench.games.repeated.strategies import NAMES, STRATEGIES, get_machine
from distbench.games.repeated.summary import format_summary
from distbench.llm.base import BackendSpec

OPTIONS = [
    click.Option(["--stage"], default="prisoners_dilemma", show_default=True, metavar="CLASS",
                 help=f"Repeated: the stage game's class ({', '.join(CLASSES)})."),
    click.Option(["--rounds"], type=click.IntRange(1, 200), default=None,
                 help="Repeated: a known horizon of this many rounds.  [default: 10 when no "
                      "--continuation is given]"),
    click.Option(["--continuation"], type=click.FloatRange(0, 1, min_open=True, max_open=True),
                 default=None, help="Repeated: after each round the match goes on with this "
                                    "probability (an unknown horizon)."),
    click.Option(["--predict"], is_flag=True,
                 help="Repeated: also ask for the probability that the opponent cooperates "
                      "this round (scored by Brier score and log loss)."),
]


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The repeated run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players (--llm-type scripted:NAME) play negotiation only")
    text = options.get("opponent") or "TitForTat"
    opponents: list[str | BackendSpec] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "self" or part in STRATEGIES:
            opponents.append(part)
            continue
        try:
            opponents.append(parse_player(part, spec))
        except ValueError:
            get_machine(part)  # an unknown strategy: its error names the close ones
            raise
    rounds, cont = options.get("rounds"), options.get("continuation")
    if rounds is None and cont is None:
        rounds = 10
    config = RepeatedRunConfig(
        llm=spec, stage=options.get("stage") or "prisoners_dilemma",
        opponents=tuple(dict.fromkeys(opponents)),
        seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        rounds=rounds, continuation=cont, predict=bool(options.get("predict")),
        llm_seed=options["llm_seed"], temperature=options["temperature"],
        max_tokens=options.get("max_tokens"))
    length = f"{rounds} rounds" if rounds is not None else f"continuation {cont:g}"
    names = ", ".join(o if isinstance(o, str) else f"{o.provider}:{o.model}" for o in opponents)
    label = (f"repeated | {config.stage} | {spec.provider}:{spec.model} | vs {names} | "
             f"{length} | {config.num_games} matches per opponent")
    return CommandRun(plan=lambda run_id: plan_repeated(config, run_id), label=label,
                      folder="repeated", format_summary=format_summary)


RULES: dict[str, str] = {
    "Cooperator": "always C",
    "Defector": "always D",
    "TitForTat": "C first, then the opponent's last move",
    "SuspiciousTitForTat": "D first, then the opponent's last move",
    "Grudger": "C until the opponent defects, then D forever",
    "WinStayLoseShift": "C first; C after (C,C) or (D,D), else D",
    "Alternator": "C, D, C, D, ...",
    "TitFor2Tats": "D only after two D of the opponent in a row",
    "TwoTitsForTat": "D if the opponent defected in either of the last two rounds",
    "GTFT": "generous tit for tat: after a D, still C with a probability set by the payoffs",
    "Random": "C with probability 1/2",
}
"""One line per axelrod strategy (``distbench list strategies``; the table of
:mod:`distbench.games.repeated.strategies`)."""


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the repeated family (``Family.catalog``): its stage
    games and axelrod's strategies (the opponents and a tournament's scripted players)."""
    from distbench.games.answers.classes import CONDITIONS
    from distbench.games.base import catalog_rows

    strategies = catalog_rows((name, RULES[name]) for name in NAMES)
    return {"games": catalog_rows((name, f"stage game: {CONDITIONS[name]}") for name in CLASSES),
            "strategies": strategies, "players": strategies}
