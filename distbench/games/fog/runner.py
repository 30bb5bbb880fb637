"""Plays one fog-of-war shard and returns its tables (it writes nothing).

All games of the shard advance turn by turn together: scripted agents plan in-process, and
every LLM agent's request of the turn (across the shard's games) goes to its backend in ONE
``generate`` call per model, so an endpoint actor sees one batch per turn.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from distbench.games.answers.reasoning import reasoning_budget, reasoning_mode
from distbench.games.base import ShardResult
from distbench.games.fog.agents import ACTION_KINDS, OBJECTIVES, Agent, make_agent
from distbench.games.fog.metrics import (
    brier,
    brier_index,
    entropy_bits,
    game_metrics,
    log_loss_index,
)
from distbench.games.fog.plan import FogShard
from distbench.games.fog.play import GameSession
from distbench.games.fog.rules import Event, format_order
from distbench.games.fog.schema import FOG_EVENTS, FOG_GAMES, FOG_REPORTS
from distbench.games.fog.text import PARSER_VERSION, LLMAgent
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.calls import calls_table

SIDES = ("a", "b")


def game_id(shard: FogShard, index: int) -> str:
    return f"fog/s{shard.seed}/{shard.agent_a}~{shard.agent_b}/g{index}"


def request_seed(llm_seed: int, gid: str, turn: int, player: int) -> int:
    digest = hashlib.blake2b(f"{llm_seed}/{gid}/{turn}/{player}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def _agents(shard: FogShard) -> tuple[Agent, Agent]:
    out = []
    for label, spec in ((shard.agent_a, shard.llm_a), (shard.agent_b, shard.llm_b)):
        if spec is None:
            out.append(make_agent(label))
        else:
            cot = reasoning_mode(spec) == "cot"
            out.append(LLMAgent(label, spec.style,
                                reasoning_budget(spec) if cot else shard.max_tokens,
                                shard.temperature, reasoning_mode(spec)))
    return out[0], out[1]


def play_sessions(shard: FogShard, backends: Mapping[BackendSpec, Backend]):
    """Plays every game of the shard; returns (sessions, calls per spec)."""
    sessions = [GameSession(shard.rules, _agents(shard), shard.seed, i, game_id(shard, i))
                for i in range(shard.start, shard.stop)]
    calls: dict[BackendSpec, dict[str, list]] = {}
    # One event loop for the shard's turns (an endpoint's connections are kept from one turn
    # to the next; a loop per turn would open them again every turn).
    with asyncio.Runner() as runner:
        _play_turns(shard, sessions, backends, calls, runner)
    return sessions, calls


def _play_turns(shard: FogShard, sessions: list, backends: Mapping[BackendSpec, Backend],
                calls: dict[BackendSpec, dict[str, list]], runner: asyncio.Runner) -> None:
    """Plays the sessions turn by turn, every turn's calls in ``runner``'s loop."""
    specs = (shard.llm_a, shard.llm_b)
    while True:
        active = [s for s in sessions if not s.done]
        if not active:
            break
        plans: dict[tuple[int, int], tuple] = {}
        call_ids: dict[tuple[int, int], str] = {}
        pending: dict[BackendSpec, list[tuple[int, int, object, Request, str]]] = {}
        for si, session in enumerate(active):
            obs = session.observations()
            turn = obs[0].turn
            for p in (0, 1):
                agent = session.agents[p]
                if isinstance(agent, LLMAgent):
                    req = agent.request(obs[p], request_seed(shard.llm_seed, session.game_id, turn, p))
                    cid = f"{shard.shard_id}/{session.index}/t{turn}/{SIDES[p]}"
                    pending.setdefault(specs[p], []).append((si, p, obs[p], req, cid))
                else:
                    plans[(si, p)] = agent.observe_and_plan(p, obs[p], session.rngs[p])
        for spec, items in pending.items():
            requests = [it[3] for it in items]
            responses: list[Response] = runner.run(backends[spec].generate(requests))
            log = calls.setdefault(spec, {"requests": [], "responses": [], "ids": [], "trials": []})
            for (si, p, obs_p, req, cid), resp in zip(items, responses, strict=True):
                agent = active[si].agents[p]
                plans[(si, p)] = agent.finish(resp, obs_p)
                call_ids[(si, p)] = cid
                log["requests"].append(req)
                log["responses"].append(resp)
                log["ids"].append(cid)
                log["trials"].append(f"{active[si].game_id}/t{obs_p.turn}/{SIDES[p]}")
        for si, session in enumerate(active):
            session.apply((plans[(si, 0)], plans[(si, 1)]),
                          (call_ids.get((si, 0)), call_ids.get((si, 1))))


def game_reasoning(agents) -> str:
    """The ``reasoning`` of a game: its LLM agents' factor (scripted agents have none;
    ``direct`` without an LLM agent), ``<a>/<b>`` when two differ."""
    modes = [a.reasoning for a in agents if isinstance(a, LLMAgent)] or ["direct"]
    return modes[0] if len(set(modes)) == 1 else "/".join(modes)


def _nan_none(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _tables(shard: FogShard, sessions: list[GameSession]) -> tuple[pa.Table, pa.Table, pa.Table]:
    k = shard.rules.num_forces
    games: dict[str, list] = {f.name: [] for f in FOG_GAMES}
    reports: dict[str, list] = {f.name: [] for f in FOG_REPORTS}
    events: dict[str, list] = {f.name: [] for f in FOG_EVENTS}
    common = {"run_id": shard.run_id, "shard_id": shard.shard_id}
    for s in sessions:
        g = s.game
        revealed: dict[tuple[int, int], set[int]] = {}
        for seq, ev in enumerate(s.events):
            _event_row(events, common, s.game_id, seq, ev)
            if ev.kind == "scout_reveal":
                revealed.setdefault((ev.player, ev.turn), set()).add(ev.details["enemy"])
        per_side: dict[int, dict] = {}
        own_objective = {(r.turn, r.player): r.report.objective or "" for r in s.records}
        for p in (0, 1):
            recs = [r for r in s.records if r.player == p]
            act_probs: list[np.ndarray] = []
            act_idx: list[int] = []
            obj_probs: list[np.ndarray] = []
            obj_idx: list[int] = []
            truth = np.asarray(s.true_powers[1 - p], dtype=np.int64)
            valid = np.array([r.report.beliefs is not None for r in recs], dtype=bool)
            bel = np.full((len(recs), k, 5), np.nan)
            for t, r in enumerate(recs):
                if r.report.beliefs is not None:
                    bel[t] = r.report.beliefs
            ent = np.where(valid[:, None], entropy_bits(np.nan_to_num(bel)), np.nan)
            mean_ent = ent.mean(axis=1) if len(recs) else np.zeros(0)
            pred, act = [], []
            prev_t = None
            for t, r in enumerate(recs):
                alive = np.asarray(r.enemy_alive, dtype=bool)
                for j in np.flatnonzero(alive):
                    pred.append(r.report.predicted_actions[j] if j < len(r.report.predicted_actions) else "")
                    act.append(r.enemy_kinds[j])
                gain = None
                if valid[t] and prev_t is not None:
                    forces = sorted(revealed.get((p, r.turn - 1), set()))
                    gain = float(sum(ent[prev_t, j] - ent[t, j] for j in forces))
                conf_b = (float(np.nanmax(bel[t][alive], axis=1).mean())
                          if valid[t] and alive.any() else None)
                reports["turn"].append(r.turn)
                reports["player"].append(SIDES[p])
                reports["agent"].append(s.agents[p].name)
                reports["beliefs"].append(bel[t].tolist() if valid[t] else None)
                reports["true_powers"].append(truth.tolist())
                reports["enemy_alive"].append(list(r.enemy_alive))
                reports["predicted_actions"].append(
                    [str(x) for x in r.report.predicted_actions] + [""] * (k - len(r.report.predicted_actions)))
                reports["actual_actions"].append(list(r.enemy_kinds))
                reports["predicted_objective"].append(r.report.predicted_objective or "")
                reports["orders"].append([format_order(o) for o in r.report.orders])
                reports["confidence"].append(_nan_none(r.report.confidence)
                                             if r.report.confidence is not None else None)
                reports["belief_entropy"].append(_nan_none(mean_ent[t]))
                reports["belief_confidence"].append(conf_b)
                reports["info_gain"].append(gain)
                reports["brier"].append(_nan_none(brier(bel[t], truth)) if valid[t] else None)
                reports["report_status"].append(r.report.status)
                reports["raw_text"].append(r.report.raw_text)
                reports["call_id"].append(r.call_id)
                reports["parser_version"].append(
                    PARSER_VERSION if isinstance(s.agents[p], LLMAgent) else None)
                reports["reasoning_text"].append(r.report.extra.get("reasoning"))
                reports["game_id"].append(s.game_id)
                scored = _prediction_columns(reports, r, own_objective.get((r.turn, 1 - p), ""))
                act_probs += scored[0]
                act_idx += scored[1]
                obj_probs += scored[2]
                obj_idx += scored[3]
                if valid[t]:
                    prev_t = t
            per_side[p] = game_metrics(bel, truth, valid, mean_ent, np.array(pred, dtype=object),
                                       np.array(act, dtype=object))
            per_side[p]["reports"] = len(recs)
            per_side[p].update(_prediction_scores(act_probs, act_idx, obj_probs, obj_idx))
        for name, value in {
            "game_id": s.game_id, "seed": shard.seed, "game_index": s.index,
            "agent_a": shard.agent_a, "agent_b": shard.agent_b,
            "provider_a": shard.llm_a.provider if shard.llm_a else None,
            "provider_b": shard.llm_b.provider if shard.llm_b else None,
            "scout_accuracy": shard.rules.scout_accuracy, "scouting": shard.rules.scouting,
            "board_size": shard.rules.board_size, "num_forces": k,
            "max_turns": shard.rules.max_turns, "winner": g.winner, "turns": g.turn,
            "end_reason": g.end_reason, "power_a": list(s.true_powers[0]),
            "power_b": list(s.true_powers[1]), "sovereign_a": g.sovereign[0],
            "sovereign_b": g.sovereign[1], "survivors_a": sum(g.alive[0]),
            "survivors_b": sum(g.alive[1]), "surviving_power_a": g.total_power(0),
            "surviving_power_b": g.total_power(1),
            "parser_version": (PARSER_VERSION if any(isinstance(a, LLMAgent) for a in s.agents)
                               else None),
            "reasoning": game_reasoning(s.agents),
            "diverged_at": None,
        }.items():
            games[name].append(value)
        for p in (0, 1):
            m = per_side[p]
            side = SIDES[p]
            for metric in ("brier", "log_loss", "calibration_error", "tom_delta",
                           "uncertainty_reduction"):
                games[f"{metric}_{side}"].append(_nan_none(m[metric]))
            games[f"valid_reports_{side}"].append(m["valid_reports"])
            games[f"reports_{side}"].append(m["reports"])
            for metric in PREDICTION_METRICS:
                games[f"{metric}_{side}"].append(_nan_none(m[metric]))
    for cols in (games, reports):
        n = len(cols["game_id"])
        cols["run_id"] = [shard.run_id] * n
        cols["shard_id"] = [shard.shard_id] * n
    return (pa.table(games, schema=FOG_GAMES), pa.table(reports, schema=FOG_REPORTS),
            pa.table(events, schema=FOG_EVENTS))


PREDICTION_METRICS = ("action_brier", "action_log_loss", "objective_brier", "objective_log_loss")


def _prediction_columns(reports: dict[str, list], rec, actual_objective: str):
    """Appends one report's action and objective prediction columns; returns what it scored:
    (action rows, their outcome indices, objective rows, their outcome indices)."""
    rep = rec.report
    alive = np.asarray(rec.enemy_alive, dtype=bool)
    rows: list[np.ndarray] = []
    idx: list[int] = []
    if rep.action_probs is None:
        reports["action_probs"].append(None)
    else:
        probs = np.asarray(rep.action_probs, dtype=np.float64)
        reports["action_probs"].append(
            [row.tolist() if np.isfinite(row).all() else None for row in probs])
        for j in np.flatnonzero(alive):
            if j < len(probs) and np.isfinite(probs[j]).all():
                rows.append(probs[j])
                idx.append(ACTION_KINDS.index(rec.enemy_kinds[j]))
    reports["action_confidence"].append(
        float(np.mean([row.max() for row in rows])) if rows else None)
    reports["action_brier"].append(_nan_none(brier_index(np.array(rows), np.array(idx)))
                                   if rows else None)
    reports["action_log_loss"].append(_nan_none(log_loss_index(np.array(rows), np.array(idx)))
                                      if rows else None)
    obj = None if rep.objective_probs is None else np.asarray(rep.objective_probs, np.float64)
    reports["objective_probs"].append(None if obj is None else obj.tolist())
    reports["actual_objective"].append(actual_objective)
    reports["objective_confidence"].append(None if obj is None else float(obj.max()))
    scored = obj is not None and actual_objective in OBJECTIVES
    k = OBJECTIVES.index(actual_objective) if scored else 0
    reports["objective_brier"].append(
        _nan_none(brier_index(obj[None], np.array([k]))) if scored else None)
    reports["objective_log_loss"].append(
        _nan_none(log_loss_index(obj[None], np.array([k]))) if scored else None)
    return rows, idx, ([obj] if scored else []), ([k] if scored else [])


def _prediction_scores(act_probs, act_idx, obj_probs, obj_idx) -> dict[str, float]:
    """One player's per-game prediction scores over every scored (turn, force) / turn."""
    def score(fn, probs, idx):
        return fn(np.array(probs), np.array(idx)) if probs else math.nan

    return {"action_brier": score(brier_index, act_probs, act_idx),
            "action_log_loss": score(log_loss_index, act_probs, act_idx),
            "objective_brier": score(brier_index, obj_probs, obj_idx),
            "objective_log_loss": score(log_loss_index, obj_probs, obj_idx)}


