"""How the negotiation family is configured from outside: its ``distbench run`` flags and
options, and its ``[negotiation]`` section of a sweep spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.games.base import CommandRun, parse_player
from distbench.games.negotiation.clembench import load_instances
from distbench.games.negotiation.items import LANGS
from distbench.games.negotiation.plan import NegotiationRunConfig, file_config, plan_negotiation
from distbench.games.negotiation.players import SCRIPTED
from distbench.games.negotiation.prompts import MODES
from distbench.games.negotiation.summary import format_summary
from distbench.games.section import Section, SectionError
from distbench.llm.base import BackendSpec

OPTIONS = [
    click.Option(["--lang", "langs"], multiple=True, type=click.Choice(list(LANGS)),
                 help="Language of the dialogue (repeatable).  [default: en]"),
    click.Option(["--max-messages"], type=click.IntRange(min=1), default=5, show_default=True,
                 help="Free messages per player."),
    click.Option(["--instances", "instances_path"], metavar="FILE_OR_DIR", default=None,
                 help="Play clembench's Deal or No Deal instance files (a file, or a folder's "
                      "instances*.json) instead of generated instances: each instance once, in "
                      "its experiment's mode, language and max_turns; --mode and --lang, when "
                      "given, keep only those experiments."),
]
"""The family's own flags of ``distbench run`` (``Family.options``)."""

SECTION_KEYS = {"modes", "langs", "games", "opponents", "max_messages", "max_tokens", "instances"}


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The negotiation run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider == "dummy":
        raise ValueError("the dummy model cannot negotiate; use --llm-type local, a real "
                         "model, or scripted:fair|greedy|random")
    first = spec.provider if spec.provider.startswith("scripted:") else spec
    opponent = options["opponent"]
    other = parse_player(opponent, spec, scripted=tuple(SCRIPTED)) if opponent else None
    if options.get("instances_path"):
        return _instances_command(options, first, other)
    modes = tuple(dict.fromkeys(options["mode_names"])) or ("semi",)
    langs = options["langs"] or ("en",)
    config = NegotiationRunConfig(
        seeds=tuple(dict.fromkeys(options["seeds"])), num_games=options["num_games"],
        modes=modes, langs=langs, player_a=first, player_b=other,
        max_messages=options["max_messages"], llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options["max_tokens"] or 256,
    )
    label = (f"negotiation | {'+'.join(modes)} | {'+'.join(langs)} | "
             f"{config.num_games} instances per seed")
    return CommandRun(plan=lambda run_id: plan_negotiation(config, run_id), label=label,
                      folder="negotiation", format_summary=format_summary)


def _instances_command(options: Mapping[str, Any], first: Any, other: Any) -> CommandRun:
    path = options["instances_path"]
    config = file_config(
        path, tuple(dict.fromkeys(options["mode_names"])), tuple(options["langs"] or ()),
        player_a=first, player_b=other, llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options["max_tokens"] or 256,
    )
    label = (f"negotiation | clembench instances {path} | {'+'.join(config.modes)} | "
             f"{'+'.join(config.langs)} | {len(config.instances)} instances")
    return CommandRun(plan=lambda run_id: plan_negotiation(config, run_id), label=label,
                      folder="negotiation", format_summary=format_summary)


def section(table: Any) -> dict[str, Any]:
    """The ``[negotiation]`` table of a sweep spec, defaults filled in: every model also
    negotiates ``games`` instances per seed against each of ``opponents`` (``self`` or a
    scripted player), in each of ``modes`` and ``langs``; with ``instances`` (a path to
    clembench's instance files) it plays those instead, ``modes`` and ``langs`` (when given)
    keeping only those experiments."""
    s = Section(table, SECTION_KEYS)
    out = s.rest()
    out["games"] = s.int("games", 5)
    out["opponents"] = s.names("opponents", ["self"], ("self", *SCRIPTED))
    if isinstance(out.get("instances"), str) and out["instances"]:
        try:
            every = load_instances(out["instances"])
        except ValueError as exc:
            raise SectionError("instances", str(exc)) from None
        out["modes"] = s.names("modes", list(dict.fromkeys(fi.mode for fi in every)), MODES)
        out["langs"] = s.names("langs", list(dict.fromkeys(fi.lang for fi in every)),
                               list(dict.fromkeys(fi.lang for fi in every)))
    else:
        out["modes"] = s.names("modes", [MODES[0]], MODES)
        out["langs"] = s.names("langs", [LANGS[0]], LANGS)
    out["max_messages"] = s.int("max_messages", 5)
    if "max_tokens" in out:
        s.int("max_tokens", 256)
    if "instances" in out:
        path = out["instances"]
        if not isinstance(path, str) or not path:
            raise SectionError("instances", f"must be a path (a file or folder), got {path!r}")
        try:
            file_config(path, tuple(out["modes"]), tuple(out["langs"]), player_a="scripted:fair")
        except ValueError as exc:
            raise SectionError("instances", str(exc)) from None
    return out


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the negotiation family (``Family.catalog``): its
    scripted negotiators (opponents and a tournament's scripted players)."""
    from distbench.games.base import catalog_rows

    rules = {"scripted:fair": "asks for half of every item type (odd items alternate)",
             "scripted:greedy": "asks for every item it values, nothing else",
             "scripted:random": "asks for a uniformly random amount of each type"}
    scripted = catalog_rows((name, rules[name]) for name in SCRIPTED)
    return {"strategies": scripted, "players": scripted}
