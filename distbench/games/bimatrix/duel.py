"""Plays a tournament pairing's shard of the bimatrix family: two players of any kind (models,
the scripted ``eq``, ``uniform``, ``maxmin`` and ``class``) in the row and column seats of the
same games, both seat orders; one batch of calls per model and seat. Also the family's runner
entry point (:func:`run_shard`), which hands the shards of ordinary runs to
:func:`distbench.games.bimatrix.runner.run_shard` unchanged.

A model's answer in a seat is a function of (llm seed, game, seat, mode) alone: the request
seed is the one an ordinary run gives its trial 0 (``derive_seed(llm_seed, game_id, seat, mode,
0, "")``), and the prompt does not name the opponent (the players move at once), so a model
answers a game the same against every opponent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.base import ShardResult, derive_seed, seat_label
from distbench.games.bimatrix.instances import game_id, generate, get_set
from distbench.games.bimatrix.pairing import BimatrixPairShard
from distbench.games.bimatrix.plan import NAME
from distbench.games.bimatrix.prompts import answer_policy, prompt
from distbench.games.bimatrix.runner import run_shard as run_trial_shard
from distbench.games.bimatrix.schema import BIMATRIX_DUELS
from distbench.kernels.bimatrix import solve_bimatrix
from distbench.llm.base import Backend, BackendSpec, Request
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

OK = ParseStatus.OK.value
FAILED = ParseStatus.CALL_FAILED.value
SEATS = ("row", "col")


def run_shard(shard: Any, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """The family's runner: a tournament pairing's shard here, any other to :mod:`.runner`."""
    if isinstance(shard, BimatrixPairShard):
        return run_pair_shard(shard, backends)
    return run_trial_shard(shard, backends)


def scripted_strategy(name: str, seat: str, g: int, sol: Any, k: int) -> tuple[np.ndarray, str]:
    """(strategy over the seat's ``k`` actions, a note) of a scripted player in game ``g``."""
    if name == "uniform":
        return np.full(k, 1.0 / k), ""
    if name == "class":
        return np.eye(k)[0], ""
    maxmin = (sol.maximin_row_strategy if seat == "row" else sol.maximin_col_strategy)[g, :k]
    if name == "maxmin":
        return np.asarray(maxmin, dtype=np.float64), ""
    if int(sol.num_eq[g]) < 1:  # not expected (every game has one); said, never silent
        return np.asarray(maxmin, dtype=np.float64), "no equilibrium found: maxmin played"
    eq = (sol.eq_row if seat == "row" else sol.eq_col)[g, 0, :k]
    return np.asarray(eq, dtype=np.float64), "eq1"


def normalised(value: float, p: np.ndarray) -> float:
    """``(value - min p) / (max p - min p)`` clipped to [0, 1]; 1 when ``p`` is constant."""
    low, high = float(p.min()), float(p.max())
    if high - low <= 1e-12 * max(1.0, abs(high)):
        return 1.0
    return float(min(1.0, max(0.0, (value - low) / (high - low))))


def run_pair_shard(shard: BimatrixPairShard, backends: Mapping[BackendSpec, Backend]
                   ) -> ShardResult:
    """Plays ``shard``: its games in both seat orders (order 0: player_a in the row seat)."""
    c = shard.config
    rows = Rows(BIMATRIX_DUELS)
    logs: dict[BackendSpec, list] = {}
    statuses: list[str] = []
    games = 0
    for game_set, first, stop in shard.games():
        games += stop - first
        _play_set(shard, game_set, first, stop, backends, rows, logs, statuses)
    tables = {"bimatrix_duels": (shard.shard_id, rows.table())}
    calls = [calls_table(shard.run_id, shard.shard_id, spec, c.mode,
                         *map(list, zip(*group, strict=True)))
             for spec, group in logs.items()]
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    stats = {"plays": len(statuses), "games": games,
             "forfeits": statuses.count("forfeit"), "call_failed": statuses.count("call_failed"),
             "calls": sum(len(group) for group in logs.values())}
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)


