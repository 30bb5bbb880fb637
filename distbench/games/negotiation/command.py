"""How the negotiation family is configured from outside: its ``distbench run`` flags and
options, and its ``[negotiation]`` section of a sweep spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.games.base import CommandRun, parse_player
from distbench.games.negotiation.items import LANGS
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.games.negotiation.players import SCRIPTED
from distbench.games.negotiation.prompts import MODES
from distbench.games.section import Section
from distbench.llm.base import BackendSpec

OPTIONS = [
    click.Option(["--lang", "langs"], multiple=True, type=click.Choice(list(LANGS)),
                 help="Language of the dialogue (repeatable).  [default: en]"),
    click.Option(["--max-messages"], type=click.IntRange(min=1), default=5, show_default=True,
                 help="Free messages per player."),
]
"""The family's own flags of ``distbench run`` (``Family.options``)."""

SECTION_KEYS = {"modes", "langs", "games", "opponents", "max_messages", "max_tokens"}


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The negotiation run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider == "dummy":
        raise ValueError("the dummy model cannot negotiate; use --llm-type local, a real "
                         "model, or scripted:fair|greedy|random")
    modes = tuple(dict.fromkeys(options["mode_names"])) or ("semi",)
    langs = options["langs"] or ("en",)
    first = spec.provider if spec.provider.startswith("scripted:") else spec
    opponent = options["opponent"]
    other = parse_player(opponent, spec, scripted=tuple(SCRIPTED)) if opponent else None
    config = NegotiationRunConfig(
        seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        modes=modes, langs=langs, player_a=first, player_b=other,
        max_messages=options["max_messages"], llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options["max_tokens"] or 256,
    )
    label = (f"negotiation | {'+'.join(modes)} | {'+'.join(langs)} | "
             f"{config.num_games} instances per seed")
    return CommandRun(plan=lambda run_id: plan_negotiation(config, run_id), label=label,
                      folder="negotiation")


def section(table: Any) -> dict[str, Any]:
    """The ``[negotiation]`` table of a sweep spec, defaults filled in: every model also
    negotiates ``games`` instances per seed against each of ``opponents`` (``self`` or a
    scripted player), in each of ``modes`` and ``langs``."""
    s = Section(table, SECTION_KEYS)
    out = s.rest()
    out["games"] = s.int("games", 5)
    out["opponents"] = s.names("opponents", ["self"], ("self", *SCRIPTED))
    out["modes"] = s.names("modes", [MODES[0]], MODES)
    out["langs"] = s.names("langs", [LANGS[0]], LANGS)
    out["max_messages"] = s.int("max_messages", 5)
    if "max_tokens" in out:
        s.int("max_tokens", 256)
    return out
