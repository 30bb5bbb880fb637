"""The gama family's replays: a round chart per game, stepping round by round. Each round
shows every seat's answer as the game reads it (guesses against the 2/3 target, the go share
against the capacity, bids and their sum, contributions and the pot, costly or cheap dishes,
bids against valuations and the winner, who shot whom and who survives, the proposer's plan and
the votes) beside the history of the round's key number so far, and the raw text of any
invalid answer (a round an invalid answer ended is a step of its own); the end shows each
seat's total and rank. Games are sampled per game and mode (the replay page's game key)."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, grouped, records, replay_loop

_KEY = "game || CASE WHEN variant = '' THEN '' ELSE ' (' || variant || ')' END"
_GAME_SQL = """
SELECT game_id, game, variant, params_json, players, model, gama_score, equilibrium_distance,
       invalid_answers, status, detail
FROM gama_games WHERE game_id IN (SELECT unnest(?))
"""
_ROUND_SQL = """
SELECT game_id, round, actors, aggregates_json, mean_answer, target, winners, survivors,
       round_score
FROM gama_rounds WHERE game_id IN (SELECT unnest(?)) ORDER BY game_id, round
"""
_MOVE_SQL = """
SELECT game_id, round, seat, role, answer, answer_number, status, payoff,
       CASE WHEN status <> 'ok' THEN left(answer_raw, 400) END AS raw
FROM gama_moves WHERE game_id IN (SELECT unnest(?)) ORDER BY game_id, round, seat
"""
_PLAYER_SQL = """
SELECT game_id, seat, player, total_payoff, survived, rank
FROM gama_players WHERE game_id IN (SELECT unnest(?)) ORDER BY game_id, seat
"""
ROUND_FIELDS = ("round", "actors", "aggregates_json", "mean_answer", "target", "winners",
                "survivors", "round_score")
"""The ``gama_rounds`` columns each round's step carries (its ``record``), in this order."""


def _n(x: Any) -> str:
    """A number as a caption writes it (no trailing ``.0``; n/a for NULL)."""
    if x is None:
        return "n/a"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _seats(seats: list[Any]) -> str:
    return ", ".join(str(s) for s in seats) or "none"


def caption(game: str, params: dict[str, Any], rec: dict[str, Any]) -> str:
    """One line saying what happened in a round (``rec``: the round's stored columns)."""
    agg = json.loads(rec["aggregates_json"] or "{}")
    t, target, winners = rec["round"], rec["target"], rec["winners"] or []
    if game == "guessing":
        return (f"round {t}: mean {_n(rec['mean_answer'])}, target {_n(target)} "
                f"({params.get('ratio_str', 'ratio')} of the mean); closest: seat {_seats(winners)}")
    if game == "bar":
        return (f"round {t}: {_n(agg.get('go_num'))} go (share {_n(target)}) against capacity "
                f"{_n(params.get('ratio'))}: {agg.get('winner', '?')} was the better choice")
    if game == "dollar":
        golds = params.get("golds", 100)
        fits = target is not None and target <= golds
        return (f"round {t}: the bids sum to {_n(target)} of {golds} golds: "
                f"{'each gets their bid' if fits else 'over the total, nobody gets anything'}")
    if game == "goods":
        return (f"round {t}: {_n(target)} tokens in the pot, multiplied by "
                f"{_n(params.get('multiplier'))} and shared by all")
    if game == "diner":
        return (f"round {t}: {_n(agg.get('cheap_player'))} cheap, the rest costly "
                f"(cheap share {_n(target)}); each pays {_n(agg.get('avg_cost'))}")
    if game == "auction":
        who = str(agg.get("bid_winner", "nobody")).replace("player_", "seat ")
        return (f"round {t}: {who} wins with {_n(target)}, pays "
                f"{_n(agg.get('bid_winner_payment'))}")
    if game == "battle":
        shot = agg.get("shot_player")
        what = ("shoots into the air" if shot in (None, "null") else
                f"shoots seat {shot}: {'hit, out' if agg.get('out') else 'missed'}")
        return (f"round {t}: seat {agg.get('player_shooting')} {what}; "
                f"{len(rec['survivors'] or [])} left")
    if game == "pirate":
        actors = rec["actors"] or []
        passed = bool(winners)
        return (f"proposal {t} by seat {actors[0] if actors else '?'}: accept share "
                f"{_n(target)}, {'passes' if passed else 'fails'}")
    return f"round {t}"


def _steps(g: dict[str, Any], params: dict[str, Any], rounds: list[Any], moves: list[Any],
           table: list[list[Any]]) -> list[dict[str, Any]]:
    """A game's steps: a step per round, one per round an invalid answer ended, the end."""
    by_round: dict[int, list[list[Any]]] = {}
    for m in moves:
        by_round.setdefault(m[0], []).append(list(m[1:]))
    steps: list[dict[str, Any]] = []
    for row in rounds:
        rec = dict(zip(ROUND_FIELDS, row, strict=True))
        steps.append({"label": caption(g["game"], params, rec), "record": rec,
                      "agg": json.loads(rec["aggregates_json"] or "{}"),
                      "moves": by_round.pop(rec["round"], [])})
    for t, left in sorted(by_round.items()):  # a round an invalid answer ended
        bad = [m for m in left if m[4] != "ok"]
        steps.append({"label": f"round {t}: not played out: "
                      + ", ".join(f"seat {m[0]} answered invalidly ({m[4]})" for m in bad),
                      "round": t, "moves": left})
    steps.append({"label": f"end ({g['status']}): GAMA score {_n(g['gama_score'])}"
                  + (f"; {g['detail']}" if g["detail"] else ""), "end": True,
                  "seats": table, "score": g["gama_score"],
                  "distance": g["equilibrium_distance"], "invalid": g["invalid_answers"]})
    return steps


def _build(gid: str, fetched: tuple[Any, ...]) -> Replay:
    games, rounds, moves, seats = fetched
    g = games[gid]
    params = json.loads(g["params_json"] or "{}")
    table = [list(s) for s in seats.get(gid, [])]
    steps = _steps(g, params, rounds.get(gid, []), moves.get(gid, []), table)
    return Replay(gid, f"{gid}: {g['model']}",
                  {"game": g["game"], "variant": g["variant"], "params": params,
                   "players": g["players"], "seats": [s[1] for s in table]}, steps)


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` games per game and mode, a step per round and one for the end."""

    def fetch(ids: list[str], key: str) -> tuple[Any, ...]:
        return (records(con, _GAME_SQL, [ids]), grouped(con, _ROUND_SQL, [ids]),
                grouped(con, _MOVE_SQL, [ids]), grouped(con, _PLAYER_SQL, [ids]))

    return replay_loop(con, family="gama", package="distbench.games.gama",
                       sample=("gama_games", _KEY, "game_id"), per_game=per_game, seed=seed,
                       fetch=fetch, build=_build)
