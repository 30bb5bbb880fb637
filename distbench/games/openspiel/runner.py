"""Plays one openspiel shard: every match concurrently, one model batch per round.

Each round advances every unfinished match through chance nodes (drawn from the match's
seeded generator) and scripted moves until a model is to move, then sends all the asks of one
model in ONE ``backend.generate`` call (two models: two concurrent calls) and applies the
answers. An answer that is not a legal move ends its match as a forfeit of that player (the
row keeps the raw text and the status); a failed call ends it as ``call_failed``. Nothing is
ever substituted. Logprob mode asks the model once per information state instead (no match).
Returns Arrow tables; writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.logprob import read_strategies
from distbench.games.base import ShardResult, seat_label
from distbench.games.openspiel.plan import (
    NAME,
    OpenSpielShard,
    chance_seed,
    move_seed,
)
from distbench.games.openspiel.players import Scripted
from distbench.games.openspiel.reference import Reference, reference
from distbench.games.openspiel.rules import (
    PROMPT_CUE,
    logprob_prompt,
    parse_move,
    prompt,
    rules_text,
)
from distbench.games.openspiel.schema import MATCHES, MOVES, POLICIES
from distbench.games.openspiel.spiel import info_string, load_game, observation, short_name
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

CHAT_TOKENS = 256
"""Default completion budget of a chat answer (it may reason first, as in the matrix family)."""
COMPLETION_TOKENS = 16
"""Default budget of a completion-style answer (the continuation after ``Action:``)."""


@dataclass
class Match:
    """One match being played."""

    match_id: str
    index: int
    order: int
    labels: tuple[str, str]
    players: tuple[Any, Any]  # per player id: a Scripted or a BackendSpec
    state: Any
    chance_rng: np.random.Generator
    chance: list[int] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    forfeit_seat: int | None = None
    forfeit_status: str | None = None
    call_failed: bool = False

    @property
    def done(self) -> bool:
        return self.state.is_terminal() or self.forfeit_seat is not None or self.call_failed


@dataclass(frozen=True)
class Ask:
    """A model's turn: the match, the request and what it needs to read the answer."""

    match: Match
    spec: BackendSpec
    request: Request
    legal: tuple[int, ...]
    names: tuple[str, ...]
    info_state: str


def _move_row(match: Match, seat: int, info: str, legal, names, ref: Reference, state: Any,
              action: int | None, status: str, detail: str, raw: str | None,
              call_id: str | None, latency: float | None) -> dict[str, Any]:
    values = ref.values(state)
    best = max(values.values()) if values else None
    value = values.get(action) if values and action is not None else None
    return {
        "match_id": match.match_id, "ply": len(match.moves), "seat": seat,
        "player_label": match.labels[seat], "is_a": seat == match.order,
        "info_state": info, "legal_actions": list(names), "legal_action_ids": list(legal),
        "raw_text": raw, "parse_status": status, "parse_detail": detail, "action": action,
        "action_name": names[legal.index(action)] if action is not None else None,
        "regret": None if value is None else max(0.0, best - value),
        "set_regret": None if action is None else ref.least_regret(state, action),
        "best_value": best, "action_value": value, "call_id": call_id, "latency_ms": latency,
    }


def _advance(match: Match, game: Any, ref: Reference, rules: str, shard: OpenSpielShard,
             continuation: dict[BackendSpec, bool]) -> Ask | None:
    """Plays chance and scripted moves; returns the model's ask, or None when done."""
    state = match.state
    while not match.done:
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            p = np.asarray(probs, dtype=np.float64)
            action = int(outcomes[match.chance_rng.choice(len(outcomes), p=p / p.sum())])
            match.chance.append(action)
            state.apply_action(action)
            continue
        seat = state.current_player()
        legal = tuple(int(a) for a in state.legal_actions())
        names = tuple(state.action_to_string(seat, a) for a in legal)
        info = info_string(state, seat)
        player = match.players[seat]
        if isinstance(player, Scripted):
            action = player.act(state)
            match.moves.append(_move_row(match, seat, info, legal, names, ref, state, action,
                                         "ok", "", None, None, None))
            state.apply_action(action)
            continue
        text = prompt(rules, seat, info, list(names), observation=observation(state, seat))
        completion = continuation[player]
        if completion:
            text = text.rsplit("\n", 1)[0] + "\n\n" + PROMPT_CUE
        request = Request(
            prompt=text, seed=move_seed(shard.llm_seed, match.match_id, len(match.moves)),
            task=f"matrix.pure:{len(legal)}",  # the dummy answers it: 'Action: k', k in 1..m
            max_tokens=shard.max_tokens or (COMPLETION_TOKENS if completion else CHAT_TOKENS),
            temperature=shard.temperature)
        return Ask(match, player, request, legal, names, info)
    return None


