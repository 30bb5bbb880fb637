"""``distbench export`` of a negotiation run: one record per episode, for clembench users.

``episodes.json`` is a list of records in episode order (instance, mode, language, seat
order), each with the instance (``game_id``, ``item_types`` in the plural as the players saw
them, ``item_counts``, both players' values), the players, the ``dialogue`` (every answer in order: seat,
player, what was asked, the text verbatim, how it parsed, the proposal read from it), both
proposals, both scores, the outcome (``success``, ``lose``, ``aborted`` with its reason and
seat) and two score blocks:

- ``clembench``: the keys clembench's dond game master logs and its scorer writes, with its
  meanings (``max_pareto_improvement`` is clembench's normaliser, ``pareto_improvement`` the
  episode's gap, ``Main Score`` the 0-100 episode score, NaN there and ``null`` here when
  aborted; ``Sum of Points`` and ``Pareto Optimal`` are ``null`` when aborted, as clembench
  does not log them then);
- ``distbench``: the run's own columns (``main_score``, its ``max_pareto_improvement`` = the
  episode's gap, ``pareto_optimal``, ``sum_score_ratio``, ``comp_score``...).

``summary.json`` holds the run summary (``queries/negotiation_summary.sql``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from distbench.games.negotiation.summary import negotiation_summary
from distbench.store.catalog import fetch_records
from distbench.store.writer import strict_json

_EPISODES_SQL = """
SELECT * FROM episodes ORDER BY seed, instance_index, instance_id, mode, lang, player_a,
                               player_b, seat_order, episode_id
"""
_TURNS_SQL = """
SELECT episode_id, turn, player, player_label, kind, raw_text, parse_status, parse_detail,
       proposal
FROM turns ORDER BY episode_id, turn
"""






def _clembench_scores(e: dict[str, Any]) -> dict[str, Any]:
    aborted = bool(e["aborted"])
    total = (e["score_a"] + e["score_b"]) if e["success"] else 0
    return {
        "Aborted": int(aborted), "Lose": int(e["lose"]), "Success": int(e["success"]),
        "Main Score": e["clem_quality"],
        "Sum of Points": None if aborted else total / e["max_sum_score"],
        "Pareto Optimal": None if aborted else int(e["clem_pareto_improvement"] == 0),
        "sum_of_scores": total,
        "max_sum_of_scores": e["max_sum_score"],
        "max_player_scores": max(e["max_score_a"], e["max_score_b"]),
        "max_pareto_improvement": e["clem_max_pareto_improvement"],
        "pareto_improvement": e["clem_pareto_improvement"],
        "episode_score": None if e["clem_quality"] is None else e["clem_quality"] / 100.0,
    }


def episode_records(con: Any) -> list[dict[str, Any]]:
    """The per-episode records of the run behind ``con`` (a catalog connection, whose
    ``episodes`` view has the derived ``clem_*`` columns)."""
    dialogue: dict[str, list[dict[str, Any]]] = {}
    for t in fetch_records(con, _TURNS_SQL):
        dialogue.setdefault(t.pop("episode_id"), []).append(t)
    out = []
    for e in fetch_records(con, _EPISODES_SQL):
        out.append({
            "episode_id": e["episode_id"], "instance_id": e["instance_id"],
            "game_id": e["instance_index"], "seed": e["seed"], "mode": e["mode"],
            "lang": e["lang"], "player_a": e["player_a"], "player_b": e["player_b"],
            "seat_order": e["seat_order"], "item_types": e["item_types"],
            "item_counts": e["counts"], "player_a_values": e["values_a"],
            "player_b_values": e["values_b"], "max_messages": e["max_messages"],
            "dialogue": dialogue.get(e["episode_id"], []),
            "player_a_proposal": e["proposal_a"], "player_b_proposal": e["proposal_b"],
            "score_a": e["score_a"], "score_b": e["score_b"], "success": e["success"],
            "lose": e["lose"], "aborted": e["aborted"], "abort_reason": e["abort_reason"],
            "abort_player": e["abort_player"],
            "clembench": _clembench_scores(e),
            "distbench": {k: e[k] for k in (
                "main_score", "max_pareto_improvement", "pareto_optimal", "sum_score_ratio",
                "comp_score", "max_sum_score", "max_score_a", "max_score_b",
                "pareto_frontier_size")},
        })
    return out


def export_json(con: Any, out_dir: Path, run_id: str) -> list[Path]:
    """Writes ``episodes.json`` and ``summary.json`` of a negotiation run into ``out_dir``."""
    episodes = episode_records(con)
    summary = [strict_json(r) for r in negotiation_summary(con)]
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, payload in (("episodes.json", episodes),
                          ("summary.json", {"run_id": run_id, "groups": summary})):
        path = out_dir / name
        path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
