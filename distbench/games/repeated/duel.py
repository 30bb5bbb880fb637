"""Plays a tournament pairing's shard of the repeated family: two players of any kind (axelrod
strategies, models) in the row and column seats, every match in both seat orders, all the
matches of the shard advancing together, one batch of calls per model and round. Also the
family's runner entry point (:func:`run_shard`), which hands the shards of ordinary runs to
:func:`distbench.games.repeated.runner.run_shard` unchanged.

Determinism: match ``i`` plays the stage game and length :mod:`.runner` draws for it (the same
for every pairing and both seat orders); a model's request seed is ``derive_seed(llm_seed,
match_id, round, seat)``; a stochastic strategy draws from ``derive_seed("repeated-duel",
match_id, seat)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.classes import draw_class
from distbench.games.answers.parse import ParseStatus, parse_pure
from distbench.games.base import ShardResult, derive_seed, seat_label
from distbench.games.repeated.pairing import RepeatedPairShard
from distbench.games.repeated.plan import NAME
from distbench.games.repeated.runner import _ask, prompt
from distbench.games.repeated.runner import run_shard as run_match_shard
from distbench.games.repeated.schema import REPEATED_DUELS
from distbench.games.repeated.strategies import get_machine
from distbench.llm.base import Backend, BackendSpec, Request
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

OK = ParseStatus.OK.value
FAILED = ParseStatus.CALL_FAILED.value


def run_shard(shard: Any, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """The family's runner: a tournament pairing's shard here, any other to :mod:`.runner`."""
    if isinstance(shard, RepeatedPairShard):
        return run_pair_shard(shard, backends)
    return run_match_shard(shard, backends)


def _stage(stage: str, seed: int, index: int, config: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """(A, B, rounds) of match ``index``: as :func:`.runner.run_shard` draws them."""
    a, b = draw_class(stage, np.random.default_rng(derive_seed(NAME, stage, seed, index)))
    if config.rounds is not None:
        return a, b, config.rounds
    rng = np.random.default_rng(derive_seed("repeated-rounds", stage, seed, index))
    return a, b, int(min(rng.geometric(1.0 - config.continuation), config.max_rounds))


def seat_scores(status: str, forfeit_seat: str | None, mean_row: float | None,
                mean_col: float | None, a: np.ndarray, b: np.ndarray
                ) -> tuple[float | None, float | None]:
    """(row score, column score) of a match (see :mod:`.pairing`)."""
    if status == "call_failed":
        return None, None
    if status == "forfeit":
        low_r, high_r = float(a.min()), float(a.max())
        low_c, high_c = float(b.min()), float(b.max())
        if forfeit_seat == "both":
            return low_r, low_c
        return (low_r, high_c) if forfeit_seat == "row" else (high_r, low_c)
    return mean_row, mean_col


def run_pair_shard(shard: RepeatedPairShard, backends: Mapping[BackendSpec, Backend]
                   ) -> ShardResult:
    """Plays ``shard``: its matches in both seat orders (order 0: player_a in the row seat)."""
    c = shard.config
    pid = c.pairing_id()
    matches: list[dict[str, Any]] = []
    for i in range(shard.start, shard.stop):
        a, b, planned = _stage(c.stage, shard.seed, i, c)
        for order in (0, 1):
            seats = (c.player_a, c.player_b) if order == 0 else (c.player_b, c.player_a)
            mid = f"{c.stage}/s{shard.seed}/m{i}/p{pid}/o{order}"
            views = ((a, b), (b.T, a.T))  # each seat's own payoffs first, its moves as rows
            machines, states, rngs = [], [], []
            for s, p in enumerate(seats):
                own = views[s][0]
                m = (get_machine(p, (own[0, 0], own[0, 1], own[1, 0], own[1, 1]))
                     if isinstance(p, str) else None)
                machines.append(m)
                states.append(m.start if m is not None else 0)
                rngs.append(np.random.default_rng(derive_seed("repeated-duel", mid, s)))
            matches.append({"id": mid, "index": i, "order": order, "a": a, "b": b,
                            "planned": planned, "seats": seats, "views": views,
                            "machines": machines, "states": states, "rngs": rngs,
                            "moves": ([], []), "status": "complete", "forfeit_seat": None,
                            "forfeit_status": None, "forfeit_text": None, "calls": 0})
    log: dict[BackendSpec, list] = {}
    for r in range(max((m["planned"] for m in matches), default=0)):
        active = [m for m in matches if m["status"] == "complete" and r < m["planned"]]
        if not active:
            break
        # every model's asks of this round, one batch per model
        asks: dict[BackendSpec, list[tuple[dict, int, Request]]] = {}
        for m in active:
            for s, p in enumerate(m["seats"]):
                if isinstance(p, BackendSpec):
                    own, other = m["views"][s]
                    mine, theirs = m["moves"][s], m["moves"][1 - s]
                    style = p.style
                    asks.setdefault(p, []).append((m, s, Request(
                        prompt=prompt(own, other, list(zip(mine, theirs, strict=True)), r + 1,
                                      c.rounds, c.continuation, False, style),
                        seed=derive_seed(c.llm_seed, m["id"], r, "row" if s == 0 else "col"),
                        task="matrix.pure:2",
                        max_tokens=c.max_tokens or (256 if style == "chat" else 16),
                        temperature=c.temperature)))
        answers: dict[tuple[str, int], tuple[int | None, str, str, str | None]] = {}
        for spec, group in asks.items():
            responses = _ask(backends[spec], [req for _, _, req in group])
            for (m, s, req), resp in zip(group, responses, strict=True):
                m["calls"] += 1
                cid = f"{m['id']}/r{r + 1}/{'row' if s == 0 else 'col'}"
                if spec.provider != "dummy":
                    log.setdefault(spec, []).append((req, resp, cid, m["id"]))
                if resp.status != "ok" or resp.text is None:
                    answers[m["id"], s] = (None, FAILED, resp.error or "call failed", resp.text)
                    continue
                ans = parse_pure(resp.text, 2, continuation=spec.style == "completion")
                answers[m["id"], s] = (ans.action if ans.status is ParseStatus.OK else None,
                                       ans.status.value, ans.detail, resp.text)
        for m in active:
            moves: list[int | None] = []
            for s, p in enumerate(m["seats"]):
                if isinstance(p, str):
                    moves.append(m["machines"][s].move(m["states"][s], m["rngs"][s]))
                else:
                    moves.append(answers[m["id"], s][0])
            if all(x is not None for x in moves):
                for s in (0, 1):
                    m["moves"][s].append(int(moves[s]))
                    if m["machines"][s] is not None:
                        m["states"][s] = int(m["machines"][s].next[m["states"][s], moves[s],
                                                                   moves[1 - s]])
                continue
            got = [answers.get((m["id"], s)) for s in (0, 1)]
            if any(g is not None and g[1] == FAILED for g in got):
                m["status"] = "call_failed"
                continue
            bad = [s for s in (0, 1) if moves[s] is None]
            m["status"] = "forfeit"
            m["forfeit_seat"] = "both" if len(bad) == 2 else ("row", "col")[bad[0]]
            m["forfeit_status"], m["forfeit_text"] = got[bad[0]][1], got[bad[0]][3]
    rows = Rows(REPEATED_DUELS)
    for m in matches:
        a, b = m["a"], m["b"]
        mr, mc = m["moves"]
        n = len(mr)
        total_row = float(sum(a[x, y] for x, y in zip(mr, mc, strict=True)))
        total_col = float(sum(b[x, y] for x, y in zip(mr, mc, strict=True)))
        mean_row = total_row / n if n else None
        mean_col = total_col / n if n else None
        score_row, score_col = seat_scores(m["status"], m["forfeit_seat"], mean_row, mean_col,
                                           a, b)
        rows.add({
            "run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
            "match_id": m["id"], "instance": f"{c.stage}/s{shard.seed}/m{m['index']}",
            "stage": c.stage, "seed": shard.seed, "match_index": m["index"],
            "player_row": seat_label(m["seats"][0]), "player_col": seat_label(m["seats"][1]),
            "seat_order": m["order"], "payoff_row": a.tolist(), "payoff_col": b.tolist(),
            "horizon": c.rounds, "continuation": c.continuation,
            "rounds_planned": m["planned"], "rounds_played": n, "status": m["status"],
            "forfeit_seat": m["forfeit_seat"], "forfeit_status": m["forfeit_status"],
            "forfeit_text": m["forfeit_text"], "moves_row": mr, "moves_col": mc,
            "total_row": total_row, "total_col": total_col, "mean_row": mean_row,
            "mean_col": mean_col,
            "cooperation_row": float(np.mean([x == 0 for x in mr])) if n else None,
            "cooperation_col": float(np.mean([x == 0 for x in mc])) if n else None,
            "score_row": score_row, "score_col": score_col, "num_calls": m["calls"],
        })
    tables = {"repeated_duels": (shard.shard_id, rows.table())}
    calls = [calls_table(shard.run_id, shard.shard_id, spec, "pure", *map(list, zip(*group,
                                                                                  strict=True)))
             for spec, group in log.items()]
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    statuses = [m["status"] for m in matches]
    stats = {"matches": len(matches), "games": len(matches),
             "forfeits": statuses.count("forfeit"), "call_failed": statuses.count("call_failed"),
             "calls": sum(m["calls"] for m in matches)}
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)
