"""The ``gama`` family's part of ``distbench view``: sampled games, round by round.

Strata: game × table × status. Each card shows the game's parameters and scores, a round chart
(one line per round: the round's key number as a bar against the game's scale: guesses' mean
against the target, the go share against the capacity, the pot, the cheap share, the winning
bid, who shot whom, the pirates' plan and accept share) and every move of the first rounds with
its status, and the raw text of the first invalid answer.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from distbench.report.viewer import ViewItem, ViewOptions, ViewPart, clip, num, sampled
from distbench.store.catalog import cursor_groups, cursor_records

FILTERS = (("game", "game"), ("model", "table"), ("status", "game status"))
_STRATA_SQL = "SELECT game, model, status, count(*) FROM gama_games GROUP BY ALL ORDER BY ALL"
_ROUNDS_SQL = """SELECT r.run_id, r.game_id, r.round, r.mean_answer, r.target, r.winners,
       r.survivors, r.aggregates_json
FROM gama_rounds r JOIN ({ranked}) g ON g.run_id = r.run_id AND g.game_id = r.game_id
ORDER BY r.run_id, r.game_id, r.round"""
_MOVES_SQL = """SELECT m.run_id, m.game_id, m.round, m.seat, m.player, m.answer, m.status,
       m.answer_raw, m.payoff
FROM gama_moves m JOIN ({ranked}) g ON g.run_id = m.run_id AND g.game_id = m.game_id
ORDER BY m.run_id, m.game_id, m.round, m.seat"""
BAR = 24
"""Width of a round's bar in the chart (characters)."""


def _bar(value: float | None, scale: float) -> str:
    if value is None or scale <= 0:
        return ""
    filled = max(0, min(BAR, round(BAR * float(value) / scale)))
    return "#" * filled + "." * (BAR - filled)


def round_line(game: str, params: dict[str, Any], row: tuple) -> list[str]:
    """One line of the round chart: round, what happened, a bar of the key number."""
    _, mean, target, winners, survivors, agg = row
    rec = json.loads(agg)
    if game == "guessing":
        scale = float(params.get("max", 100))
        return [f"mean {num(mean)} -> target {num(target)}", _bar(target, scale)]
    if game == "bar":
        return [f"go share {num(target, 3)} (capacity {params.get('ratio')})", _bar(target, 1.0)]
    if game == "dollar":
        return [f"asked {num(target)} of {params.get('golds')}",
                _bar(target, 2.0 * float(params.get("golds", 100)))]
    if game == "goods":
        pot = float(params.get("tokens", 20)) * float(params.get("players", 10))
        return [f"pot {num(target)}", _bar(target, pot)]
    if game == "diner":
        return [f"cheap share {num(target, 3)}", _bar(target, 1.0)]
    if game == "auction":
        return [f"winning bid {num(target)} by {rec.get('bid_winner')}",
                _bar(target, float(params.get("valuation_max", 200)))]
    if game == "battle":
        who = rec.get("player_shooting")
        hit = "hit" if rec.get("out") else "missed"
        shot = rec.get("shot_player")
        what = "into the air" if shot in (None, "null") else f"at {shot}, {hit}"
        return [f"player {who} shot {what}; {len(survivors)} left", _bar(len(survivors),
                                                                          float(params.get("players", 10)))]
    if game == "pirate":
        return [f"plan {rec.get('gold_distribution')}; accept share {num(target, 3)}",
                _bar(target, 1.0)]
    return ["", ""]


def view(con: duckdb.DuckDBPyConnection, options: ViewOptions) -> ViewPart:
    """The gama part of the viewer (see the module docstring)."""
    strata, chosen = sampled(con, options, _STRATA_SQL, "gama_games", "game, model, status",
                             "s.game_id", 3000)
    games = cursor_records(con.execute(f"{chosen} ORDER BY game, model, status, _rank"))
    rounds = cursor_groups(con.execute(_ROUNDS_SQL.format(ranked=chosen)), key=2)
    moves = cursor_groups(con.execute(_MOVES_SQL.format(ranked=chosen)), key=2)
    items = []
    for g in games:
        key = (g["run_id"], g["game_id"])
        params = json.loads(g["params_json"])
        about = [["game", f"{g['game']} {g['variant']}".strip()], ["table", g["model"]],
                 ["rounds", str(g["rounds"])], ["status", g["status"]],
                 ["GAMA score", num(g["gama_score"])],
                 ["distance to eq.", num(g["equilibrium_distance"])],
                 ["invalid answers", str(g["invalid_answers"])]]
        chart = [[str(r[0]), *round_line(g["game"], params, r)] for r in rounds.get(key, [])]
        first = [m for m in moves.get(key, []) if m[0] <= 2]
        blocks: list[dict[str, Any]] = [
            {"t": "kv", "rows": about},
            {"t": "grid", "label": "round chart", "head": ["round", "outcome", "scale"],
             "rows": chart},
            {"t": "grid", "label": "moves of rounds 1-2",
             "head": ["round", "seat", "player", "answer", "status", "payoff"],
             "rows": [[str(m[0]), str(m[1]), m[2], m[3] or "-", m[4], num(m[6])] for m in first]},
        ]
        bad = [m for m in moves.get(key, []) if m[4] != "ok"]
        if bad:
            blocks.append({"t": "text", "label": f"raw answer of seat {bad[0][1]}, round "
                           f"{bad[0][0]}", "cls": "raw", "text": clip(bad[0][5], options.max_chars)})
        items.append(ViewItem((g["game"], g["model"], g["status"]), g["_rank"] - 1,
                              f"{g['game_id']} · {g['model']}", blocks))
    return ViewPart("gama", "GAMA-Bench games", "games", FILTERS, strata, items, good=("ok",),
                    note="one card per game: a round chart and the first rounds' moves")
