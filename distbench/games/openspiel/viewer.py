"""The openspiel family's part of ``distbench view``: sampled matches, each as its move list.

Strata: game × pairing (player_a vs player_b) × outcome of player_a (win, draw, loss,
forfeit, call_failed), counted over every match. Each sampled match shows who sat where, the
returns, and every move in order: the mover, its information state, the legal actions, the
answer (raw text, parse status), the action played and its regret against the reference.
"""

from __future__ import annotations

from typing import Any

from distbench.report.viewer import ViewItem, ViewOptions, ViewPart, clip, num, sampled
from distbench.store.catalog import cursor_groups, cursor_records

FILTERS = (("game", "game"), ("pairing", "pairing (player_a vs player_b)"),
           ("status", "outcome of player_a (an illegal answer forfeits)"))

_MATCHES = "(SELECT *, player_a || ' vs ' || player_b AS pairing FROM matches)"
_STRATA_SQL = f"SELECT game, pairing, outcome_a, count(*) FROM {_MATCHES} GROUP BY ALL ORDER BY ALL"
_MATCHES_SQL = "WITH chosen AS ({ranked}) SELECT * FROM chosen ORDER BY game, pairing, outcome_a, _rank"
_MOVES_SQL = """WITH chosen AS ({ranked}) SELECT m.run_id, m.match_id, m.ply, m.seat,
       m.player_label, m.info_state, m.legal_actions, m.raw_text, m.parse_status,
       m.parse_detail, m.action_name, m.regret
FROM moves m JOIN chosen c ON c.run_id = m.run_id AND c.match_id = m.match_id
ORDER BY m.run_id, m.match_id, m.ply"""


def view(con: Any, options: ViewOptions) -> ViewPart:
    """The openspiel part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, _MATCHES, "game, pairing, outcome_a",
                             "s.match_id", 1500)
    matches = cursor_records(con.execute(_MATCHES_SQL.format(ranked=chosen)))
    moves = cursor_groups(con.execute(_MOVES_SQL.format(ranked=chosen)), key=2)
    items = []
    for rec in matches:
        key = (rec["game"], rec["pairing"], rec["outcome_a"])
        about = [["match", rec["match_id"]], ["game", rec["game"]],
                 ["player_a", f"{rec['player_a']} (player {rec['seat_a']})"],
                 ["player_b", f"{rec['player_b']} (player {1 - rec['seat_a']})"],
                 ["outcome of player_a", rec["outcome_a"]],
                 ["returns", num(rec["returns"])],
                 ["mean regret of player_a", num(rec["regret_a"])],
                 ["reference", rec["reference"]]]
        blocks: list[dict[str, Any]] = [{"t": "kv", "rows": about}, {"t": "h", "text": "moves"}]
        rows = []
        for ply, seat, label, info, legal, raw, status, detail, action, regret in moves.get(
                (rec["run_id"], rec["match_id"]), []):
            rows.append([str(ply), f"{seat} ({label})", info, ", ".join(legal or []),
                         action if status == "ok" else f"FORFEIT: {status}",
                         num(regret)])
            if raw is not None:
                blocks.append({"t": "msg", "who": f"player {seat} ({label})",
                               "side": "a" if seat == rec["seat_a"] else "b",
                               "meta": f"move {ply} · {status}" + (f": {detail}" if detail else ""),
                               "text": clip(raw, options.max_chars), "bad": status != "ok",
                               "extra": f"played: {action}" if action else None})
        blocks.insert(2, {"t": "grid", "label": "move list with regret",
                          "head": ["ply", "player", "information state", "legal actions",
                                   "played", "regret"], "rows": rows,
                          "mark": [i for i, r in enumerate(rows) if r[4].startswith("FORFEIT")]})
        items.append(ViewItem(key, rec["_rank"] - 1, f"{rec['match_id']} · {rec['pairing']}",
                              blocks))
    return ViewPart("openspiel", "OpenSpiel: matches", "matches", FILTERS, strata, items,
                    good=("win", "draw", "loss"),
                    note="one card per match: the move list with each move's regret against "
                         "the exact reference, then the model's answers")
