"""Plays one bimatrix shard: generate, solve, ask every (model, seat, mode), score each answer
against every opponent, tabulate; or a tournament pairing's shard (:func:`run_pair_shard`).
Runs in a Ray task or in the driver; writes nothing.

Each answer is a function of (llm seed, game, seat, mode, trial) alone (and ``opp`` for a model
opponent's answers), so rows do not depend on sharding or batching. A model answers in its own
action space: the column seat's strategy is over columns. Scoring works from the model's seat:
``P`` is its own payoff matrix with its actions as rows (``A`` for the row seat, ``B^T`` for
the column seat), ``Q`` the other player's, ``y`` the opponent's strategy over its actions.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.logprob import read_strategies
from distbench.games.answers.pairing import PairShard, pair_result
from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.base import ShardResult, derive_seed, seat_label
from distbench.games.bimatrix.consistency import is_equilibrium_strategy
from distbench.games.bimatrix.instances import COOPERATIVE, game_id, generate, get_set
from distbench.games.bimatrix.plan import NAME, BimatrixShard
from distbench.games.bimatrix.prompts import answer_policy, prompt, with_cue
from distbench.games.bimatrix.schema import BIMATRIX_DUELS, BIMATRIX_GAMES, BIMATRIX_TRIALS
from distbench.kernels.bimatrix import solve_bimatrix
from distbench.llm.base import Backend, BackendSpec, Request
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

EQ_TOL = 1e-6
SUPPORT_TOL = 1e-9
OK = ParseStatus.OK.value
FAILED = ParseStatus.CALL_FAILED.value
SEATS = ("row", "col")


@dataclass
class Answers:
    """One model's answers in one seat and mode, for every game and trial of a shard.

    Attributes:
        strategy: (G, T, k) float64 over the model's own actions; NaN rows where invalid.
        status: (G, T) parse statuses.
        detail: (G, T) parser details.
        raw: (G, T) raw texts.
        label_mass: (G, T) logprob mode's label mass (NaN otherwise).
        latency: (G, T) call latency in ms.
        call_id: (G, T) call ids (None for in-process models).
    """

    strategy: np.ndarray
    status: list[list[str]]
    detail: list[list[str]]
    raw: list[list[str | None]]
    label_mass: np.ndarray
    latency: np.ndarray
    call_id: list[list[str | None]]


def seat_view(a: np.ndarray, b: np.ndarray, seat: str) -> tuple[np.ndarray, np.ndarray]:
    """``(P, Q)``: the seat's own payoffs and the other player's, the seat's actions as rows."""
    if seat == "row":
        return a, b
    return b.T, a.T


def _ask(backend: Backend, requests: list[Request]):
    return asyncio.run(backend.generate(requests))


