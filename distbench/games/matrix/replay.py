"""The matrix family's replays: a game's payoff matrix with the Nash equilibrium marked, then
each sampled trial's answer on it (the chosen row, or the mixed strategy), one step each.
Games are sampled per bucket (the replay page's game key)."""

from __future__ import annotations

import math
from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, grouped, replay_loop

_TRIAL_SQL = """
SELECT game_id, provider || ':' || model, mode, trial, decision, strategy, parse_status,
       nash_gap, raw_text
FROM trials WHERE bucket = ? AND game_id IN (SELECT unnest(?))
ORDER BY game_id, provider, model, mode, trial
"""
#: Trials shown per game at most (the steps after the first).
MAX_TRIALS = 40


def _clean(values: Any) -> Any:
    """Lists of floats as JSON can carry them (NaN and infinities become None)."""
    if values is None:
        return None
    if isinstance(values, (list, tuple)):
        return [_clean(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        return None
    return values


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` games per bucket, each with up to :data:`MAX_TRIALS` trials."""
    return replay_loop(con, family="matrix", package=__package__,
                       sample=("trials", "bucket", "game_id"), per_game=per_game, seed=seed,
                       fetch=lambda ids, bucket: _fetch(con, ids, bucket), build=_game)


def _fetch(con: duckdb.DuckDBPyConnection, ids: list[str], bucket: str) -> tuple[dict, dict]:
    """The games of ``ids`` in ``bucket`` (payoffs, Nash, seed) and their trials."""
    games = {row[0]: row[1:] for row in con.execute(
        "SELECT game_id, payoff, nash_row, nash_col, value, seed FROM games "
        "WHERE game_id IN (SELECT unnest(?)) AND bucket = ?", [ids, bucket]).fetchall()}
    return games, grouped(con, _TRIAL_SQL, [bucket, ids])


def _game(gid: str, fetched: tuple[dict, dict]) -> Replay:
    games, trials = fetched
    payoff, nash_row, nash_col, value, game_seed = games.get(gid, (None,) * 5)
    steps: list[dict[str, Any]] = [{"label": "the game: the model plays the rows; "
                                    "green outline: the Nash equilibrium's support"}]
    for model, mode, trial, decision, strategy, status, gap, raw in \
            trials.get(gid, [])[:MAX_TRIALS]:
        steps.append({"label": f"{model}, {mode} trial {trial}: {status or 'n/a'}",
                      "model": model, "mode": mode, "status": status,
                      "decision": decision, "strategy": _clean(strategy),
                      "gap": _clean(gap), "raw": (raw or "")[:600]})
    return Replay(gid, f"{gid} (seed {game_seed})",
                  {"payoff": _clean(payoff), "nash_row": _clean(nash_row),
                   "nash_col": _clean(nash_col), "value": _clean(value)}, steps)
