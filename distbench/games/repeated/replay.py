"""The repeated family's replays: the match's timeline, both players' moves round by round
(cooperate or defect), the round's payoff and the running total, up to the moment shown.
Matches are sampled per stage game and opponent (the replay page's game key)."""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, replay_loop, units_and_steps

_MATCH_SQL = """
SELECT match_id, provider || ':' || model AS model, opponent, stage, rounds_planned, status,
       total, best_total, regret, cooperation_rate
FROM repeated_matches WHERE match_id IN (SELECT unnest(?))
"""
_ROUND_SQL = """
SELECT match_id, round, action, opponent_action, payoff
FROM rounds WHERE match_id IN (SELECT unnest(?)) ORDER BY match_id, round
"""


def _build(mid: str, fetched: tuple[Any, ...]) -> Replay:
    matches, rounds = fetched
    m = matches[mid]
    played = [list(r) for r in rounds.get(mid, [])]
    steps: list[dict[str, Any]] = [
        {"label": f"round {r[0]}: the model {'cooperates' if r[1] == 0 else 'defects' if r[1] == 1 else 'answers invalidly'}",
         "upto": i + 1} for i, r in enumerate(played)]
    steps.append({"label": f"end ({m['status']}): total {m['total']}, best possible "
                  f"{m['best_total']}", "upto": len(played), "end": True})
    return Replay(mid, f"{mid}: {m['model']} vs {m['opponent']}",
                  {"rounds": played, "model": m["model"], "opponent": m["opponent"],
                   "regret": m["regret"], "planned": m["rounds_planned"]}, steps)


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` matches per (stage, opponent), a step per round and the end."""
    return replay_loop(con, family="repeated", package=__package__,
                       sample=("repeated_matches", "stage || ' vs ' || opponent", "match_id"),
                       per_game=per_game, seed=seed,
                       fetch=units_and_steps(con, _MATCH_SQL, _ROUND_SQL), build=_build)
