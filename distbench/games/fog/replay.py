"""The fog-of-war family's replays: the board turn by turn as each player sees it (its own
forces with their powers; the enemy's positions with hidden powers, shown as the player's
belief), the turn's scout reports and fights, and each agent's beliefs and orders.

The store keeps no positions, so the board is rebuilt: the game's deployment streams and
engine stream come from its (seed, game index) as the runner seeds them, and the stored orders
are played again through the rules. The rebuilt game is checked against the stored one
(powers, sovereigns, turns, winner); when they differ (a user's agent deploying its own way,
rules not at their defaults) the replay says so and shows reports and events without a board.
Games are sampled per pairing (the replay page's game key)."""

from __future__ import annotations

import json
from typing import Any

import duckdb
import numpy as np

from distbench.games.fog.rules import Game, Order, Rules, random_deployment
from distbench.report.replay import Replay, ReplayPart, records, replay_loop

_GAME_SQL = """
SELECT game_id, seed, game_index, agent_a, agent_b, scout_accuracy, scouting, board_size,
       num_forces, max_turns, winner, turns, end_reason, power_a, power_b, sovereign_a,
       sovereign_b
FROM fog_games WHERE game_id IN (SELECT unnest(?))
"""
_REPORT_SQL = """
SELECT game_id, turn, player, beliefs, orders, report_status, brier
FROM fog_reports WHERE game_id IN (SELECT unnest(?)) ORDER BY game_id, turn, player
"""
_EVENT_SQL = """
SELECT game_id, turn, kind, player, force, details
FROM fog_events WHERE game_id IN (SELECT unnest(?)) ORDER BY game_id, seq
"""


def _order(text: str) -> Order:
    kind, _, arg = text.partition(" ")
    if kind == "scout":
        return kind, int(arg.lstrip("E"))
    return kind, (arg or None)


def rebuild(g: dict[str, Any], orders: dict[tuple[int, str], list[str]]) -> list[dict] | None:
    """Each turn's board (positions and alive flags of both sides, before the turn's orders,
    and after the last), or None when the rebuilt game does not match the stored one."""
    from distbench.games.fog.agents import make_agent

    rules = Rules(board_size=g["board_size"], num_forces=g["num_forces"],
                  max_turns=g["max_turns"], scout_accuracy=g["scout_accuracy"],
                  scouting=g["scouting"])
    engine, *seats = (np.random.default_rng(s) for s in
                      np.random.SeedSequence([g["seed"], g["game_index"]]).spawn(3))
    deps = []
    for p, name in enumerate((g["agent_a"], g["agent_b"])):
        try:
            dep = make_agent(name).deploy(p, rules, seats[p])
        except Exception:  # a model or a user's agent: the default deployment
            dep = random_deployment(rules.board_size, rules.num_forces, seats[p])
        deps.append(dep)
    if ([list(d.powers) for d in deps] != [list(g["power_a"]), list(g["power_b"])]
            or [d.sovereign for d in deps] != [g["sovereign_a"], g["sovereign_b"]]):
        return None
    game = Game(rules, (deps[0], deps[1]), engine)
    boards = []
    try:
        for turn in range(1, g["turns"] + 1):
            boards.append({"pos": [[list(x) for x in game.pos[p]] for p in (0, 1)],
                           "alive": [list(game.alive[p]) for p in (0, 1)]})
            game.step(tuple([_order(o) for o in orders.get((turn, side), [])]
                            for side in "ab"))
    except (ValueError, KeyError):
        return None
    boards.append({"pos": [[list(x) for x in game.pos[p]] for p in (0, 1)],
                   "alive": [list(game.alive[p]) for p in (0, 1)]})
    if game.turn != g["turns"] or (game.winner or "draw") != g["winner"]:
        return None
    return boards


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` games per pairing, a step per turn and one for the end."""
    return replay_loop(con, family="fog", package=__package__,
                       sample=("fog_games", "agent_a || ' vs ' || agent_b", "game_id"),
                       per_game=per_game, seed=seed, fetch=lambda ids, _: _fetch(con, ids),
                       build=_game)


def _fetch(con: duckdb.DuckDBPyConnection, ids: list[str]) -> tuple[dict, dict, dict]:
    """The games of ``ids``, their reports by (turn, player) and their events by turn."""
    games = records(con, _GAME_SQL, [ids])
    reports: dict[str, dict[tuple[int, str], tuple]] = {}
    for gid, turn, player, beliefs, orders, status, brier in con.execute(
            _REPORT_SQL, [ids]).fetchall():
        reports.setdefault(gid, {})[(turn, player)] = (beliefs, orders, status, brier)
    events: dict[str, dict[int, list[str]]] = {}
    for gid, turn, kind, player, force, details in con.execute(_EVENT_SQL, [ids]).fetchall():
        who = "" if player is None else f" {player}{'' if force is None else force + 1}"
        try:
            info = ", ".join(f"{k} {v}" for k, v in json.loads(details or "{}").items())
        except (ValueError, AttributeError):
            info = details or ""
        events.setdefault(gid, {}).setdefault(turn, []).append(f"{kind}{who}: {info}")
    return games, reports, events


def _game(gid: str, fetched: tuple[dict, dict, dict]) -> Replay:
    games, reports, events = fetched
    g = games[gid]
    rep = reports.get(gid, {})
    boards = rebuild(g, {key: list(v[1] or []) for key, v in rep.items()})
    steps = []
    for turn in range(1, g["turns"] + 2):
        last = turn > g["turns"]
        step: dict[str, Any] = {
            "label": (f"end: winner {g['winner']} ({g['end_reason']})" if last else
                      f"turn {turn}: the board before its orders (each side's view); the events they led to"),
            "board": boards[turn - 1] if boards else None,
            "events": events.get(gid, {}).get(turn - 1 if last else turn, []),
            "sides": []}
        if not last:
            for side in "ab":
                beliefs, orders, status, brier = rep.get((turn, side), (None,) * 4)
                step["sides"].append({"beliefs": beliefs, "orders": orders,
                                      "status": status, "brier": brier})
        steps.append(step)
    static = {"n": g["board_size"], "powers": [g["power_a"], g["power_b"]],
              "sovereigns": [g["sovereign_a"], g["sovereign_b"]],
              "agents": [g["agent_a"], g["agent_b"]], "rebuilt": boards is not None}
    return Replay(gid, gid, static, steps)