def ask(shard: BimatrixShard, spec: BackendSpec, backend: Backend, seat: str, mode: str,
        tag: str, ids: list[str], a: np.ndarray, b: np.ndarray) -> tuple[Answers, pa.Table | None]:
    """Asks ``spec`` every game and trial of one seat and mode; returns its answers and its
    ``calls`` rows (None for in-process models)."""
    c = shard.config
    games = len(ids)
    k = a.shape[1] if seat == "row" else a.shape[2]
    trials = 1 if mode == "logprob" else c.num_trials
    style = "completion" if mode == "logprob" else spec.style
    strategy = np.full((games, trials, k), np.nan)
    status = [[""] * trials for _ in range(games)]
    detail = [[""] * trials for _ in range(games)]
    raw: list[list[str | None]] = [[None] * trials for _ in range(games)]
    mass = np.full((games, trials), np.nan)
    latency = np.zeros((games, trials))
    seeds = [[derive_seed(c.llm_seed, gid, seat, mode, t, tag) for t in range(trials)]
             for gid in ids]
    prefix = f"{shard.shard_id}/{tag}{seat}/{mode}"
    log = spec.provider != "dummy"
    if mode == "logprob":
        prompts = [with_cue(prompt(a[g], b[g], seat, "pure", "completion"), c.logprob_cue)
                   for g in range(games)]
        readings, call_log = read_strategies(
            prompts, [s[0] for s in seeds], k, lambda batch: _ask(backend, batch),
            temperature=c.temperature, min_label_mass=c.min_label_mass,
            task=f"matrix.logprob:{k}")
        for g, r in enumerate(readings):
            status[g][0], detail[g][0], raw[g][0] = r.status, r.detail, r.text
            mass[g, 0] = r.label_mass
            if r.strategy is not None:
                strategy[g, 0] = r.strategy
        for g, (_, _, resp) in enumerate(call_log[:games]):
            latency[g, 0] = resp.latency_ms
        call_id = [[f"{prefix}/{g}" if log else None] for g in range(games)]
        calls = None
        if log:
            seen: dict[int, int] = {}
            cids, tids = [], []
            for g, _, _ in call_log:
                n = seen.get(g, 0)
                seen[g] = n + 1
                cids.append(f"{prefix}/{g}" + (f".{n}" if n else ""))
                tids.append(f"{ids[g]}/{seat}/{mode}/t0")
            calls = calls_table(shard.run_id, shard.shard_id, spec, mode,
                                [r for _, r, _ in call_log], [r for _, _, r in call_log],
                                cids, tids)
        return Answers(strategy, status, detail, raw, mass, latency, call_id), calls
    stop, budget = answer_policy(mode, style)
    texts = [prompt(a[g], b[g], seat, mode, style) for g in range(games)]
    requests = [Request(prompt=texts[g], seed=int(seeds[g][t]), task=f"matrix.{mode}:{k}",
                        max_tokens=c.max_tokens or budget, temperature=c.temperature, stop=stop)
                for g in range(games) for t in range(trials)]
    responses = _ask(backend, requests)
    continuation = style == "completion"
    for i, resp in enumerate(responses):
        g, t = divmod(i, trials)
        raw[g][t] = resp.text
        latency[g, t] = resp.latency_ms
        if resp.status != "ok" or resp.text is None:
            status[g][t], detail[g][t] = ParseStatus.CALL_FAILED.value, resp.error or "call failed"
            continue
        if mode == "pure":
            ans = parse_pure(resp.text, k, continuation=continuation)
            if ans.status is ParseStatus.OK:
                strategy[g, t] = np.eye(k)[ans.action]
        else:
            ans = parse_mixed(resp.text, k, continuation=continuation)
            if ans.status is ParseStatus.OK:
                strategy[g, t] = ans.strategy
        status[g][t], detail[g][t] = ans.status.value, ans.detail
    call_id = [[f"{prefix}/{g * trials + t}" if log else None for t in range(trials)]
               for g in range(games)]
    calls = None
    if log:
        calls = calls_table(shard.run_id, shard.shard_id, spec, mode, requests, responses,
                            [f"{prefix}/{i}" for i in range(len(requests))],
                            [f"{ids[i // trials]}/{seat}/{mode}/t{i % trials}"
                             for i in range(len(requests))])
    return Answers(strategy, status, detail, raw, mass, latency, call_id), calls


