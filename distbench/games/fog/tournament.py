"""The fog family in a tournament: its seats, its players (tiers, agent classes, models), a
pairing, the outcome per seat.

A pairing plays ``num_instances`` games of one seed in each seat order; the game with index
``i`` draws its board and noise from ``(seed, i)`` alone, so both seat orders (and every
pairing) play the same instances. A seat scores 1 for a win, 0.5 for a draw, 0 for a loss,
if every answer of its player was valid; a seat with an invalid answer forfeits (0, and 1 for
the other seat unless it forfeited too), as the fog headline counts it (an invalid order is
played as "hold", which could still win). A game with a failed model call is not rated (the
endpoint failed, not the player; the game stays in the tables).
``options`` may give ``scout_accuracy`` and ``scouting``.
"""

from __future__ import annotations

from typing import Any

from distbench.games.base import PairingSettings, SeatOutcome, seat_label
from distbench.games.fog.plan import FogRunConfig

SEATS = ("a", "b")

OUTCOMES_SQL = """
WITH r AS (
    SELECT game_id,
           bool_or(report_status = 'call_failed') AS failed,
           bool_or(player = 'a' AND report_status NOT IN ('ok', 'call_failed')) AS bad_a,
           bool_or(player = 'b' AND report_status NOT IN ('ok', 'call_failed')) AS bad_b
    FROM fog_reports GROUP BY game_id
)
SELECT g.game_id, 's' || g.seed || '/g' || g.game_index AS instance, g.agent_a, g.agent_b,
       CASE WHEN coalesce(r.bad_a, false) THEN 0.0
            WHEN coalesce(r.bad_b, false) THEN 1.0
            ELSE CASE g.winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END
       END::DOUBLE AS score_a,
       CASE WHEN coalesce(r.bad_b, false) THEN 0.0
            WHEN coalesce(r.bad_a, false) THEN 1.0
            ELSE CASE g.winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END
       END::DOUBLE AS score_b, g.shard_id
FROM fog_games g LEFT JOIN r USING (game_id)
WHERE NOT coalesce(r.failed, false)
ORDER BY g.game_id
"""


def player(text: str) -> tuple[Any, str]:
    """A tier (``tier1``..``tier4`` or its strategy name), ``mock:TIER``, an agent class
    ``module:Class`` or a model ``PROVIDER[:MODEL]`` (ValueError)."""
    from distbench.games.fog.command import player as fog_player
    from distbench.llm.registry import make_spec

    agent = fog_player(text, make_spec("dummy"))
    if not isinstance(agent, str) and agent.provider == "dummy":
        raise ValueError("the dummy model cannot play fog of war; use tier1..tier4 or a model")
    return agent, seat_label(agent)


def pairing(player_a: Any, player_b: Any, settings: PairingSettings) -> FogRunConfig:
    """Both seat orders of ``player_a`` against ``player_b`` on the same games."""
    options = dict(settings.options)
    return FogRunConfig(
        pairings=((player_a, player_b),), seeds=(settings.seed,),
        num_games=settings.num_instances,
        scout_accuracy=options.get("scout_accuracy", 0.7),
        scouting=options.get("scouting", True), llm_seed=settings.llm_seed,
        temperature=settings.temperature, max_tokens=settings.max_tokens or 512,
        both_seat_orders=True,
    )


def outcomes(con: Any) -> list[SeatOutcome]:
    """Every game with each seat's score (1 win, 0.5 draw, 0 loss)."""
    return [SeatOutcome(*row) for row in con.execute(OUTCOMES_SQL).fetchall()]


def report(con: Any) -> str:
    """The tier gradient of a tournament's games (printed before its ranking): the
    higher-tier score of every pair of agents with its 95% Wilson interval, and the verdict."""
    from distbench.games.fog.metrics import format_gradient, gradient_verdict, tier_gradient

    rows = [dict(zip(("agent_a", "agent_b", "winner"), r, strict=True)) for r in
            con.execute("select agent_a, agent_b, winner from fog_games").fetchall()]
    gradient = tier_gradient(rows)
    return format_gradient(gradient, gradient_verdict(gradient))