def _play_set(shard: BimatrixPairShard, game_set: str, first: int, stop: int,
              backends: Mapping[BackendSpec, Backend], rows: Rows,
              logs: dict[BackendSpec, list], statuses: list[str]) -> None:
    """Plays games ``first..stop-1`` of one set in both seat orders, adding their rows."""
    c = shard.config
    s = get_set(game_set)
    a, b = generate(game_set, shard.seed, first, stop)
    ids = [game_id(game_set, shard.seed, i) for i in range(first, stop)]
    sol = solve_bimatrix(a, b)
    games, rows_k, cols_k = len(ids), a.shape[1], a.shape[2]
    # every (player, seat) strategy for every game: scripted at once, models in one batch each
    answers: dict[tuple[Any, str], list[tuple[np.ndarray | None, str, str, str | None,
                                              str | None]]] = {}
    for p in (c.player_a, c.player_b):
        for seat in SEATS:
            k = rows_k if seat == "row" else cols_k
            if isinstance(p, str):
                plays = [scripted_strategy(p, seat, g, sol, k) for g in range(games)]
                answers[p, seat] = [(x, OK, note, None, None) for x, note in plays]
                continue
            stops, budget = answer_policy(c.mode, p.style)
            requests = [Request(prompt=prompt(a[g], b[g], seat, c.mode, p.style),
                                seed=int(derive_seed(c.llm_seed, ids[g], seat, c.mode, 0, "")),
                                task=f"matrix.{c.mode}:{k}",
                                max_tokens=c.max_tokens or budget, temperature=c.temperature,
                                stop=stops)
                        for g in range(games)]
            responses = asyncio.run(backends[p].generate(requests))
            log = p.provider != "dummy"
            got = []
            for g, resp in enumerate(responses):
                cid = f"{shard.shard_id}/{seat_label(p)}/{ids[g]}/{seat}" if log else None
                if log:
                    logs.setdefault(p, []).append((requests[g], resp, cid,
                                                   f"{ids[g]}/{seat}/{c.mode}"))
                if resp.status != "ok" or resp.text is None:
                    got.append((None, FAILED, resp.error or "call failed", resp.text, cid))
                    continue
                completion = p.style == "completion"
                if c.mode == "pure":
                    ans = parse_pure(resp.text, k, continuation=completion)
                    x = np.eye(k)[ans.action] if ans.status is ParseStatus.OK else None
                else:
                    ans = parse_mixed(resp.text, k, continuation=completion)
                    x = (np.asarray(ans.strategy, dtype=np.float64)
                         if ans.status is ParseStatus.OK else None)
                got.append((x, ans.status.value, ans.detail, resp.text, cid))
            answers[p, seat] = got

    pid = c.pairing_id()
    for g, gid in enumerate(ids):
        for order in (0, 1):
            seats = (c.player_a, c.player_b) if order == 0 else (c.player_b, c.player_a)
            xr, st_r, de_r, raw_r, cid_r = answers[seats[0], "row"][g]
            xc, st_c, de_c, raw_c, cid_c = answers[seats[1], "col"][g]
            value_row = value_col = None
            if FAILED in (st_r, st_c):
                status, score_row, score_col = "call_failed", None, None
            elif xr is None or xc is None:
                status = "forfeit"
                score_row = 0.0 if xr is None else 1.0
                score_col = 0.0 if xc is None else 1.0
                if xr is None and xc is None:
                    score_row = score_col = 0.0
            else:
                status = "complete"
                value_row = float(xr @ a[g] @ xc)
                value_col = float(xr @ b[g] @ xc)
                score_row, score_col = normalised(value_row, a[g]), normalised(value_col, b[g])
            statuses.append(status)
            rows.add({
                "run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
                "duel_id": f"{gid}/p{pid}/o{order}", "game_id": gid,
                "game_set": game_set, "set_kind": s.kind, "game_class": s.game_class,
                "seed": shard.seed, "game_index": first + g,
                "player_row": seat_label(seats[0]), "player_col": seat_label(seats[1]),
                "seat_order": order, "mode": c.mode, "payoff_row": a[g].tolist(),
                "payoff_col": b[g].tolist(),
                "strategy_row": None if xr is None else xr.tolist(),
                "strategy_col": None if xc is None else xc.tolist(),
                "status_row": st_r, "status_col": st_c, "detail_row": de_r, "detail_col": de_c,
                "raw_row": raw_r, "raw_col": raw_c, "value_row": value_row,
                "value_col": value_col, "status": status, "score_row": score_row,
                "score_col": score_col, "call_id_row": cid_r, "call_id_col": cid_c,
            })