def score(p: np.ndarray, q: np.ndarray, x: np.ndarray, y: np.ndarray, own_eq: np.ndarray,
          pure_eq: np.ndarray, max_welfare: float, mode: str = "pure",
          degenerate: bool = False) -> dict[str, np.ndarray]:
    """The per-trial metrics of GAMES.md section 4, from the model's seat.

    Args:
        p: (k, l) the model's payoffs (its actions as rows).
        q: (k, l) the other player's payoffs, same layout.
        x: (T, k) the model's strategies; NaN rows are invalid answers.
        y: (T, l) the opponent's strategies; NaN rows are invalid opponent answers.
        own_eq: (E, k) the model's seat's strategy in each equilibrium.
        pure_eq: (k, l) bool, pure equilibrium cells.
        max_welfare: max over cells of A + B.
        mode: ``pure`` (``eq_consistent``: the action is in some equilibrium's support) or
            ``mixed`` / ``logprob`` (the strategy equals one within 1e-6, or, in a degenerate
            game, is an equilibrium strategy inside a component of them:
            :func:`~distbench.games.bimatrix.consistency.is_equilibrium_strategy`).
        degenerate: The game is flagged degenerate (its equilibria may form continua).

    Returns:
        Arrays (T,): value, br_value, regret, quality, eq_consistent, dist_to_eq,
        welfare_ratio, dominated, coordinated (NaN where undefined; the booleans as 0/1
        floats with NaN).
    """
    valid = ~np.isnan(x).any(axis=1)
    known = ~np.isnan(y).any(axis=1)
    xs = np.nan_to_num(x)
    ys = np.nan_to_num(y)
    py = ys @ p.T  # (T, k): each own action's payoff against y
    value = np.einsum("tk,tk->t", xs, py)
    br = py.max(axis=1)
    worst = py.min(axis=1)
    regret = np.maximum(br - value, 0.0)
    spread = br - worst
    with np.errstate(invalid="ignore", divide="ignore"):
        quality = np.where(spread > 1e-12 * max(1.0, np.abs(p).max()),
                           1.0 - regret / np.where(spread > 0, spread, 1.0), 1.0)
    quality = np.clip(quality, 0.0, 1.0)
    other = np.einsum("tk,kl,tl->t", xs, q, ys)
    welfare = (value + other) / max_welfare if max_welfare > 0 else np.full(len(x), np.nan)
    if len(own_eq):
        gaps = np.abs(xs[:, None, :] - own_eq[None, :, :])  # (T, E, k)
        dist = gaps.sum(axis=2).min(axis=1)
        if mode == "pure":
            in_support = (xs[:, None, :] > 0.5) & (own_eq[None] > SUPPORT_TOL)
            consistent = in_support.any(axis=(1, 2)).astype(float)
        else:
            consistent = (gaps.max(axis=2) <= EQ_TOL).any(axis=1).astype(float)
            if degenerate:  # a strategy inside a continuum equals no listed extreme point
                consistent = np.array([
                    c or (ok and is_equilibrium_strategy(p, q, xt))
                    for c, ok, xt in zip(consistent, valid, xs, strict=True)], dtype=float)
    else:
        dist = np.full(len(x), np.nan)
        consistent = np.zeros(len(x))
    k = p.shape[0]
    dominated_action = np.array([any((p[j] > p[i]).all() for j in range(k) if j != i)
                                 for i in range(k)])
    dominated = (xs[:, dominated_action] > SUPPORT_TOL).any(axis=1).astype(float)
    coordinated = np.einsum("tk,kl,tl->t", xs, pure_eq.astype(float), ys)
    out = {"value": value, "br_value": br, "regret": regret, "quality": quality,
           "eq_consistent": consistent, "dist_to_eq": dist, "welfare_ratio": welfare,
           "dominated": dominated, "coordinated": coordinated}
    for key, arr in out.items():
        bad = ~valid | ~known
        if key == "br_value":
            bad = ~known
        out[key] = np.where(bad, np.nan, arr)
    out["quality"] = np.where(~known, np.nan, np.where(valid, quality, 0.0))
    return out


def trial_quality(quality: float, status: str, opponent_kind: str, opponent_status: str) -> float:
    """The headline's quality of one trial (README, "The headline"; GAMES.md section 4): the
    scored quality of a valid answer; 0 when the answer is invalid, and in self-play also when
    the model's own answer in the other seat is invalid (both seats are the model's); NaN
    (left out, counted as missing) when a call of the model failed at the server (either seat
    in self-play) or another model opponent's answer is not valid (not the model's)."""
    if status == FAILED or (opponent_kind == "self" and opponent_status == FAILED):
        return math.nan
    if opponent_kind == "model" and opponent_status != OK:
        return math.nan
    if status != OK or (opponent_kind == "self" and opponent_status != OK):
        return 0.0
    return float(quality)


