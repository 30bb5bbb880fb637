"""The openspiel family's replays: the board (tic-tac-toe, connect four: OpenSpiel's own
drawing of the state, as a grid) or the hands (poker: the cards and the pot, as each state
writes them) before every move, the move played with its regret against the reference, and the
returns at the end. The states are rebuilt with OpenSpiel from the stored chance outcomes and
actions. Matches are sampled per game string (the replay page's game key)."""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, replay_loop, units_and_steps

_MATCH_SQL = """
SELECT match_id, game, player_a, player_b, seat_a, returns, outcome_a, regret_a, reference,
       chance_outcomes, forfeit_seat, forfeit_status
FROM matches WHERE match_id IN (SELECT unnest(?))
"""
_MOVE_SQL = """
SELECT match_id, ply, seat, player_label, action, action_name, regret, best_value, action_value,
       parse_status, legal_actions, raw_text
FROM moves WHERE match_id IN (SELECT unnest(?)) ORDER BY match_id, ply
"""


def _drawing(state: Any) -> dict[str, Any]:
    """The state as OpenSpiel writes it: a grid when its lines are equal-length rows of
    cells (a board), else text (cards, pot, bets)."""
    text = str(state)
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and len({len(line) for line in lines}) == 1 and all(" " not in line for line in lines):
        return {"grid": lines}
    return {"text": text}


def _states(game_string: str, chance: list[int], actions: list[int | None]) -> list[dict] | None:
    """The drawing before each move and after the last (None without OpenSpiel)."""
    try:
        from distbench.games.openspiel.spiel import load_game

        state = load_game(game_string).new_initial_state()
    except ValueError:
        return None
    chance = list(chance)
    out = []

    def settle() -> None:
        while state.is_chance_node() and chance:
            state.apply_action(chance.pop(0))

    for action in actions:
        settle()
        out.append(_drawing(state))
        if action is None or state.is_terminal():
            return out
        state.apply_action(int(action))
    settle()
    out.append(_drawing(state))
    return out


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` matches per game, a step per move and one for the end."""
    return replay_loop(con, family="openspiel", package=__package__,
                       sample=("matches", "game", "match_id"), per_game=per_game, seed=seed,
                       fetch=units_and_steps(con, _MATCH_SQL, _MOVE_SQL), build=_match)


def _match(mid: str, fetched: tuple[dict, dict]) -> Replay:
    matches, moves = fetched
    m = matches[mid]
    played = moves.get(mid, [])
    drawings = _states(m["game"], m["chance_outcomes"] or [], [mv[3] for mv in played])
    steps: list[dict[str, Any]] = []
    for i, (ply, seat, label, _, name, regret, best, value, status, legal, raw) in \
            enumerate(played):
        steps.append({"label": f"move {ply + 1}: seat {seat} ({label}) plays "
                      f"{name or 'nothing legal'} ({status})",
                      "state": drawings[i] if drawings and i < len(drawings) else None,
                      "move": name, "regret": regret, "best": best, "value": value,
                      "legal": legal, "raw": (raw or "")[:600], "status": status})
    end = (f"end: returns {m['returns']}" if m["returns"] is not None else
           f"end: seat {m['forfeit_seat']} forfeits ({m['forfeit_status']})")
    steps.append({"label": end, "state": drawings[-1] if drawings else None,
                  "outcome_a": m["outcome_a"], "regret_a": m["regret_a"]})
    return Replay(mid, f"{mid}: {m['player_a']} (seat {m['seat_a']}) vs "
                  f"{m['player_b']}", {"reference": m["reference"],
                                       "player_a": m["player_a"]}, steps)
