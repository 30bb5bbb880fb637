"""The repeated family's replays: the match's timeline, both players' moves round by round
(cooperate or defect), the round's payoff and the running total, up to the moment shown.
Matches are sampled per stage game and opponent (the replay page's game key)."""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, asset, grouped, pick, records

_MATCH_SQL = """
SELECT match_id, provider || ':' || model AS model, opponent, stage, rounds_planned, status,
       total, best_total, regret, cooperation_rate
FROM repeated_matches WHERE match_id IN (SELECT unnest(?))
"""
_ROUND_SQL = """
SELECT match_id, round, action, opponent_action, payoff
FROM rounds WHERE match_id IN (SELECT unnest(?)) ORDER BY match_id, round
"""


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` matches per (stage, opponent), a step per round and the end."""
    chosen = pick(con, "repeated_matches", "stage || ' vs ' || opponent", "match_id", per_game,
                  seed)
    part = ReplayPart("repeated", asset("distbench.games.repeated:replay.js"))
    for key, ids in chosen.items():
        matches = records(con, _MATCH_SQL, [ids])
        rounds = grouped(con, _ROUND_SQL, [ids])
        replays = []
        for mid in ids:
            m = matches[mid]
            played = [list(r) for r in rounds.get(mid, [])]
            steps: list[dict[str, Any]] = [
                {"label": f"round {r[0]}: the model {'cooperates' if r[1] == 0 else 'defects' if r[1] == 1 else 'answers invalidly'}",
                 "upto": i + 1} for i, r in enumerate(played)]
            steps.append({"label": f"end ({m['status']}): total {m['total']}, best possible "
                          f"{m['best_total']}", "upto": len(played), "end": True})
            replays.append(Replay(mid, f"{mid}: {m['model']} vs {m['opponent']}",
                                  {"rounds": played, "model": m["model"],
                                   "opponent": m["opponent"], "regret": m["regret"],
                                   "planned": m["rounds_planned"]}, steps))
        part.games[key] = replays
    return part