def _none(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _flag(x: float) -> bool | None:
    return None if np.isnan(x) else bool(x)


def run_shard(shard: BimatrixShard | PairShard, backends: Mapping[BackendSpec, Backend]
              ) -> ShardResult:
    """Plays ``shard`` with ``backends`` (the model and any model opponents); a tournament
    pairing's shard is played by :func:`run_pair_shard`."""
    if isinstance(shard, PairShard):
        return run_pair_shard(shard, backends)
    c = shard.config
    s = get_set(shard.game_set)
    a, b = generate(shard.game_set, shard.seed, shard.start, shard.stop)
    ids = [game_id(shard.game_set, shard.seed, i) for i in range(shard.start, shard.stop)]
    sol = solve_bimatrix(a, b)
    games = games_table(shard, s, ids, a, b, sol)

    cache: dict[tuple, Answers] = {}
    calls: list[pa.Table] = []

    def answers(spec: BackendSpec, seat: str, mode: str, tag: str) -> Answers:
        key = (spec, seat, mode, tag)
        if key not in cache:
            cache[key], table = ask(shard, spec, backends[spec], seat, mode, tag, ids, a, b)
            if table is not None:
                calls.append(table)
        return cache[key]

    rows = Rows(BIMATRIX_TRIALS)
    player = (c.llm.provider, c.llm.model)
    coop = s.game_class in COOPERATIVE
    for seat in c.seats:
        other_seat = "col" if seat == "row" else "row"
        for mode in c.modes:
            mine = answers(c.llm, seat, mode, "")
            trials = mine.strategy.shape[1]
            for opp in c.opponents:
                if opp == "self":
                    theirs = answers(c.llm, other_seat, mode, "")
                elif isinstance(opp, BackendSpec):
                    theirs = answers(opp, other_seat, mode, "opp-")
                else:
                    theirs = None
                for g, gid in enumerate(ids):
                    p, q = seat_view(a[g], b[g], seat)
                    n_eq = int(sol.num_eq[g])
                    eq_own = (sol.eq_row if seat == "row" else sol.eq_col)[g, :n_eq]
                    eq_other = (sol.eq_col if seat == "row" else sol.eq_row)[g, :n_eq]
                    pure = sol.pure_eq[g] if seat == "row" else sol.pure_eq[g].T
                    facing = _opponents(opp, theirs, g, trials, q.shape[1], eq_other)
                    x = mine.strategy[g]
                    for name, kind, y, opp_status in facing:
                        m = score(p, q, x, y, eq_own, pure, float(sol.max_welfare[g]), mode,
                                  bool(sol.degenerate[g]))
                        for t in range(trials):
                            ok = mine.status[g][t] == OK
                            rows.add({
                                "run_id": shard.run_id, "shard_id": shard.shard_id,
                                "family": NAME, "game_set": shard.game_set,
                                "set_kind": s.kind, "game_class": s.game_class,
                                "seed": shard.seed, "game_id": gid,
                                "game_index": shard.start + g, "seat": seat, "opponent": name,
                                "opponent_kind": kind, "provider": player[0],
                                "model": player[1], "mode": mode, "trial": t,
                                "decision": int(np.argmax(x[t])) if ok and mode == "pure"
                                else None,
                                "strategy": x[t].tolist() if ok else None,
                                "opponent_strategy": None if np.isnan(y[t]).any()
                                else y[t].tolist(),
                                "parse_status": mine.status[g][t],
                                "parse_detail": mine.detail[g][t], "raw_text": mine.raw[g][t],
                                "opponent_status": opp_status[t],
                                "label_mass": _none(mine.label_mass[g, t]),
                                "value": _none(m["value"][t]),
                                "br_value": _none(m["br_value"][t]),
                                "regret": _none(m["regret"][t]),
                                # the model named as its own opponent is self-play:
                                # its invalid answer in the other seat is its own
                                "quality": _none(trial_quality(
                                    m["quality"][t], mine.status[g][t],
                                    "self" if opp == c.llm else kind, opp_status[t])),
                                "eq_consistent": _flag(m["eq_consistent"][t]),
                                "dist_to_eq": _none(m["dist_to_eq"][t]),
                                "welfare_ratio": _none(m["welfare_ratio"][t]),
                                "dominated": _flag(m["dominated"][t]),
                                "cooperate": float(x[t, 0]) if ok and coop else None,
                                "coordinated": _none(m["coordinated"][t]),
                                "degenerate": bool(sol.degenerate[g]),
                                "call_id": mine.call_id[g][t],
                                "latency_ms": float(mine.latency[g, t]),
                            })
    trials_tab = rows.table()
    statuses = trials_tab["parse_status"].to_pylist()
    stats = {"games": len(ids), "trials": shard.num_units,
             "valid": sum(st == OK for st in statuses),
             "call_failed": sum(st == ParseStatus.CALL_FAILED.value for st in statuses),
             "calls": sum(t.num_rows for t in calls)}
    tables = {"bimatrix_games": (shard.shard_id, games),
              "bimatrix_trials": (shard.shard_id, trials_tab)}
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)


