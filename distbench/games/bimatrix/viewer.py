"""The bimatrix family's part of ``distbench view``: sampled answers with their game.

Strata: model × game set × seat × mode × parse status, over the answers (one per (game, seat,
mode, trial); an answer's rows against the several opponents are shown together on its card).
Each card shows the payoff table (both players' payoffs, the model's choice marked), the
answer as parsed, and its scores against each opponent; the prompt comes from the ``calls``
table, or is rebuilt from the game for a model that records no call (the dummy).
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from distbench.report.viewer import (
    ViewItem,
    ViewOptions,
    ViewPart,
    clip,
    num,
    sampled,
    share,
)

FILTERS = (("model", "model"), ("set", "game set"), ("seat", "seat"), ("mode", "mode"),
           ("status", "parse status"))

_ANSWERS = """(SELECT run_id, game_id, seat, mode, trial, any_value(provider) AS provider,
    any_value(model) AS model, any_value(game_set) AS game_set,
    any_value(parse_status) AS parse_status, any_value(parse_detail) AS parse_detail,
    any_value(raw_text) AS raw_text, any_value(strategy) AS strategy,
    any_value(call_id) AS call_id,
    list({'opponent': opponent, 'y': opponent_strategy, 'value': value, 'regret': regret,
          'quality': quality} ORDER BY opponent) AS scores,
    game_id || '/' || seat || '/' || mode || '/t' || trial AS answer_id
  FROM bimatrix_trials GROUP BY run_id, game_id, seat, mode, trial)"""

_STRATA_SQL = f"""SELECT provider || ':' || model, game_set, seat, mode, parse_status, count(*)
FROM {_ANSWERS} GROUP BY ALL ORDER BY ALL"""

_SAMPLE_SQL = """SELECT r.*, g.payoff_row, g.payoff_col, g.num_eq, c.prompt_text
FROM ({ranked}) r
LEFT JOIN bimatrix_games g ON g.run_id = r.run_id AND g.game_id = r.game_id
LEFT JOIN calls c ON c.run_id = r.run_id AND c.call_id = r.call_id
ORDER BY r.provider, r.model, r.game_set, r.seat, r.mode, r.parse_status, r._rank"""


def _grid(rec: dict[str, Any]) -> dict[str, Any]:
    a, b = rec["payoff_row"] or [], rec["payoff_col"] or []
    cols = len(a[0]) if a else 0
    rows = [[f"row {i + 1}", *(f"({num(a[i][j])}, {num(b[i][j])})" for j in range(cols))]
            for i in range(len(a))]
    strategy = rec["strategy"]
    mark = []
    if rec["seat"] == "row" and strategy is not None and max(strategy) == 1.0:
        mark = [int(np.argmax(strategy))]
    return {"t": "grid", "label": f"payoffs (row, column); the model plays {rec['seat']}",
            "head": ["", *(f"col {j + 1}" for j in range(cols))], "rows": rows, "mark": mark}


def _has_calls(con: duckdb.DuckDBPyConnection) -> bool:
    names = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    names |= {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    return "calls" in names


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The bimatrix part of the viewer (see the module docstring)."""
    from distbench.games.bimatrix.prompts import prompt as make_prompt

    strata, chosen = sampled(con, options, _STRATA_SQL, _ANSWERS,
                             "provider, model, game_set, seat, mode, parse_status",
                             "s.answer_id", 900)
    sql = _SAMPLE_SQL.format(ranked=chosen)
    if not _has_calls(con):
        sql = sql.replace("LEFT JOIN calls c ON c.run_id = r.run_id AND c.call_id = r.call_id",
                          "").replace("c.prompt_text", "NULL AS prompt_text")
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    shared: dict[str, str] = {}
    items = []
    for row in result.fetchall():
        rec = dict(zip(names, row, strict=True))
        model = f"{rec['provider']}:{rec['model']}"
        status = rec["parse_status"] or "(none)"
        key = (model, rec["game_set"], rec["seat"], rec["mode"], status)
        strategy = rec["strategy"]
        answer = "none (invalid)" if strategy is None else \
            "[" + ", ".join(num(p, 3) for p in strategy) + "]"
        about = [["model", model], ["game", rec["game_id"]],
                 ["seat, mode, trial", f"{rec['seat']}, {rec['mode']}, trial {rec['trial']}"],
                 ["parse status", status + (f": {rec['parse_detail']}"
                                            if rec["parse_detail"] else "")],
                 ["strategy as parsed", answer], ["equilibria", num(rec["num_eq"])]]
        scores = [[s["opponent"], f"value {num(s['value'])}, regret {num(s['regret'])}, "
                   f"quality {num(s['quality'], 3)}"] for s in rec["scores"]]
        blocks: list[dict[str, Any]] = [
            {"t": "row", "blocks": [{"t": "kv", "rows": about}, _grid(rec),
                                    {"t": "kv", "rows": scores}]},
            {"t": "text", "label": "raw answer", "cls": "raw",
             "text": clip(rec["raw_text"], options.max_chars)},
        ]
        text, label = rec["prompt_text"], "prompt (calls.prompt_text)"
        if text is None and rec["payoff_row"] is not None and rec["mode"] != "logprob":
            text = make_prompt(np.asarray(rec["payoff_row"]), np.asarray(rec["payoff_col"]),
                               rec["seat"], rec["mode"], "chat")
            label = "prompt (rebuilt from the game, chat style: no call recorded)"
        if text is not None:
            blocks.append({"t": "text", "label": label, "cls": "prompt", "open": False,
                           "ref": share(shared, clip(text, options.max_chars))})
        items.append(ViewItem(key, rec["_rank"] - 1, f"{rec['answer_id']} · {model}", blocks))
    return ViewPart("bimatrix", "General-sum games: answers", "answers", FILTERS, strata, items,
                    shared, good=("ok",), note="one card per answer: the game, the answer as "
                    "parsed and its scores against each opponent, and the prompt")
