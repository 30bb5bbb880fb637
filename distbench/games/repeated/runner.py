"""Plays one repeated shard: every match of the shard advances round by round, one batch of
model calls per round (two with self-play: one per seat), the opponent's machine answering at
once; or a tournament pairing's shard (:func:`run_pair_shard`). Runs in a Ray task or in the
driver; writes nothing.

Determinism: the stage game of match ``i`` comes from ``derive_seed("repeated", stage, seed,
i)`` (the same for every opponent, so opponents are compared on the same games), its length
(with a continuation probability) from ``derive_seed("repeated-rounds", stage, seed, i)``, a
stochastic opponent's draws from ``derive_seed("repeated-opponent", stage, opponent, seed,
i)`` and the model's request seeds from ``derive_seed(llm_seed, match_id, round, seat)``.

An answer that is not a move ends its match as a ``forfeit`` (its round is a row with the
status and the raw text): no move is ever substituted. A call that failed at the server ends
it as ``call_failed`` and another model opponent's invalid answer as ``opponent_forfeit``:
neither is the model's, so those matches have no quality (left out of the headline, counted
as missing; :func:`match_end`, :func:`match_quality`).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.classes import draw_class
from distbench.games.answers.pairing import PairShard, pair_result
from distbench.games.answers.parse import ParseStatus, parse_pure
from distbench.games.base import ShardResult, derive_seed, seat_label
from distbench.games.repeated.optimum import best_total, worst_total
from distbench.games.repeated.plan import NAME, RepeatedShard, planned_rounds
from distbench.games.repeated.schema import REPEATED_DUELS, REPEATED_MATCHES, ROUNDS
from distbench.games.repeated.strategies import get_machine
from distbench.llm.base import Backend, BackendSpec, Request
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

OK = ParseStatus.OK.value
FAILED = ParseStatus.CALL_FAILED.value
QUALITY_TOLERANCE = 1e-9
PROB_CLIP = 1e-6
_PREDICTION = re.compile(r"prediction\s*[:=]\s*([-+]?\d*\.?\d+)\s*(%?)", re.IGNORECASE)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def prompt(own: np.ndarray, other: np.ndarray, history: list[tuple[int, int]], round_no: int,
           horizon: int | None, continuation: float | None, predict: bool, style: str) -> str:
    """The prompt of one round, from the player's side.

    Args:
        own: (2, 2) the player's payoffs, its actions as rows.
        other: (2, 2) the other player's payoffs, same layout.
        history: (own move, other's move) of each past round (0 = action 1, 1 = action 2).
        round_no: This round, 1-based.
        horizon: The known number of rounds, or None.
        continuation: The continuation probability, or None.
        predict: Ask for the probability that the other player plays action 1 this round.
        style: ``chat`` or ``completion``.
    """
    cells = "\n".join(
        f"If you play Action {a + 1} and they play Action {o + 1}: you get {_num(own[a, o])}, "
        f"they get {_num(other[a, o])}." for a in (0, 1) for o in (0, 1))
    length = (f"The game lasts exactly {horizon} rounds; this is round {round_no}."
              if horizon is not None else
              f"After each round the game goes on with probability {continuation:g}; this is "
              f"round {round_no}.")
    lines = [f"Round {t + 1}: you played Action {m + 1}, they played Action {o + 1}; you got "
             f"{_num(own[m, o])}, they got {_num(other[m, o])}." for t, (m, o) in
             enumerate(history)]
    past = "History:\n" + "\n".join(lines) if lines else "No rounds have been played yet."
    parts = ["You are playing a repeated two-player game against the same other player. Each "
             "round, both of you choose Action 1 or Action 2 at the same time, then both "
             "moves are shown. Your goal is to make your own total payoff as high as possible.",
             "Payoffs of one round:\n" + cells, length, past]
    ask = "Choose one of your 2 actions for this round, 1 or 2."
    if predict:
        ask += (" Also give the probability (from 0 to 1) that the other player plays "
                "Action 1 this round.")
    if style == "chat":
        tail = "End your reply with one line of exactly this form:\nAction: <k>"
        if predict:
            tail = ("End your reply with two lines of exactly this form:\nPrediction: <p>\n"
                    "Action: <k>")
        parts.append(f"{ask} You may think it through first. {tail}")
    else:
        parts.append(ask + ("\n\nPrediction: " if predict else "\n\nAction: "))
    return "\n\n".join(parts)


def parse_prediction(text: str | None) -> tuple[float | None, str]:
    """The last ``Prediction: p`` of a reply (``p`` in [0, 1], or a percentage)."""
    if not text:
        return None, "missing"
    found = list(_PREDICTION.finditer(text))
    if not found:
        return None, "missing"
    value = float(found[-1].group(1)) / (100.0 if found[-1].group(2) else 1.0)
    if not 0.0 <= value <= 1.0:
        return None, "out_of_range"
    return value, "ok"


def stage_game(stage: str, seed: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of match ``index`` of ``seed``: the same for every opponent and pairing."""
    return draw_class(stage, np.random.default_rng(derive_seed(NAME, stage, seed, index)))


def _ask(backend: Backend, requests: list[Request]):
    return asyncio.run(backend.generate(requests))


def _rate(hits: list[bool]) -> float | None:
    return float(np.mean(hits)) if hits else None


def match_metrics(moves: list[int], opp: list[int], a: np.ndarray) -> dict[str, float | None]:
    """Cooperation, retaliation and forgiveness rates and the first defection of a match (the
    model's moves ``moves`` against ``opp``, 0 = C)."""
    n = len(moves)
    retaliate = [moves[t] == 1 for t in range(1, n) if opp[t - 1] == 1]
    retaliated = [t for t in range(1, n) if opp[t - 1] == 1 and moves[t] == 1]
    forgive = [moves[t + 1] == 0 for t in retaliated if t + 1 < n]
    first = next((t + 1 for t, m in enumerate(moves) if m == 1), None)
    return {"cooperation_rate": _rate([m == 0 for m in moves]),
            "retaliation_rate": _rate(retaliate), "forgiveness_rate": _rate(forgive),
            "first_defection": first}


def match_end(own: str, other: str | None, own_other_seat: bool) -> str:
    """The status of a match that ends in a round without a move from both sides.

    Args:
        own: The model's parse status this round.
        other: The other seat's parse status (a model's, or None for a machine).
        own_other_seat: The other seat is the model itself (self-play).

    Returns:
        ``call_failed`` when either call failed at the server (nothing to score, whoever
        answered what), else ``forfeit`` when the model's answer, or in self-play its own
        answer in the other seat, is invalid, else ``opponent_forfeit`` (another model's
        invalid answer).
    """
    if own == FAILED or other == FAILED:
        return "call_failed"
    if own != OK or own_other_seat:
        return "forfeit"
    return "opponent_forfeit"


def match_quality(status: str, total: float, best: float | None, worst: float | None,
                  payoff: np.ndarray, rounds: int) -> float | None:
    """The headline's quality of a match in [0, 1] (GAMES.md section 5): a complete match
    against a machine ``(total - worst) / (best - worst)`` clipped to [0, 1] (1 when
    ``best - worst`` is 0: every play earns the same), against a model (itself or another)
    ``(total - T min u) / (T (max u - min u))`` over the stage payoffs ``u`` and ``T =
    rounds``; 0 for a forfeit; None (left out) for ``call_failed`` and ``opponent_forfeit``."""
    if status == "forfeit":
        return 0.0
    if status != "complete":
        return None
    u = np.asarray(payoff, dtype=np.float64)
    if best is None or worst is None:
        best, worst = rounds * float(u.max()), rounds * float(u.min())
    span = best - worst
    if span <= QUALITY_TOLERANCE * max(1.0, float(np.abs(u).max()) * max(rounds, 1)):
        return 1.0
    return float(min(1.0, max(0.0, (total - worst) / span)))


def _parsed(answers: list, style: str, other_style: str) -> list[tuple[Any, str, str]]:
    """(move or None, parse status, detail) of each seat's answer of a round: the row seat's
    in ``style``, the column seat's (self-play) in its own ``other_style``."""
    parsed = []
    for resp, sty in zip(answers, (style, other_style)[:len(answers)], strict=True):
        if resp.status != "ok" or resp.text is None:
            parsed.append((None, ParseStatus.CALL_FAILED.value, resp.error or "call failed"))
            continue
        ans = parse_pure(resp.text, 2, continuation=sty == "completion")
        parsed.append((ans.action if ans.status is ParseStatus.OK else None,
                       ans.status.value, ans.detail))
    return parsed


def _match_row(shard: RepeatedShard, match_id: str, index: int, game: tuple, history: list,
               planned: int, status: str, preds: list, machine: Any) -> dict[str, Any]:
    """The ``repeated_matches`` row of one match (``machine``: the scripted opponent, None
    when a model sat in the column seat)."""
    c, spec, opponent = shard.config, shard.config.llm, shard.opponent_name
    a, b = game
    moves = [m for m, _ in history]
    opp = [o for _, o in history]
    n = len(moves)
    total = float(sum(a[m, o] for m, o in history))
    best = None if machine is None else best_total(machine, a, planned)
    worst = None if machine is None else worst_total(machine, a, planned)
    r_, t_ = a[0, 0], a[1, 0]
    exploitation = None
    if opponent == "Cooperator" and n and t_ != r_:
        exploitation = (total - n * r_) / (n * (t_ - r_))
    return {
        "run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
        "match_id": match_id, "stage": c.stage, "seed": shard.seed, "match_index": index,
        "opponent": opponent,
        "opponent_kind": ("self" if opponent == "self" else "model") if machine is None
        else "strategy",
        "provider": spec.provider, "model": spec.model, "payoff_row": a.tolist(),
        "payoff_col": b.tolist(), "horizon": c.rounds, "continuation": c.continuation,
        "rounds_planned": planned, "rounds_played": n, "status": status,
        "total": total, "mean_payoff": total / n if n else None, "best_total": best,
        "regret": best - total if best is not None and status == "complete" else None,
        **match_metrics(moves, opp, a), "exploitation": exploitation,
        "brier": float(np.mean([p[0] for p in preds])) if preds else None,
        "log_loss": float(np.mean([p[1] for p in preds])) if preds else None,
        "predictions": len(preds), "worst_total": worst,
        "quality": match_quality(status, total, best, worst, a, planned),
    }


def run_shard(shard: RepeatedShard | PairShard, backends: Mapping[BackendSpec, Backend]
              ) -> ShardResult:
    """Plays ``shard`` with ``backends[shard.llm]``; a tournament pairing's shard is played by
    :func:`run_pair_shard`."""
    if isinstance(shard, PairShard):
        return run_pair_shard(shard, backends)
    c = shard.config
    spec = c.llm
    backend = backends[spec]
    indices = list(range(shard.start, shard.stop))
    opponent = shard.opponent_name
    ids = [f"{c.stage}/{opponent}/s{shard.seed}/m{i}" for i in indices]
    games = []
    planned = []
    for i in indices:
        a, b = stage_game(c.stage, shard.seed, i)
        games.append((a, b))
        planned.append(planned_rounds(c, shard.seed, i))
    # self-play and a model opponent: the column seat is asked as the model is
    other_spec = spec if shard.opponent == "self" else (
        shard.opponent if isinstance(shard.opponent, BackendSpec) else None)
    self_play = other_spec is not None
    # the machine's own (R, S, T, P): the column seat's payoffs, its move as the column
    machines = [None if self_play else
                get_machine(shard.opponent, (b[0, 0], b[1, 0], b[0, 1], b[1, 1]))
                for _, b in games]
    rngs = [np.random.default_rng(derive_seed("repeated-opponent", c.stage, opponent,
                                              shard.seed, i)) for i in indices]
    states = [m.start if m is not None else 0 for m in machines]
    history: list[list[tuple[int, int]]] = [[] for _ in indices]
    status = ["complete"] * len(indices)
    done = [False] * len(indices)
    predictions: list[list[tuple[float, int]]] = [[] for _ in indices]
    rows = Rows(ROUNDS)
    style = spec.style
    max_tokens = c.max_tokens or (256 if style == "chat" else 16)
    log = spec.provider != "dummy"
    other_log = other_spec is not None and other_spec.provider != "dummy"
    other_max_tokens = c.max_tokens or (256 if other_spec is not None and
                                        other_spec.style == "chat" else 16)
    other_requests: list[Request] = []
    other_responses = []
    other_ids: list[str] = []
    other_for: list[str] = []
    all_requests: list[Request] = []
    all_responses = []
    call_ids: list[str] = []
    call_for: list[str] = []
    for r in range(max(planned)):
        active = [g for g in range(len(indices)) if not done[g] and r < planned[g]]
        if not active:
            break
        requests = []
        col_requests = []
        for g in active:
            a, b = games[g]
            requests.append(Request(
                prompt=prompt(a, b, history[g], r + 1, c.rounds, c.continuation, c.predict,
                              style),
                seed=derive_seed(c.llm_seed, ids[g], r, "row"), task="matrix.pure:2",
                max_tokens=max_tokens, temperature=c.temperature))
            if self_play:
                col_requests.append(Request(
                    prompt=prompt(b.T, a.T, [(o, m) for m, o in history[g]], r + 1, c.rounds,
                                  c.continuation, False, other_spec.style),
                    seed=derive_seed(c.llm_seed, ids[g], r, "col"), task="matrix.pure:2",
                    max_tokens=other_max_tokens, temperature=c.temperature))
        responses = _ask(backend, requests)
        col_responses = _ask(backends[other_spec], col_requests) if self_play else []
        if log:
            all_requests += requests
            all_responses += responses
        if other_log:
            other_requests += col_requests
            other_responses += col_responses
        for k, g in enumerate(active):
            a, b = games[g]
            answers = [responses[k]] + ([col_responses[k]] if self_play else [])
            parsed = _parsed(answers, style, other_spec.style if self_play else style)
            move, st, detail = parsed[0]
            cid = f"{shard.shard_id}/{g}/r{r + 1}" if log else None
            if log:
                call_ids.append(cid)
                call_for.append(f"{ids[g]}/r{r + 1}/row")
            if other_log:
                other_ids.append(f"{shard.shard_id}/{g}/r{r + 1}/col")
                other_for.append(f"{ids[g]}/r{r + 1}/col")
            if self_play:
                opp_move = parsed[1][0]
                if move is not None and opp_move is None:
                    st, detail = "opponent_invalid", f"the other seat's answer: {parsed[1][2]}"
                    move = None
            else:
                machine = machines[g]
                opp_move = machine.move(states[g], rngs[g])
            pred, pst = (None, "not_asked")
            if c.predict:
                pred, pst = parse_prediction(answers[0].text)
            brier = loss = None
            if move is not None and opp_move is not None:
                if not self_play:
                    states[g] = int(machines[g].next[states[g], opp_move, move])
                history[g].append((move, opp_move))
                if pred is not None:
                    hit = 1.0 if opp_move == 0 else 0.0
                    brier = (pred - hit) ** 2
                    p = min(max(pred if opp_move == 0 else 1.0 - pred, PROB_CLIP), 1 - PROB_CLIP)
                    loss = -math.log(p)
                    predictions[g].append((brier, loss))
            else:
                done[g] = True
                status[g] = match_end(parsed[0][1], parsed[1][1] if self_play else None,
                                      other_spec == spec)
            rows.add({
                "run_id": shard.run_id, "shard_id": shard.shard_id, "match_id": ids[g],
                "round": r + 1, "opponent": opponent,
                "action": move, "opponent_action": opp_move if move is not None else None,
                "payoff": float(a[move, opp_move]) if move is not None else None,
                "opponent_payoff": float(b[move, opp_move]) if move is not None else None,
                "parse_status": st, "parse_detail": detail, "raw_text": answers[0].text,
                "prediction": pred, "prediction_status": pst, "brier": brier, "log_loss": loss,
                "call_id": cid, "latency_ms": float(answers[0].latency_ms),
            })
    matches = Rows(REPEATED_MATCHES)
    for g, i in enumerate(indices):
        matches.add(_match_row(shard, ids[g], i, games[g], history[g], planned[g], status[g],
                               predictions[g], None if self_play else machines[g]))
    tables = {"repeated_matches": (shard.shard_id, matches.table()),
              "rounds": (shard.shard_id, rows.table())}
    calls = []
    if log and all_requests:
        calls.append(calls_table(shard.run_id, shard.shard_id, spec, "pure", all_requests,
                                 all_responses, call_ids, call_for))
    if other_log and other_requests:
        calls.append(calls_table(shard.run_id, shard.shard_id, other_spec, "pure",
                                 other_requests, other_responses, other_ids, other_for))
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    stats = {"matches": len(indices), "games": len(indices),
             "forfeits": status.count("forfeit"), "call_failed": status.count("call_failed"),
             "calls": len(all_requests) + len(other_requests)}
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)