def _opponents(opp, theirs: Answers | None, g: int, trials: int, n: int,
               eq_other: np.ndarray) -> list[tuple[str, str, np.ndarray, list[str]]]:
    """``(name, kind, y (T, n), statuses)`` of each opponent strategy faced in game ``g``."""
    ok = [OK] * trials
    if opp == "eq":
        return [(f"eq{e + 1}", "equilibrium", np.tile(eq_other[e], (trials, 1)), ok)
                for e in range(len(eq_other))]
    if opp == "uniform":
        return [("uniform", "uniform", np.full((trials, n), 1.0 / n), ok)]
    if opp == "class":
        return [("class", "class", np.tile(np.eye(n)[0], (trials, 1)), ok)]
    assert theirs is not None
    y = theirs.strategy[g]
    status = theirs.status[g]
    if y.shape[0] != trials:  # logprob: one reading faces every trial
        y = np.repeat(y[:1], trials, axis=0)
        status = status[:1] * trials
    if opp == "self":
        return [("self", "self", y, list(status))]
    return [(f"{opp.provider}:{opp.model}", "model", y, list(status))]


def games_table(shard: BimatrixShard, s, ids: list[str], a: np.ndarray, b: np.ndarray,
                sol) -> pa.Table:
    """The ``bimatrix_games`` rows of a shard."""
    rows = Rows(BIMATRIX_GAMES)
    for g, gid in enumerate(ids):
        k = int(sol.num_eq[g])
        rows.add({
            "run_id": shard.run_id, "family": NAME, "game_set": shard.game_set,
            "set_kind": s.kind, "game_class": s.game_class, "seed": shard.seed,
            "game_index": shard.start + g, "game_id": gid, "rows": a.shape[1],
            "cols": a.shape[2], "payoff_row": a[g].tolist(), "payoff_col": b[g].tolist(),
            "num_eq": k, "eq_row": sol.eq_row[g, :k].tolist(),
            "eq_col": sol.eq_col[g, :k].tolist(),
            "eq_row_value": sol.eq_row_value[g, :k].tolist(),
            "eq_col_value": sol.eq_col_value[g, :k].tolist(),
            "num_pure_eq": int(sol.pure_eq[g].sum()), "degenerate": bool(sol.degenerate[g]),
            "maximin_row": float(sol.maximin_row[g]), "maximin_col": float(sol.maximin_col[g]),
            "max_welfare": float(sol.max_welfare[g]), "num_pareto": int(sol.pareto[g].sum()),
        })
    return rows.table()


# -- a tournament pairing's shard ------------------------------------------------------------

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


def run_pair_shard(shard: PairShard, backends: Mapping[BackendSpec, Backend]
                   ) -> ShardResult:
    """Plays a tournament pairing's shard (:mod:`.tournament`): its games in both seat orders
    (order 0: player_a in the row seat), two players of any kind (models, the scripted ``eq``,
    ``uniform``, ``maxmin`` and ``class``), one batch of calls per model and seat, into
    ``bimatrix_duels``.

    A model's answer in a seat is a function of (llm seed, game, seat, mode) alone: the request
    seed is the one an ordinary run gives its trial 0 (``derive_seed(llm_seed, game_id, seat,
    mode, 0, "")``), and the prompt does not name the opponent (the players move at once), so
    a model answers a game the same against every opponent."""
    c = shard.config
    rows = Rows(BIMATRIX_DUELS)
    logs: dict[BackendSpec, list] = {}
    statuses: list[str] = []
    games = 0
    for game_set, first, stop in shard.games():
        games += stop - first
        _play_set(shard, game_set, first, stop, backends, rows, logs, statuses)
    return pair_result(shard, "bimatrix_duels", rows.table(), logs, c.mode, {
        "plays": len(statuses), "games": games, "forfeits": statuses.count("forfeit"),
        "call_failed": statuses.count("call_failed"),
        "calls": sum(len(group) for group in logs.values())})


def _play_set(shard: PairShard, game_set: str, first: int, stop: int,
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


def warm_up() -> None:
    """Loads the compiled kernels a shard uses."""
    solve_bimatrix(np.array([[[3.0, 0.0], [5.0, 1.0]]]), np.array([[[3.0, 5.0], [0.0, 1.0]]]))
