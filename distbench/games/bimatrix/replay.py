"""The bimatrix family's replays: the game's two payoff matrices in one table (row player's,
column player's payoff per cell), its pure equilibria outlined, then each sampled trial: the
model's answer in its seat and the opponent's strategy it faced, with the regret. Games are
sampled per game set (the replay page's game key)."""

from __future__ import annotations

from typing import Any

import duckdb

from distbench.report.replay import Replay, ReplayPart, asset, grouped, pick, records

#: Trials shown per game at most.
MAX_TRIALS = 40

_GAME_SQL = """
SELECT game_id, seed, payoff_row, payoff_col, eq_row, eq_col, eq_row_value, eq_col_value
FROM bimatrix_games WHERE game_id IN (SELECT unnest(?))
"""
_TRIAL_SQL = """
SELECT game_id, provider || ':' || model, seat, mode, trial, opponent, decision, strategy,
       opponent_strategy, parse_status, regret, raw_text
FROM bimatrix_trials WHERE game_id IN (SELECT unnest(?))
ORDER BY game_id, provider, model, seat, mode, trial, opponent
"""


def replay(con: duckdb.DuckDBPyConnection, per_game: int, seed: int) -> ReplayPart:
    """Up to ``per_game`` games per game set, each with up to :data:`MAX_TRIALS` trials."""
    chosen = pick(con, "bimatrix_trials", "game_set", "game_id", per_game, seed)
    part = ReplayPart("bimatrix", asset("distbench.games.bimatrix:replay.js"))
    for game_set, ids in chosen.items():
        games = records(con, _GAME_SQL, [ids])
        trials = grouped(con, _TRIAL_SQL, [ids])
        replays = []
        for gid in ids:
            g = games.get(gid)
            if g is None:
                continue
            steps: list[dict[str, Any]] = [{"label": "the game: cells hold (row payoff, column "
                                            "payoff); outlined: pure equilibria"}]
            for model, seat, mode, trial, opp, decision, strategy, opp_strategy, status, \
                    regret, raw in trials.get(gid, [])[:MAX_TRIALS]:
                steps.append({"label": f"{model} as {seat}, {mode} trial {trial} against {opp}: "
                              f"{status}", "model": model, "seat": seat, "decision": decision,
                              "strategy": strategy, "opponent": opp_strategy, "status": status,
                              "regret": regret, "raw": (raw or "")[:600]})
            replays.append(Replay(gid, f"{gid} (seed {g['seed']})",
                                  {k: g[k] for k in ("payoff_row", "payoff_col", "eq_row", "eq_col",
                                                     "eq_row_value", "eq_col_value")}, steps))
        part.games[game_set] = replays
    return part
