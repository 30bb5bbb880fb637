"""How the fog family is configured from outside: its ``distbench run`` flags and options,
and its ``[fog]`` section of a sweep spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from distbench.games.base import CommandRun, parse_player
from distbench.games.fog.agents import STRATEGIES, TIERS, check_agent, is_agent_ref
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.fog.summary import format_summary
from distbench.games.section import Section, SectionError
from distbench.llm.base import BackendSpec

OPTIONS = [
    click.Option(["--agent"], default=None,
                 help="The first seat: tier1..tier4, mock:TIER (a tier through the text "
                      "interface, as the fog seed's --agent mock:tier3), or your agent class "
                      "as module:Class (importable: on PYTHONPATH).  [default: the model of "
                      "--llm-type]"),
    click.Option(["--scout-accuracy"], type=click.FloatRange(0, 1), default=0.7,
                 show_default=True, help="Probability a scout reveals the exact power."),
    click.Option(["--no-scouting"], is_flag=True, help="Forbid Scout orders."),
    click.Option(["--max-turns"], type=click.IntRange(min=1), default=20, show_default=True,
                 help="Turn limit of a game, after which the higher surviving power wins (a "
                      "model seat answers once a turn: fewer turns, fewer calls)."),
]
"""The family's own flags of ``distbench run`` (``Family.options``)."""

SECTION_KEYS = {"games", "opponents", "scout_accuracy", "scouting", "max_tokens", "max_turns"}


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The fog run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players (--llm-type scripted:NAME) play negotiation only; "
                         "fog tiers are chosen with --agent tier1..tier4")
    agent, opponent = options["agent"], options["opponent"]
    first = player(agent, spec) if agent else spec
    if first == spec and spec.provider == "dummy":
        raise ValueError("the dummy model cannot play fog of war; use --agent tier1..tier4, "
                         "--llm-type local or a real model")
    other = player(opponent, spec) if opponent else "tier1"
    config = FogRunConfig(
        pairings=((first, other),), seeds=tuple(dict.fromkeys(options["seeds"])),
        num_games=options["num_games"], scout_accuracy=options["scout_accuracy"],
        scouting=not options["no_scouting"], llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options["max_tokens"] or 512,
        max_turns=options["max_turns"],
    )
    return CommandRun(plan=lambda run_id: plan_fog(config, run_id),
                      label=f"fog | {config.num_games} games per seat order", folder="fog",
                      format_summary=format_summary)


def player(text: str, spec: BackendSpec) -> BackendSpec | str:
    """An ``--agent`` / ``--opponent`` value: a tier (or the design's strategy name of one), a
    model ``PROVIDER[:MODEL]`` (a known provider's prefix wins), or a user's agent class
    ``module:Class``, imported here to check it (ValueError: one line)."""
    from distbench.llm.registry import providers

    if text in TIERS or text in STRATEGIES:
        return check_agent(text)
    if is_agent_ref(text) and text.partition(":")[0] not in providers():
        try:
            return check_agent(text)
        except ValueError as exc:
            raise ValueError(f"--agent/--opponent: {exc}") from None
    return parse_player(text, spec, tiers=tuple(TIERS))


def section(table: Any) -> dict[str, Any]:
    """The ``[fog]`` table of a sweep spec, defaults filled in: every model also plays
    ``games`` games per seat order and seed against each of ``opponents`` (tiers, or agent
    classes ``module:Class``, imported here to check them)."""
    s = Section(table, SECTION_KEYS)
    out = s.rest()
    out["games"] = s.int("games", 5)
    classes = [v for v in table.get("opponents", []) if isinstance(v, str)
               and v not in TIERS and is_agent_ref(v)] if isinstance(table.get("opponents"), list) else []
    out["opponents"] = s.names("opponents", ["tier1"], [*TIERS, *classes])
    for ref in classes:
        try:
            check_agent(ref)
        except ValueError as exc:
            raise SectionError("opponents", str(exc)) from None
    out["scout_accuracy"] = s.number("scout_accuracy", 0.7, 0, 1)
    out["scouting"] = s.bool("scouting", True)
    for key, default in (("max_tokens", 512), ("max_turns", 20)):
        if key in out:
            s.int(key, default)
    return out


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the fog family (``Family.catalog``): its scripted
    tiers (opponents and a tournament's scripted players), by tier and strategy name."""
    from distbench.games.base import catalog_rows

    names = {tier: name for name, tier in STRATEGIES.items()}
    tiers = catalog_rows((tier, f"scripted agent {names.get(tier, tier)}") for tier in TIERS)
    tiers.append({"name": "module:Class", "description": "your own agent class"})
    return {"strategies": tiers, "players": tiers}