def _apply(ask: Ask, response: Response, ref: Reference, continuation: bool,
           calls: dict[BackendSpec, list]) -> None:
    match = ask.match
    state = match.state
    seat = state.current_player()
    call_id = f"{match.match_id}/m{len(match.moves)}"
    calls.setdefault(ask.spec, []).append((ask.request, response, call_id, match.match_id))
    if response.status != "ok" or response.text is None:
        match.moves.append(_move_row(match, seat, ask.info_state, ask.legal, ask.names, ref,
                                     state, None, "call_failed", response.error or "call failed",
                                     None, call_id, response.latency_ms))
        match.call_failed = True
        return
    answer = parse_move(response.text, list(ask.names), continuation=continuation)
    action = ask.legal[answer.index] if answer.index is not None else None
    match.moves.append(_move_row(match, seat, ask.info_state, ask.legal, ask.names, ref, state,
                                 action, answer.status, answer.detail, response.text, call_id,
                                 response.latency_ms))
    if action is None:
        match.forfeit_seat = seat
        match.forfeit_status = answer.status
        return
    state.apply_action(action)


def make_matches(shard: OpenSpielShard, game: Any, ref: Reference) -> list[Match]:
    """The shard's matches, in a stable order (index, seat order)."""
    pairing = shard.pairing_id()
    out = []
    for index in range(shard.start, shard.stop):
        for order in shard.seat_orders:
            match_id = f"{shard.game}/s{shard.seed}/g{index}/p{pairing}/o{order}"
            seats = shard.seats(order)
            players = tuple(
                Scripted(p, game, ref, move_seed(shard.llm_seed, match_id, -1 - seat),
                         shard.mcts_simulations) if isinstance(p, str) else p
                for seat, p in enumerate(seats))
            out.append(Match(
                match_id=match_id, index=index, order=order,
                labels=(seat_label(seats[0]), seat_label(seats[1])), players=players,
                state=game.new_initial_state(),
                chance_rng=np.random.default_rng(chance_seed(shard.game, shard.seed, index))))
    return out


async def _play(matches: list[Match], game: Any, ref: Reference, rules: str,
                shard: OpenSpielShard, backends: Mapping[BackendSpec, Backend],
                calls: dict[BackendSpec, list]) -> None:
    completion = {s: s.style == "completion" for s in shard.specs}
    while True:
        asks = [a for m in matches if (a := _advance(m, game, ref, rules, shard, completion))]
        if not asks:
            return
        by_spec: dict[BackendSpec, list[Ask]] = {}
        for ask in asks:
            by_spec.setdefault(ask.spec, []).append(ask)
        specs = list(by_spec)
        answers = await asyncio.gather(*(
            backends[s].generate([a.request for a in by_spec[s]]) for s in specs))
        for spec, got in zip(specs, answers, strict=True):
            for ask, response in zip(by_spec[spec], got, strict=True):
                _apply(ask, response, ref, completion[spec], calls)


def self_play(match: Match) -> bool:
    """Whether both seats are the same model (``--opponent self``, or the player named
    again as the opponent): then both seats' answers are the model's."""
    first, second = match.players
    return isinstance(first, BackendSpec) and first == second


def outcome(match: Match) -> tuple[str, float | None]:
    """(player_a's outcome, its quality): win 1, draw 0.5, loss 0, forfeit 0; a failed call
    (left out) has no quality. Another player's forfeit is a win; in self-play a forfeit by
    either seat is the model's own (GAMES.md, as in bimatrix and repeated self-play)."""
    a = match.order
    if match.call_failed:
        return "call_failed", None
    if match.forfeit_seat is not None:
        own = match.forfeit_seat == a or self_play(match)
        return ("forfeit", 0.0) if own else ("win", 1.0)
    ret = match.state.returns()[a]
    if ret > 0:
        return "win", 1.0
    if ret < 0:
        return "loss", 0.0
    return "draw", 0.5


