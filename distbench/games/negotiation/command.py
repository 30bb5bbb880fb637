"""``distbench run --family negotiation``: the options to a :class:`NegotiationRunConfig`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from distbench.games.base import CommandRun, parse_player
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.games.negotiation.players import SCRIPTED
from distbench.llm.base import BackendSpec


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The negotiation run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if options["combined"]:
        raise ValueError("--combined is for the matrix family")
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
