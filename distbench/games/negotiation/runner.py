"""Plays one negotiation shard: every episode concurrently, one model batch per round.

Each round collects what every unfinished episode asks for, sends all the asks of one model in
ONE ``backend.generate`` call (two different models: two concurrent calls), answers scripted
asks in-process, and hands every answer back to its episode. An episode finishes after at
most ``2 * max_messages + 2`` rounds. Returns Arrow tables; writes nothing. Deterministic: the
rows depend only on the shard (and the models' seeded answers), not on batching.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pyarrow as pa

from distbench.games.answers.reasoning import reasoning_mode
from distbench.games.base import ShardResult, seat_label
from distbench.games.negotiation import parse as P
from distbench.games.negotiation.game import Episode
from distbench.games.negotiation.instances import generate_instances
from distbench.games.negotiation.pareto import pareto_batch
from distbench.games.negotiation.plan import NAME, NegotiationShard, turn_seed
from distbench.games.negotiation.players import ModelPlayer, Player, Reply, scripted_player
from distbench.games.negotiation.schema import STORED_EPISODES, TURNS
from distbench.llm.base import Backend, BackendSpec
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows


def build_players(shard: NegotiationShard, backends: Mapping[BackendSpec, Backend]) -> dict[str, Player]:
    """One player per distinct label of the shard (a model in both seats is one player)."""
    out: dict[str, Player] = {}
    for p in (shard.player_a, shard.player_b):
        label = seat_label(p)
        if label in out:
            continue
        if isinstance(p, str):
            out[label] = scripted_player(p)
        else:
            out[label] = ModelPlayer(p, backends[p], temperature=shard.temperature,
                                     max_tokens=shard.max_tokens)
    return out


def make_episodes(shard: NegotiationShard) -> tuple[list[Episode], list[tuple[str, str, int]]]:
    """The shard's episodes, in a stable order, and (label a, label b, seat order) of each."""
    pairing = shard.pairing_id()
    episodes, seats = [], []
    for fi in shard.instances:
        for order in shard.seat_orders:
            a, b = shard.seats(order)
            episodes.append(Episode(
                episode_id=f"{fi.instance.instance_id}/{fi.mode}/{fi.lang}/p{pairing}/o{order}",
                instance=fi.instance, mode=fi.mode, lang=fi.lang, max_messages=fi.max_messages,
                seed_of=lambda eid, turn, seat: turn_seed(shard.llm_seed, eid, turn, seat),
                prompts=fi.prompts,
            ))
            seats.append((seat_label(a), seat_label(b), order))
    if shard.instances:
        return episodes, seats
    for inst in generate_instances(shard.seed, shard.start, shard.stop):
        for mode in shard.modes:
            for lang in shard.langs:
                for order in shard.seat_orders:
                    a, b = shard.seats(order)
                    episodes.append(Episode(
                        episode_id=f"{inst.instance_id}/{mode}/{lang}/p{pairing}/o{order}",
                        instance=inst, mode=mode, lang=lang, max_messages=shard.max_messages,
                        seed_of=lambda eid, turn, seat: turn_seed(shard.llm_seed, eid, turn, seat),
                    ))
                    seats.append((seat_label(a), seat_label(b), order))
    return episodes, seats


async def _play(episodes, seats, players, calls) -> None:
    while True:
        round_asks = [(e, ask) for e, ep in enumerate(episodes) for ask in ep.asks()]
        if not round_asks:
            return
        by_player: dict[str, list[int]] = {}
        for k, (e, ask) in enumerate(round_asks):
            label = seats[e][0] if ask.seat == "a" else seats[e][1]
            by_player.setdefault(label, []).append(k)
        labels = list(by_player)
        answers = await asyncio.gather(*(
            players[label].respond([round_asks[k][1] for k in by_player[label]]) for label in labels
        ))
        replies: list[Reply | None] = [None] * len(round_asks)
        for label, got in zip(labels, answers, strict=True):
            for k, reply in zip(by_player[label], got, strict=True):
                replies[k] = reply
        grouped: dict[int, list[int]] = {}
        for k, (e, _) in enumerate(round_asks):
            grouped.setdefault(e, []).append(k)
        for e, ks in grouped.items():
            ep = episodes[e]
            asks = [round_asks[k][1] for k in ks]
            got = [replies[k] for k in ks]
            call_ids = []
            for ask, reply in zip(asks, got, strict=True):
                if reply.request is None:
                    call_ids.append(None)
                    continue
                call_id = f"{ask.episode_id}/t{ask.turn}"
                call_ids.append(call_id)
                label = seats[e][0] if ask.seat == "a" else seats[e][1]
                calls.setdefault((label, ep.mode), []).append(
                    (reply.request, reply.response, call_id, ask.episode_id))
            ep.receive_round(asks, got, call_ids)


def episode_reasoning(a: Player, b: Player) -> str:
    """The ``reasoning`` of an episode between ``a`` and ``b``: its models' factor (scripted
    players have none; ``direct`` without a model), or ``<a>/<b>`` when two models differ."""
    modes = [reasoning_mode(p.spec) for p in (a, b) if p.spec is not None] or ["direct"]
    return modes[0] if len(set(modes)) == 1 else "/".join(modes)


def _nullable_list(values):
    return [list(v) if v is not None else None for v in values]