def run_shard(shard: OpenSpielShard, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard`` with its models (``backends[spec]`` for each of ``shard.specs``)."""
    game = load_game(shard.game)
    ref = reference(shard.game)
    rules, _ = rules_text(game, short_name(shard.game))
    if shard.mode == "logprob":
        return _logprob_shard(shard, game, ref, rules, backends)
    matches = make_matches(shard, game, ref)
    calls: dict[BackendSpec, list] = {}
    asyncio.run(_play(matches, game, ref, rules, shard, backends, calls))

    match_rows, move_rows = Rows(MATCHES), Rows(MOVES)
    for m in matches:
        result, quality = outcome(m)
        finished = m.state.is_terminal() and m.forfeit_seat is None and not m.call_failed
        returns = [float(r) for r in m.state.returns()] if finished else None
        regrets = [r["regret"] for r in m.moves if r["is_a"] and r["regret"] is not None]
        match_rows.add({
            "run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
            "match_id": m.match_id, "game": shard.game, "seed": shard.seed,
            "game_index": m.index, "player_a": m.labels[m.order],
            "player_b": m.labels[1 - m.order], "seat_a": m.order, "returns": returns,
            "return_a": returns[m.order] if returns else None, "outcome_a": result,
            "forfeit_seat": m.forfeit_seat, "forfeit_status": m.forfeit_status,
            "quality_a": quality, "num_moves": len(m.moves),
            "moves_a": sum(r["is_a"] for r in m.moves),
            "regret_a": float(np.mean(regrets)) if regrets else None, "reference": ref.kind,
            "reference_name": ref.name,
            "chance_outcomes": m.chance,
            "num_calls": sum(r["call_id"] is not None for r in m.moves),
        })
        for row in m.moves:
            move_rows.add({"run_id": shard.run_id, "shard_id": shard.shard_id, **row})
    tables = {"matches": (shard.shard_id, match_rows.table()),
              "moves": (shard.shard_id, move_rows.table())}
    call_tab = _calls(shard, calls)
    if call_tab is not None:
        tables["calls"] = (shard.shard_id, call_tab)
    stats = {
        "matches": len(matches),
        "forfeits": sum(m.forfeit_seat is not None for m in matches),
        "call_failed": sum(m.call_failed for m in matches),
        "moves": sum(len(m.moves) for m in matches),
        "calls": 0 if call_tab is None else call_tab.num_rows,
    }
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)


def _calls(shard: OpenSpielShard, calls: dict[BackendSpec, list]) -> pa.Table | None:
    tabs = []
    for spec, group in calls.items():
        reqs, resps, cids, tids = zip(*group, strict=True)
        tabs.append(calls_table(shard.run_id, shard.shard_id, spec, shard.mode, reqs, resps,
                                cids, tids))
    return pa.concat_tables(tabs) if tabs else None


def _logprob_shard(shard: OpenSpielShard, game: Any, ref: Reference, rules: str,
                   backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """One question per information state; the policy read from next-token probabilities."""
    if ref.kind != "equilibrium":
        raise ValueError(f"{shard.game}: logprob mode needs a small imperfect-information "
                         f"game (its information states), and this one has none ({ref.detail})")
    backend = backends[shard.player]
    label = seat_label(shard.player)
    keys = sorted(ref.infostates)
    by_m: dict[int, list[str]] = {}
    for key in keys:
        by_m.setdefault(len(ref.infostates[key][1]), []).append(key)
    rows = Rows(POLICIES)
    reqs, resps, cids, tids = [], [], [], []
    for m, group in sorted(by_m.items()):
        prompts = [logprob_prompt(rules, ref.infostates[k][0], k, list(ref.infostates[k][2]))
                   for k in group]
        seeds = [move_seed(shard.llm_seed, f"{shard.game}/logprob/{k}", 0) for k in group]
        readings, log = read_strategies(
            prompts, seeds, m, lambda batch: asyncio.run(backend.generate(batch)),
            temperature=shard.temperature, task=f"matrix.logprob:{m}")
        first: dict[int, str] = {}
        for n, (g, req, resp) in enumerate(log):
            cid = f"{shard.game}/logprob/{group[g]}/c{n}"
            first.setdefault(g, cid)
            reqs.append(req)
            resps.append(resp)
            cids.append(cid)
            tids.append(f"{shard.game}/logprob/{group[g]}")
        for g, (key, reading) in enumerate(zip(group, readings, strict=True)):
            seat, legal, names = ref.infostates[key]
            rows.add({
                "run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
                "game": shard.game, "player_a": label, "info_state": key, "seat": seat,
                "legal_actions": list(names), "legal_action_ids": list(legal),
                "probs": None if reading.strategy is None else [float(x) for x in reading.strategy],
                "parse_status": reading.status,
                "label_mass": None if np.isnan(reading.label_mass) else float(reading.label_mass),
                "raw_text": reading.text, "call_id": first.get(g),
            })
    tables = {"openspiel_policies": (shard.shard_id, rows.table())}
    if reqs:
        tables["calls"] = (shard.shard_id, calls_table(shard.run_id, shard.shard_id,
                                                       shard.player, shard.mode, reqs, resps,
                                                       cids, tids))
    stats = {"matches": 0, "info_states": len(keys), "calls": len(reqs)}
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)
