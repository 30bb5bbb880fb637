"""The negotiation family in a tournament: its seats, its players, a pairing, the outcome per
seat.

A pairing plays ``num_instances`` generated instances of one seed in mode ``semi`` (each
player maximises its own score) and language ``en`` (``options`` may give ``mode`` and
``lang``), every instance in both seat orders. A seat's score is the player's own score (0 to
10; 0 when the proposals conflict); an aborted episode scores -10 for the seat whose answer
aborted it and 0 for the other, so a player that breaks the protocol loses the game rather
than drawing it. An episode aborted by a failed model call is not rated (the endpoint failed,
not the player; the episode stays in the tables with its status), as every family's headline
leaves failed calls out.
"""

from __future__ import annotations

from typing import Any

from distbench.games.base import PairingSettings, SeatOutcome, seat_label
from distbench.games.negotiation.plan import NegotiationRunConfig
from distbench.games.negotiation.players import SCRIPTED

SEATS = ("a", "b")
ABORT_SCORE = -10.0

OUTCOMES_SQL = f"""
SELECT episode_id, instance_id || '/' || mode || '/' || lang AS instance, player_a, player_b,
       CASE WHEN aborted THEN (CASE WHEN abort_player = 'a' THEN {ABORT_SCORE} ELSE 0.0 END)
            ELSE score_a::DOUBLE END AS score_a,
       CASE WHEN aborted THEN (CASE WHEN abort_player = 'b' THEN {ABORT_SCORE} ELSE 0.0 END)
            ELSE score_b::DOUBLE END AS score_b, shard_id
FROM episodes WHERE abort_reason IS DISTINCT FROM 'call_failed' ORDER BY episode_id
"""


def player(text: str) -> tuple[Any, str]:
    """``scripted:fair|greedy|random`` or a model ``PROVIDER[:MODEL]`` (ValueError)."""
    from distbench.llm.registry import UnknownProviderError, make_spec

    if text in SCRIPTED:
        return text, text
    if text.startswith("scripted:"):
        raise ValueError(f"{text!r}: the scripted negotiators are {', '.join(SCRIPTED)}")
    try:
        spec = make_spec(text)
    except UnknownProviderError as exc:
        raise ValueError(f"{text!r}: not {'|'.join(SCRIPTED)} nor a model ({exc})") from None
    if spec.provider == "dummy":
        raise ValueError("the dummy provider cannot negotiate; use scripted:random")
    return spec, seat_label(spec)


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> NegotiationRunConfig:
    """Both seat orders of ``player_a`` against ``player_b`` on the same instances."""
    options = dict(settings.options)
    return NegotiationRunConfig(
        seeds=(settings.seed,), num_games=settings.num_instances,
        modes=(options.get("mode", "semi"),), langs=(options.get("lang", "en"),),
        player_a=player_a, player_b=player_b, llm_seed=settings.llm_seed,
        temperature=settings.temperature, max_tokens=settings.max_tokens or 256,
        both_seat_orders=True,
    )


def outcomes(con: Any) -> list[SeatOutcome]:
    """Every episode with each seat's score (see the module docstring)."""
    return [SeatOutcome(*row) for row in con.execute(OUTCOMES_SQL).fetchall()]
