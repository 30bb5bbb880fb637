"""The fog-of-war family's part of ``distbench view``: sampled games, turn by turn.

Strata: pairing (``agent_a vs agent_b``) × scouting (``accuracy 0.7`` or ``off``) × status,
counted over every game. A game's status is the first invalid report status it had
(``bad_beliefs``, ``no_json``, ``call_failed``...; alphabetically first when several), else
``ok``. Each sampled game shows its outcome and both agents' belief scores, then every turn:
each player's orders, beliefs over the enemy's forces (with the true powers), predicted and
actual enemy actions and objective, confidence, the Brier score of the beliefs and the Brier
score and log loss of the action and objective distributions, the model's raw answer and
prompt (model agents), and the engine's events. All the SQL of the fog viewer is in this module.
"""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.viewer import ViewItem, ViewOptions, ViewPart, clip, num, sampled
from distbench.store.catalog import cursor_records

FILTERS = (("pairing", "pairing (agent a vs agent b)"), ("scouting", "scouting"),
           ("status", "report status"))

_GAMES = """(SELECT g.*, g.agent_a || ' vs ' || g.agent_b AS pairing,
    CASE WHEN g.scouting THEN 'accuracy ' || CAST(round(g.scout_accuracy, 3) AS VARCHAR)
         ELSE 'off' END AS scouting_label,
    coalesce(st.status, 'ok') AS status
  FROM fog_games g LEFT JOIN (
    SELECT run_id, shard_id, game_id, min(report_status) FILTER (WHERE report_status <> 'ok') AS status
    FROM fog_reports GROUP BY ALL) st USING (run_id, shard_id, game_id))"""

_STRATA_SQL = (f"SELECT pairing, scouting_label, status, count(*) FROM {_GAMES} "
               "GROUP BY ALL ORDER BY ALL")

_SAMPLE = "WITH chosen AS ({ranked}) "

_GAMES_SQL = _SAMPLE + "SELECT * FROM chosen ORDER BY pairing, scouting_label, status, _rank"

_REPORTS_SQL = _SAMPLE + """SELECT r.run_id, r.shard_id, r.game_id, r.turn, r.player, r.agent,
       r.beliefs, r.true_powers, r.enemy_alive, r.predicted_actions, r.actual_actions,
       r.predicted_objective, r.actual_objective, r.orders, r.confidence, r.brier,
       r.action_brier, r.action_log_loss, r.objective_brier, r.objective_log_loss,
       r.report_status, r.raw_text, c.prompt_text
FROM fog_reports r JOIN chosen g USING (run_id, shard_id, game_id)
LEFT JOIN calls c ON c.run_id = r.run_id AND c.call_id = r.call_id
ORDER BY r.run_id, r.shard_id, r.game_id, r.turn, r.player"""

_EVENTS_SQL = _SAMPLE + """SELECT e.run_id, e.shard_id, e.game_id, e.turn, e.seq, e.kind,
       e.player, e.force, e.details
FROM fog_events e JOIN chosen g USING (run_id, shard_id, game_id)
ORDER BY e.run_id, e.shard_id, e.game_id, e.turn, e.seq"""


def _beliefs(rec: dict[str, Any]) -> str:
    beliefs = rec["beliefs"]
    if beliefs is None:
        return "none (invalid)"
    alive = rec["enemy_alive"] or []
    truth = rec["true_powers"] or []
    lines = []
    for k, dist in enumerate(beliefs):
        if k < len(alive) and not alive[k]:
            lines.append(f"e{k}: dead")
            continue
        probs = " ".join(f"{p:.2f}" for p in dist)
        true = f" (true {truth[k]})" if k < len(truth) else ""
        lines.append(f"e{k}: p(1..5) = {probs}{true}")
    return "\n".join(lines)


def _actions(rec: dict[str, Any]) -> str:
    pred = rec["predicted_actions"] or []
    actual = rec["actual_actions"] or []
    return "\n".join(f"e{k}: {p or '-'} / {a or '-'}"
                     for k, (p, a) in enumerate(zip(pred, actual, strict=False)))


def _score(brier: float | None, log_loss: float | None) -> str:
    """A prediction's Brier score and log loss, or ``-`` when the report made none."""
    if brier is None and log_loss is None:
        return "-"
    return f"{num(brier, 3)}, {num(log_loss, 3)}"


