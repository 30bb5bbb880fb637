"""The negotiation family's part of ``distbench view``: sampled episodes, the whole dialogue.

Strata: pairing (``player_a vs player_b``, by seat) × mode × language × outcome, counted over
every episode. The outcome is the episode's parse status: ``deal``, ``no deal`` (conflicting
proposals) or ``aborted: <reason>`` (a malformed proposal, an unknown item, a failed call...:
what a parse failure becomes here). Each sampled episode shows the items with both players'
values and proposals, the scores, and every turn in order (player, kind, raw text, parse status
and detail, the proposal as parsed). All the SQL of the negotiation viewer is in this module.
"""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.viewer import ViewItem, ViewOptions, ViewPart, clip, num, sampled
from distbench.store.catalog import cursor_groups, cursor_records

FILTERS = (("pairing", "pairing (seat A vs seat B)"), ("mode", "mode"), ("lang", "language"),
           ("status", "outcome (parse failures abort)"))

_EPISODES = """(SELECT *, player_a || ' vs ' || player_b AS pairing,
    CASE WHEN aborted THEN 'aborted: ' || coalesce(abort_reason, '?')
         WHEN success THEN 'deal' ELSE 'no deal' END AS outcome FROM episodes)"""

_STRATA_SQL = f"SELECT pairing, mode, lang, outcome, count(*) FROM {_EPISODES} GROUP BY ALL ORDER BY ALL"

_SAMPLE = "WITH chosen AS ({ranked}) "

_EPISODES_SQL = _SAMPLE + "SELECT * FROM chosen ORDER BY pairing, mode, lang, outcome, _rank"

_TURNS_SQL = _SAMPLE + """SELECT t.run_id, t.episode_id, t.turn, t.player, t.player_label, t.kind,
       t.raw_text, t.parse_status, t.parse_detail, t.proposal
FROM turns t JOIN chosen c ON c.run_id = t.run_id AND c.episode_id = t.episode_id
ORDER BY t.run_id, t.episode_id, t.turn"""

#: Turn statuses that are not failures.
GOOD_TURNS = ("message", "proposal")


def _proposal(values: list[int] | None, items: list[str]) -> str:
    if values is None:
        return "none"
    return ", ".join(f"{item}: {n}" for n, item in zip(values, items, strict=False))


def _items_grid(rec: dict[str, Any]) -> dict[str, Any]:
    items = list(rec["item_types"] or [])

    def cells(values: list[int] | None) -> list[str]:
        return [num(v) for v in values] if values is not None else ["-"] * len(items)

    rows = [["count", *cells(rec["counts"])],
            [f"value to A ({rec['player_a']})", *cells(rec["values_a"])],
            [f"value to B ({rec['player_b']})", *cells(rec["values_b"])],
            ["A's proposal (keeps)", *cells(rec["proposal_a"])],
            ["B's proposal (keeps)", *cells(rec["proposal_b"])]]
    return {"t": "grid", "label": "items", "head": ["", *items], "rows": rows}


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The negotiation part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, _EPISODES, "pairing, mode, lang, outcome",
                             "s.episode_id", 1500)
    episodes = cursor_records(con.execute(_EPISODES_SQL.format(ranked=chosen)))
    turns = cursor_groups(con.execute(_TURNS_SQL.format(ranked=chosen)), key=2)
    items = []
    for rec in episodes:
        key = (rec["pairing"], rec["mode"] or "(none)", rec["lang"] or "(none)", rec["outcome"])
        item_types = list(rec["item_types"] or [])
        about = [["episode", rec["episode_id"]],
                 ["instance", f"{rec['instance_id']} (seed {rec['seed']})"],
                 ["mode, language", f"{rec['mode']}, {rec['lang']}"],
                 ["seat A, seat B", f"{rec['player_a']}, {rec['player_b']} (seat order "
                  f"{rec['seat_order']})"],
                 ["outcome", rec["outcome"] + (f" (by {rec['abort_player']})"
                                               if rec["abort_player"] else "")],
                 ["turns, calls", f"{rec['num_turns']} of at most {rec['max_messages']} "
                  f"messages; {rec['num_calls']} calls"]]
        scores = [["score A, B", f"{num(rec['score_a'])}, {num(rec['score_b'])} (best "
                   f"{num(rec['max_score_a'])}, {num(rec['max_score_b'])})"],
                  ["main_score", num(rec["main_score"])],
                  ["comp_score", num(rec["comp_score"])],
                  ["Pareto optimal", num(rec["pareto_optimal"])],
                  ["max Pareto improvement", num(rec["max_pareto_improvement"])],
                  ["sum score ratio", num(rec["sum_score_ratio"])]]
        blocks: list[dict[str, Any]] = [
            {"t": "row", "blocks": [{"t": "kv", "rows": about}, _items_grid(rec),
                                    {"t": "kv", "rows": scores}]},
            {"t": "h", "text": "dialogue"},
        ]
        for turn, player, label, kind, raw, status, detail, proposal in turns.get(
                (rec["run_id"], rec["episode_id"]), []):
            meta = f"turn {turn} · {kind} · {status}" + (f": {detail}" if detail else "")
            blocks.append({"t": "msg", "who": f"{(player or '?').upper()} ({label})",
                           "side": player, "meta": meta, "text": clip(raw, options.max_chars),
                           "bad": status not in GOOD_TURNS,
                           "extra": (f"proposal as parsed: {_proposal(proposal, item_types)}"
                                     if proposal is not None else None)})
        title = f"{rec['episode_id']} · {rec['pairing']}"
        items.append(ViewItem(key, rec["_rank"] - 1, title, blocks))
    return ViewPart("negotiation", "Negotiation: episodes", "episodes", FILTERS, strata, items,
                    good=("deal", "no deal"), note="one card per episode: items, values and "
                    "proposals, scores, then every turn in order (the proposal as parsed under "
                    "each message)")