def _event_row(cols: dict[str, list], common: dict, gid: str, seq: int, ev: Event) -> None:
    cols["run_id"].append(common["run_id"])
    cols["shard_id"].append(common["shard_id"])
    cols["game_id"].append(gid)
    cols["turn"].append(ev.turn)
    cols["seq"].append(seq)
    cols["kind"].append(ev.kind)
    cols["player"].append(None if ev.player is None else SIDES[ev.player])
    cols["force"].append(ev.force)
    cols["details"].append(json.dumps(ev.details, sort_keys=True))


def run_shard(shard: FogShard, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard`` (models from ``backends``) and returns its tables."""
    sessions, calls = play_sessions(shard, backends)
    games, reports, events = _tables(shard, sessions)
    tables = {"fog_games": (shard.shard_id, games), "fog_reports": (shard.shard_id, reports),
              "fog_events": (shard.shard_id, events)}
    call_tables = [calls_table(shard.run_id, shard.shard_id, spec, "fog", log["requests"],
                               log["responses"], log["ids"], log["trials"])
                   for spec, log in calls.items()]
    if call_tables:
        tables["calls"] = (shard.shard_id, pa.concat_tables(call_tables))
    statuses = reports.column("report_status").to_pylist()
    stats = {"games": games.num_rows, "reports": reports.num_rows,
             "valid_reports": sum(1 for x in statuses if x == "ok"),
             "calls": sum(t.num_rows for t in call_tables)}
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)