def episode_rows(run_id: str, shard_id: str, episodes: list[Episode],
                 seats: list[tuple[str, str, int]], latency: Mapping[str | None, float | None],
                 reasoning: Mapping[str, str] | None = None) -> tuple[Rows, Rows]:
    """The ``episodes`` and ``turns`` rows of played episodes (``seats``: per episode, (label a,
    label b, seat order); ``latency``: per call id, its latency; ``reasoning``: per episode
    id, its reasoning factor, default direct)."""
    reasoning = reasoning or {}
    outcomes = [ep.outcome() for ep in episodes]
    score_a = [-1 if s is None else s for _, s, _ in outcomes]
    score_b = [-1 if s is None else s for _, _, s in outcomes]
    insts = [ep.instance for ep in episodes]
    par = pareto_batch([i.counts for i in insts], [i.values_a for i in insts],
                       [i.values_b for i in insts], score_a, score_b)

    ep_rows, turn_rows = Rows(STORED_EPISODES), Rows(TURNS)
    for e, ep in enumerate(episodes):
        inst = ep.instance
        compatible, sa, sb = outcomes[e]
        aborted = ep.aborted
        improve = None if aborted else int(par.max_improvement[e])
        main = None
        if not aborted:
            main = 100.0 - 100.0 * improve / 10.0 if compatible else 0.0
        row = {
            "run_id": run_id, "shard_id": shard_id, "family": NAME,
            "episode_id": ep.episode_id, "instance_id": inst.instance_id, "seed": inst.seed,
            "instance_index": inst.index, "mode": ep.mode, "lang": ep.lang,
            "player_a": seats[e][0], "player_b": seats[e][1], "seat_order": seats[e][2],
            "item_types": [inst.name(ep.lang, k, 2) for k in range(inst.num_types)],
            "counts": list(inst.counts), "values_a": list(inst.values_a),
            "values_b": list(inst.values_b),
            "proposal_a": _nullable_list([ep.proposals["a"]])[0],
            "proposal_b": _nullable_list([ep.proposals["b"]])[0],
            "score_a": sa, "score_b": sb,
            "success": (not aborted) and compatible, "lose": (not aborted) and not compatible,
            "aborted": aborted, "abort_reason": ep.abort_reason, "abort_player": ep.abort_seat,
            "pareto_optimal": None if aborted else bool(par.pareto_optimal[e]),
            "max_pareto_improvement": improve, "main_score": main,
            "sum_score_ratio": None if aborted else (sa + sb) / int(par.max_sum[e]),
            "comp_score": None if aborted else (sa - sb) / 10.0,
            "max_sum_score": int(par.max_sum[e]), "max_score_a": int(par.max_a[e]),
            "max_score_b": int(par.max_b[e]), "pareto_frontier_size": int(par.frontier_size[e]),
            "max_messages": ep.max_messages, "num_turns": len(ep.turns),
            "num_calls": sum(t.call_id is not None for t in ep.turns),
            "parser_version": P.PARSER_VERSION, "reasoning": reasoning.get(ep.episode_id, "direct"),
            "diverged_at": None,
        }
        ep_rows.add(row)
        for t in ep.turns:
            trow = {
                "run_id": run_id, "shard_id": shard_id, "episode_id": ep.episode_id,
                "turn": t.turn, "player": t.seat,
                "player_label": seats[e][0] if t.seat == "a" else seats[e][1],
                "kind": t.kind, "raw_text": t.raw_text, "parse_status": t.parse_status,
                "parse_detail": t.parse_detail,
                "proposal": list(t.proposal) if t.proposal is not None else None,
                "call_id": t.call_id, "latency_ms": latency.get(t.call_id),
                "parser_version": None if t.raw_text is None else P.PARSER_VERSION,
                "reasoning_text": t.reasoning_text,
            }
            turn_rows.add(trow)

    return ep_rows, turn_rows


def run_shard(shard: NegotiationShard, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard`` with its models (``backends[spec]`` for each of ``shard.specs``)."""
    players = build_players(shard, backends)
    episodes, seats = make_episodes(shard)
    calls: dict[tuple[str, str], list] = {}
    asyncio.run(_play(episodes, seats, players, calls))
    latency = {cid: resp.latency_ms for group in calls.values() for _, resp, cid, _ in group}

    factor = {e.episode_id: episode_reasoning(players[a], players[b])
              for e, (a, b, _) in zip(episodes, seats, strict=True)}
    ep_rows, turn_rows = episode_rows(shard.run_id, shard.shard_id, episodes, seats, latency,
                                      factor)
    episodes_tab, turns_tab = ep_rows.table(), turn_rows.table()
    tables = {"episodes": (shard.shard_id, episodes_tab), "turns": (shard.shard_id, turns_tab)}
    specs = {seat_label(s): s for s in shard.specs}
    call_tabs = []
    for (label, mode), group in calls.items():
        reqs, resps, cids, tids = zip(*group, strict=True)
        call_tabs.append(calls_table(shard.run_id, shard.shard_id, specs[label], mode,
                                     reqs, resps, cids, tids))
    if call_tabs:
        tables["calls"] = (shard.shard_id, pa.concat_tables(call_tabs))
    stats = {
        "episodes": len(episodes),
        "success": sum(1 for ep in episodes if ep.outcome()[0]),
        "aborted": sum(ep.aborted for ep in episodes),
        "call_failed": sum(ep.abort_reason == "call_failed" for ep in episodes),
        "turns": turns_tab.num_rows,
        "calls": sum(t.num_rows for t in call_tabs),
    }
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)
