"""``distbench run --family fog``: the options to a :class:`FogRunConfig`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from distbench.games.base import CommandRun, parse_player
from distbench.games.fog.agents import TIERS
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.llm.base import BackendSpec


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The fog run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if options["combined"]:
        raise ValueError("--combined is for the matrix family")
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players (--llm-type scripted:NAME) play negotiation only; "
                         "fog tiers are chosen with --agent tier1..tier4")
    agent, opponent = options["agent"], options["opponent"]
    first = parse_player(agent, spec, tiers=tuple(TIERS)) if agent else spec
    if first == spec and spec.provider == "dummy":
        raise ValueError("the dummy model cannot play fog of war; use --agent tier1..tier4, "
                         "--llm-type local or a real model")
    other = parse_player(opponent, spec, tiers=tuple(TIERS)) if opponent else "tier1"
    config = FogRunConfig(
        pairings=((first, other),), seeds=tuple(dict.fromkeys(options["seeds"])),
        num_games=options["num_games"], scout_accuracy=options["scout_accuracy"],
        scouting=not options["no_scouting"], llm_seed=options["llm_seed"],
        temperature=options["temperature"], max_tokens=options["max_tokens"] or 256,
    )
    return CommandRun(plan=lambda run_id: plan_fog(config, run_id),
                      label=f"fog | {config.num_games} games per seat order", folder="fog")
