"""The repeated family's part of ``distbench view``: sampled matches, round by round.

Strata: model × stage × opponent × status (complete, forfeit, call_failed, opponent_forfeit),
over every match. Each card shows the stage game, the match's scores (total, best total,
regret, rates) and every round: both moves, both payoffs, the parse status, the prediction
when asked, and the raw answer of a round that was not a move.
"""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.viewer import (
    ViewItem,
    ViewOptions,
    ViewPart,
    clip,
    num,
    sampled,
)
from distbench.store.catalog import cursor_records

FILTERS = (("model", "model"), ("stage", "stage game"), ("opponent", "opponent"),
           ("status", "match status"))

_STRATA_SQL = """SELECT provider || ':' || model, stage, opponent, status, count(*)
FROM repeated_matches GROUP BY ALL ORDER BY ALL"""

_MATCHES_SQL = "{ranked} ORDER BY provider, model, stage, opponent, status, _rank"

_ROUNDS_SQL = """SELECT r.run_id, r.match_id, r.round, r.action, r.opponent_action, r.payoff,
       r.opponent_payoff, r.parse_status, r.prediction, r.raw_text
FROM rounds r JOIN ({ranked}) m ON m.run_id = r.run_id AND m.match_id = r.match_id
ORDER BY r.run_id, r.match_id, r.round"""

_MOVE = {0: "1 (C)", 1: "2 (D)", None: "-"}


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The repeated part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, "repeated_matches",
                             "provider, model, stage, opponent, status", "s.match_id", 1500)
    matches = cursor_records(con.execute(_MATCHES_SQL.format(ranked=chosen)))
    rounds: dict[tuple[str, str], list[tuple]] = {}
    for row in con.execute(_ROUNDS_SQL.format(ranked=chosen)).fetchall():
        rounds.setdefault((row[0], row[1]), []).append(row[2:])
    items = []
    for m in matches:
        model = f"{m['provider']}:{m['model']}"
        a, b = m["payoff_row"], m["payoff_col"]
        stage = {"t": "grid", "label": "stage game (model, opponent)", "head": ["", "C", "D"],
                 "rows": [[f"model {'CD'[i]}", *(f"({num(a[i][j])}, {num(b[i][j])})"
                                                  for j in range(2))] for i in range(2)]}
        about = [["model", model], ["match", m["match_id"]],
                 ["rounds", f"{m['rounds_played']} of {m['rounds_planned']} ({m['status']})"],
                 ["total / best", f"{num(m['total'])} / {num(m['best_total'])}"],
                 ["regret", num(m["regret"])], ["cooperation", num(m["cooperation_rate"], 3)],
                 ["retaliation", num(m["retaliation_rate"], 3)],
                 ["forgiveness", num(m["forgiveness_rate"], 3)]]
        table = [[str(r[0]), _MOVE[r[1]], _MOVE[r[2]], num(r[3]), num(r[4]), r[5],
                  num(r[6], 3)] for r in rounds.get((m["run_id"], m["match_id"]), [])]
        blocks: list[dict[str, Any]] = [
            {"t": "row", "blocks": [{"t": "kv", "rows": about}, stage]},
            {"t": "grid", "label": "rounds", "head": ["round", "model", "opponent", "payoff",
                                                     "theirs", "status", "prediction"],
             "rows": table},
        ]
        bad = [r for r in rounds.get((m["run_id"], m["match_id"]), []) if r[5] != "ok"]
        if bad:
            blocks.append({"t": "text", "label": f"raw answer of round {bad[0][0]}",
                           "cls": "raw", "text": clip(bad[0][7], options.max_chars)})
        key = (model, m["stage"], m["opponent"], m["status"])
        items.append(ViewItem(key, m["_rank"] - 1, f"{m['match_id']} · {model}", blocks))
    return ViewPart("repeated", "Repeated games: matches", "matches", FILTERS, strata, items,
                    good=("complete",), note="one card per match: the stage game, the scores "
                    "and every round")