# -- a tournament pairing's shard ------------------------------------------------------------

def seat_scores(status: str, forfeit_seat: str | None, mean_row: float | None,
                mean_col: float | None, a: np.ndarray, b: np.ndarray
                ) -> tuple[float | None, float | None]:
    """(row score, column score) of a tournament match (see :mod:`.tournament`)."""
    if status == "call_failed":
        return None, None
    if status == "forfeit":
        low_r, high_r = float(a.min()), float(a.max())
        low_c, high_c = float(b.min()), float(b.max())
        if forfeit_seat == "both":
            return low_r, low_c
        return (low_r, high_c) if forfeit_seat == "row" else (high_r, low_c)
    return mean_row, mean_col


def run_pair_shard(shard: PairShard, backends: Mapping[BackendSpec, Backend]
                   ) -> ShardResult:
    """Plays a tournament pairing's shard (:mod:`.tournament`): two players of any kind
    (axelrod strategies, models) in the row and column seats, every match in both seat orders
    (order 0: player_a in the row seat), all advancing together, one batch of calls per model
    and round, into ``repeated_duels``.

    Match ``i`` plays the stage game and length :func:`run_shard` draws for it (the same for
    every pairing and both seat orders); a model's request seed is ``derive_seed(llm_seed,
    match_id, round, seat)``; a stochastic strategy draws from ``derive_seed("repeated-duel",
    match_id, seat)``."""
    c = shard.config
    pid = c.pairing_id()
    matches: list[dict[str, Any]] = []
    for i in range(shard.start, shard.stop):
        a, b = stage_game(c.stage, shard.seed, i)
        planned = planned_rounds(c, shard.seed, i)
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
    statuses = [m["status"] for m in matches]
    return pair_result(shard, "repeated_duels", rows.table(), log, "pure", {
        "matches": len(matches), "games": len(matches), "forfeits": statuses.count("forfeit"),
        "call_failed": statuses.count("call_failed"),
        "calls": sum(m["calls"] for m in matches)})
