"""How the bimatrix family is configured from ``distbench run``: its own flags, and the options
to a :class:`BimatrixRunConfig`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.errors import did_you_mean
from distbench.games.answers.options import bucket_option, logprob_options, trials_option
from distbench.games.base import CommandRun, parse_player
from distbench.games.bimatrix.instances import CLASSES, type_sets
from distbench.games.bimatrix.plan import (
    DEFAULT_OPPONENTS,
    MODES,
    SCRIPTED,
    BimatrixRunConfig,
    plan_bimatrix,
)
from distbench.games.bimatrix.summary import format_summary
from distbench.llm.base import BackendSpec

OPTIONS = [
    trials_option(),
    bucket_option(),
    click.Option(["--class", "classes"], multiple=True, metavar="NAME",
                 help=f"Bimatrix: a named class of 2x2 games ({', '.join(CLASSES)}), "
                      "repeatable; 'all' for every class."),
    click.Option(["--types"], default=None, metavar="all|I,J,...",
                 help="Bimatrix: Robinson-Goforth ordinal 2x2 types to play: 'all' (144) or "
                      "indices 1..144."),
    click.Option(["--seat"], type=click.Choice(["row", "col", "both"]), default="both",
                 show_default=True, help="Bimatrix: the model's seat."),
    *logprob_options(),
]
"""The family's own flags (``--num-trials``, ``--bucket``, ``--logprob-cue`` and
``--min-label-mass`` are shared with the matrix family: same names, same meaning)."""


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The bimatrix run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players (--llm-type scripted:NAME) play negotiation only")
    modes = tuple(options.get("mode_names") or ("pure",))
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"--mode for bimatrix games is pure, mixed or logprob, got {bad[0]}")
    sets = list(options.get("buckets") or ())
    classes = list(options.get("classes") or ())
    if "all" in classes:
        classes = list(CLASSES)
    for name in classes:
        if name not in CLASSES:
            raise ValueError(f"--class {name!r}: use one of {', '.join(CLASSES)} or all."
                             f"{did_you_mean(name, list(CLASSES))}")
    sets += [f"class:{c}" for c in classes]
    if options.get("types"):
        sets += type_sets(options["types"])
    if not sets:
        sets = ["3x3_midVar"]
    opponents: list[str | BackendSpec] = []
    text = options.get("opponent")
    for part in (text.split(",") if text else DEFAULT_OPPONENTS):
        part = part.strip()
        if part == "self":
            opponents.append("self")
        else:
            opponents.append(parse_player(part, spec, scripted=SCRIPTED))
    seat = options.get("seat") or "both"
    config = BimatrixRunConfig(
        sets=tuple(dict.fromkeys(sets)), llm=spec, seeds=tuple(dict.fromkeys(options["seeds"])),
        num_games=options["num_games"], num_trials=options.get("num_trials") or 100,
        modes=modes, seats=("row", "col") if seat == "both" else (seat,),
        opponents=tuple(dict.fromkeys(opponents)), llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options.get("max_tokens"),
        logprob_cue=options.get("logprob_cue") or "I choose Action",
        min_label_mass=options.get("min_label_mass", 0.5))
    shown = ", ".join(config.sets[:3]) + (f" (+{len(config.sets) - 3} more)"
                                          if len(config.sets) > 3 else "")
    names = ", ".join(o if isinstance(o, str) else f"{o.provider}:{o.model}"
                      for o in config.opponents)
    label = (f"bimatrix | {shown} | {spec.provider}:{spec.model} | {'+'.join(modes)} | seats "
             f"{'+'.join(config.seats)} | vs {names} | {config.num_games} games x "
             f"{config.num_trials} trials")
    return CommandRun(plan=lambda run_id: plan_bimatrix(config, run_id), label=label,
                      folder="bimatrix", format_summary=format_summary)


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the bimatrix family (``Family.catalog``)."""
    from distbench.games.answers.classes import CONDITIONS
    from distbench.games.base import catalog_rows
    from distbench.games.bimatrix.instances import MAX_ACTIONS, SPREADS
    from distbench.games.bimatrix.tournament import PLAYERS
    from distbench.games.bimatrix.types import NUM_TYPES

    players = {
        "eq": "the game's first equilibrium (pure ones first)",
        "uniform": "every action with the same probability",
        "maxmin": "the seat's security strategy (its maximin value)",
        "class": "the class rule: action 1 (cooperate, stag, swerve...; class games only)",
    }
    scripted = catalog_rows((name, players[name]) for name in PLAYERS)
    return {
        "buckets": catalog_rows([(f"MxN_{'|'.join(SPREADS)}",
                                  f"random integer payoffs, sizes 1..{MAX_ACTIONS} "
                                  "(--bucket 3x3_midVar)")]),
        "classes": catalog_rows((f"class:{name}", CONDITIONS[name]) for name in CLASSES),
        "games": catalog_rows([(f"type:rg001..rg{NUM_TYPES:03d}",
                                f"the {NUM_TYPES} ordinal 2x2 types of Robinson and Goforth "
                                "(--types all|I,J,...)")]),
        "strategies": [row for row in scripted if row["name"] in SCRIPTED],
        "players": scripted,
    }