def _turn_blocks(reports: list[dict[str, Any]], events: list[tuple], max_chars: int
                 ) -> list[dict[str, Any]]:
    rows = []
    texts = []
    for rec in reports:
        orders = "\n".join(f"f{k}: {o}" for k, o in enumerate(rec["orders"] or []))
        objective = f"{rec['predicted_objective'] or '-'} / {rec['actual_objective'] or '-'}"
        rows.append([f"{rec['player']} ({rec['agent']})", rec["report_status"], orders,
                     _beliefs(rec), _actions(rec), objective,
                     num(rec["confidence"], 3), num(rec["brier"], 3),
                     _score(rec["action_brier"], rec["action_log_loss"]),
                     _score(rec["objective_brier"], rec["objective_log_loss"])])
        if rec["raw_text"] is not None:
            texts.append({"t": "text", "cls": "raw", "label": f"{rec['player']} ({rec['agent']}): "
                          "raw answer", "text": clip(rec["raw_text"], max_chars)})
        if rec["prompt_text"] is not None:
            texts.append({"t": "text", "cls": "prompt", "open": False,
                          "label": f"{rec['player']} ({rec['agent']}): prompt",
                          "text": clip(rec["prompt_text"], max_chars)})
    out: list[dict[str, Any]] = []
    if rows:
        bad = [i for i, r in enumerate(rows) if r[1] != "ok"]
        out.append({"t": "grid", "head": ["player", "status", "orders", "beliefs (true power)",
                                          "predicted / actual enemy action",
                                          "predicted / actual objective", "confidence",
                                          "Brier (powers)", "actions: Brier, log loss",
                                          "objective: Brier, log loss"],
                    "rows": rows, "mark": bad})
    out += texts
    if events:
        out.append({"t": "grid", "label": "events", "head": ["seq", "kind", "player", "force",
                                                              "details"],
                    "rows": [[str(seq), kind, player or "-", "-" if force is None else str(force), details]
                             for seq, kind, player, force, details in events]})
    return out


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The fog part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, _GAMES, "pairing, scouting_label, status",
                             "s.shard_id || '/' || s.game_id", 3000)
    games = cursor_records(con.execute(_GAMES_SQL.format(ranked=chosen)))
    result = con.execute(_REPORTS_SQL.format(ranked=chosen))
    rnames = [d[0] for d in result.description]
    reports: dict[tuple, dict[int, list[dict[str, Any]]]] = {}
    for row in result.fetchall():
        rec = dict(zip(rnames, row, strict=True))
        reports.setdefault(row[:3], {}).setdefault(rec["turn"], []).append(rec)
    events: dict[tuple, dict[int, list[tuple]]] = {}
    for row in con.execute(_EVENTS_SQL.format(ranked=chosen)).fetchall():
        events.setdefault(row[:3], {}).setdefault(row[3], []).append(row[4:])
    items = []
    for g in games:
        gid = (g["run_id"], g["shard_id"], g["game_id"])
        key = (g["pairing"], g["scouting_label"], g["status"])
        about = [["game", f"{g['game_id']} (seed {g['seed']})"],
                 ["agents a, b", f"{g['agent_a']}, {g['agent_b']}"],
                 ["winner", f"{g['winner'] or 'none'} after {g['turns']} turns "
                  f"({g['end_reason']})"],
                 ["board, forces, max turns", f"{g['board_size']}, {g['num_forces']}, "
                  f"{g['max_turns']}"],
                 ["scouting", g["scouting_label"]]]
        per_agent = [[side, num(g[f"surviving_power_{side}"]), num(g[f"survivors_{side}"]),
                      num(g[f"brier_{side}"], 3), num(g[f"log_loss_{side}"], 3),
                      num(g[f"calibration_error_{side}"], 3), num(g[f"tom_delta_{side}"], 3),
                      f"{num(g[f'valid_reports_{side}'])}/{num(g[f'reports_{side}'])}"]
                     for side in ("a", "b")]
        blocks: list[dict[str, Any]] = [
            {"t": "row", "blocks": [
                {"t": "kv", "rows": about},
                {"t": "grid", "label": "per agent", "head": [
                    "", "surviving power", "survivors", "Brier", "log loss", "calibration err.",
                    "ToM delta", "valid reports"], "rows": per_agent}]}]
        turns = reports.get(gid, {})
        evs = events.get(gid, {})
        for turn in sorted(set(turns) | set(evs)):
            blocks.append({"t": "h", "text": f"turn {turn}"})
            blocks += _turn_blocks(turns.get(turn, []), evs.get(turn, []), options.max_chars)
        title = f"{g['game_id']} · {g['pairing']} · winner {g['winner'] or 'none'}"
        items.append(ViewItem(key, g["_rank"] - 1, title, blocks))
    return ViewPart("fog", "Fog of war: games", "games", FILTERS, strata, items,
                    good=("ok",), note="one card per game: the outcome, then every turn: each "
                    "player's orders, beliefs (with the true powers), predictions and the "
                    "engine's events")
