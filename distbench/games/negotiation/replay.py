"""The negotiation family's replays: the items with both seats' valuations, the conversation
turn by turn (each seat's latest proposal beside the items) and the final split as a point
among every possible split's scores, with the Pareto frontier drawn. Episodes are sampled per
mode (the replay page's game key)."""

from __future__ import annotations

import itertools
from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, replay_loop, units_and_steps

_EPISODE_SQL = """
SELECT episode_id, instance_id, lang, player_a, player_b, item_types, counts, values_a,
       values_b, proposal_a, proposal_b, score_a, score_b, success, lose, aborted, abort_reason,
       pareto_optimal, main_score
FROM episodes WHERE episode_id IN (SELECT unnest(?)) ORDER BY episode_id
"""
_TURN_SQL = """
SELECT episode_id, turn, player, player_label, kind, raw_text, parse_status, proposal
FROM turns WHERE episode_id IN (SELECT unnest(?)) ORDER BY episode_id, turn
"""


def splits(counts: list[int], values_a: list[int], values_b: list[int]) -> tuple[list, list]:
    """Every split's (score a, score b), distinct, and the Pareto-optimal ones among them."""
    points = sorted({(sum(v * x for v, x in zip(values_a, take, strict=True)),
                      sum(v * (c - x) for v, c, x in zip(values_b, counts, take, strict=True)))
                     for take in itertools.product(*(range(c + 1) for c in counts))})
    frontier = [p for p in points
                if not any(q != p and q[0] >= p[0] and q[1] >= p[1] for q in points)]
    return [list(p) for p in points], [list(p) for p in frontier]


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` episodes per mode, every turn a step, the outcome the last."""
    return replay_loop(con, family="negotiation", package=__package__,
                       sample=("episodes", "mode", "episode_id"), per_game=per_game, seed=seed,
                       fetch=units_and_steps(con, _EPISODE_SQL, _TURN_SQL), build=_episode)


def _episode(eid: str, fetched: tuple[dict, dict]) -> Replay:
    episodes, turns = fetched
    ep = episodes[eid]
    points, frontier = splits(ep["counts"], ep["values_a"], ep["values_b"])
    static: dict[str, Any] = {
        "items": ep["item_types"], "counts": ep["counts"], "values_a": ep["values_a"],
        "values_b": ep["values_b"], "player_a": ep["player_a"], "player_b": ep["player_b"],
        "points": points, "frontier": frontier, "lang": ep["lang"]}
    steps: list[dict[str, Any]] = [{"label": "the items and what each seat values"}]
    latest: dict[str, Any] = {"a": None, "b": None}
    for turn, player, label, kind, raw, status, proposal in turns.get(eid, []):
        if proposal is not None:
            latest[player] = list(proposal)
        steps.append({"label": f"turn {turn + 1}: seat {player} ({label}), {kind}: {status}",
                      "player": player, "text": (raw or "")[:1500], "status": status,
                      "prop_a": latest["a"], "prop_b": latest["b"]})
    if ep["aborted"]:
        outcome = f"aborted ({ep['abort_reason'] or 'n/a'})"
    elif ep["lose"]:
        outcome = "the proposals conflict: both score 0"
    else:
        outcome = (f"agreed: seat a scores {ep['score_a']}, seat b {ep['score_b']}"
                   f"{' (Pareto-optimal)' if ep['pareto_optimal'] else ''}")
    final = None if ep["score_a"] is None else [ep["score_a"], ep["score_b"]]
    steps.append({"label": "outcome: " + outcome, "final": final,
                  "prop_a": ep["proposal_a"], "prop_b": ep["proposal_b"],
                  "main_score": ep["main_score"]})
    return Replay(eid, f"{ep['instance_id']} {ep['lang']}: {ep['player_a']} vs "
                  f"{ep['player_b']}", static, steps)
