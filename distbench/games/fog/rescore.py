"""Re-reading a fog run's stored answers (``distbench rescore``): the family's rescore hook.

Every stored game is played again from its seed by today's engine: scripted agents plan again
(their random streams are the game's, so they play as they did), and each LLM agent's answer is
the stored one (``fog_reports.raw_text`` of the same game, turn and player) read by today's
parser (:func:`.text.parse_answer`). Beliefs, predictions and every metric are computed again.
No model is called.

**Divergence.** The orders an answer is read into decide the rest of the game. When a re-read
answer gives other orders than the stored ones (``fog_reports.orders``), the later answers were
given to positions that would no longer arise: the game is **kept as stored** (its rows
unchanged) and marked with the turn where it diverged (``fog_games.diverged_at``); its reports
count as unchanged in the transitions and the game as ``diverged``. Games whose orders are all
the same are re-scored in full (a re-read may still change beliefs, predictions, statuses).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

import pyarrow as pa

from distbench.games.answers.replay import stored_calls
from distbench.games.base import Rescored, ShardResult, StoredShard
from distbench.games.fog.agents import make_agent
from distbench.games.fog.play import GameSession
from distbench.games.fog.rules import Rules, format_order
from distbench.games.fog.runner import SIDES, _tables
from distbench.games.fog.schema import FOG_EVENTS, FOG_GAMES, FOG_REPORTS
from distbench.games.fog.text import LLMAgent, parse_answer
from distbench.llm.base import Response


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook: today's parser (see the module docstring)."""
    return rescore_shard(stored)


class _ReplayAgent(LLMAgent):
    """An LLM agent whose answers are read by ``read`` (the parser under test or today's)."""

    def __init__(self, label: str, style: str, read: Callable[..., Any],
                 reasoning: str = "direct") -> None:
        super().__init__(label, style, 0, 0.0, reasoning)
        self.read = read

    def finish(self, response: Response, observation):  # noqa: ANN001 - as LLMAgent
        if response.status != "ok" or response.text is None:
            orders, report = self.read(None, observation)
            report.raw_text = response.text
            return orders, report
        reasoning, full = self.answer_part(response.text)
        orders, report = self.read(full, observation)
        report.raw_text = response.text
        report.extra["reasoning"] = reasoning
        return orders, report


def _reasoning(spec: Mapping[str, Any]) -> str:
    """A recorded model's reasoning factor (its ``reasoning`` option; direct when absent)."""
    for item in spec.get("options") or []:
        if isinstance(item, list | tuple) and len(item) == 2 and item[0] == "reasoning":
            return str(item[1])
    return "direct"


def _spec_field(spec: Mapping[str, Any] | None, name: str) -> Any:
    return None if spec is None else spec.get(name)


def rescore_shard(stored: StoredShard, *, read: Callable[..., Any] = parse_answer,
                  parser_version: str | None = None) -> Rescored:
    """Re-reads and re-scores one stored fog shard.

    Args:
        stored: The shard's stored tables (``fog_games``, ``fog_reports``, ``fog_events``,
            maybe ``calls``) and its recorded shard (rules, agents, models).
        read: The answer parser, ``(text or None, observation) -> (orders, AgentReport)``.
        parser_version: What the re-read rows' ``parser_version`` says (default: today's).
    """
    from distbench.games.fog.text import PARSER_VERSION

    version = parser_version or PARSER_VERSION
    shard = stored.shard
    rules = Rules(**shard["rules"])
    llm = (shard.get("llm_a"), shard.get("llm_b"))
    labels = (shard["agent_a"], shard["agent_b"])
    ns = SimpleNamespace(
        run_id=stored.run_id, shard_id=stored.shard_id, seed=int(shard["seed"]),
        agent_a=labels[0], agent_b=labels[1], rules=rules,
        llm_a=None if llm[0] is None else SimpleNamespace(provider=llm[0]["provider"]),
        llm_b=None if llm[1] is None else SimpleNamespace(provider=llm[1]["provider"]))
    games = stored.table("fog_games").to_pylist()
    reports_by_game: dict[str, list[dict]] = defaultdict(list)
    for r in stored.table("fog_reports").to_pylist():
        reports_by_game[r["game_id"]].append(r)
    events_by_game: dict[str, list[dict]] = defaultdict(list)
    for e in stored.table("fog_events").to_pylist():
        events_by_game[e["game_id"]].append(e)

    transitions: Counter[tuple[str, str, str]] = Counter()
    parts: dict[str, list[pa.Table]] = {"fog_games": [], "fog_reports": [], "fog_events": []}
    diverged = 0
    for game in games:
        gid = game["game_id"]
        old_reports = reports_by_game.get(gid, [])
        by_key = {(r["turn"], r["player"]): r for r in old_reports}
        agents = tuple(
            make_agent(labels[p]) if llm[p] is None
            else _ReplayAgent(labels[p], _spec_field(llm[p], "style") or "chat", read,
                              _reasoning(llm[p]))
            for p in (0, 1))
        session = GameSession(rules, agents, int(game["seed"]), int(game["game_index"]), gid)
        at = _replay(session, by_key)
        if at is not None:
            diverged += 1
            transitions[("games", _winner(game), "diverged")] += 1
            for r in old_reports:
                if r["parser_version"] is not None or r["raw_text"] is not None:
                    transitions[("reports", r["report_status"], r["report_status"])] += 1
            parts["fog_games"].append(_rows([{**game, "diverged_at": at}], FOG_GAMES,
                                            stored.run_id))
            parts["fog_reports"].append(_rows(old_reports, FOG_REPORTS, stored.run_id))
            parts["fog_events"].append(_rows(events_by_game.get(gid, []), FOG_EVENTS,
                                             stored.run_id))
            continue
        games_tab, reports_tab, events_tab = _tables(ns, [session])
        new_reports = reports_tab.to_pylist()
        for r in new_reports:
            if r["parser_version"] is not None:
                old = by_key.get((r["turn"], r["player"]))
                transitions[("reports", old["report_status"] if old else "missing",
                             r["report_status"])] += 1
                r["parser_version"] = version
        new_game = games_tab.to_pylist()[0]
        if new_game["parser_version"] is not None:
            new_game["parser_version"] = version
        transitions[("games", _winner(game), _winner(new_game))] += 1
        parts["fog_games"].append(_rows([new_game], FOG_GAMES, stored.run_id))
        parts["fog_reports"].append(_rows(new_reports, FOG_REPORTS, stored.run_id))
        parts["fog_events"].append(events_tab)
    tables: dict[str, tuple[str, Any]] = {
        name: (stored.tables[name][0], pa.concat_tables(tabs) if tabs else
               pa.table({f.name: pa.array([], f.type) for f in schema}, schema=schema))
        for (name, tabs), schema in zip(parts.items(), (FOG_GAMES, FOG_REPORTS, FOG_EVENTS),
                                        strict=True)
        if name in stored.tables}
    tables |= stored_calls(stored)
    calls = tables["calls"][1].num_rows if "calls" in tables else 0
    reports = tables["fog_reports"][1] if "fog_reports" in tables else None
    stats = {"games": len(games), "reports": 0 if reports is None else reports.num_rows,
             "valid_reports": 0 if reports is None else
             sum(1 for x in reports["report_status"].to_pylist() if x == "ok"),
             "calls": calls}
    return Rescored(ShardResult(stored.shard_id, tables, stats), dict(transitions), diverged)


def _winner(game: Mapping[str, Any]) -> str:
    return f"winner:{game['winner']}"


def _rows(rows: list[dict], schema: pa.Schema, run_id: str) -> pa.Table:
    """Stored rows as a table of ``schema`` (a column an older run lacks: NULL)."""
    return pa.Table.from_pylist([{**{f.name: r.get(f.name) for f in schema}, "run_id": run_id}
                                 for r in rows], schema=schema)


def _replay(session: GameSession, stored: Mapping[tuple[int, str], dict]) -> int | None:
    """Plays the game on the stored answers; the turn where a re-read answer gave other
    orders than the stored ones (or no stored answer exists), or None."""
    while not session.done:
        obs = session.observations()
        turn = session.game.turn + 1
        plans = []
        for p in (0, 1):
            agent = session.agents[p]
            if isinstance(agent, LLMAgent):
                old = stored.get((turn, SIDES[p]))
                if old is None:
                    return turn
                text = old["raw_text"]
                response = Response(text=text, status="ok" if text is not None else "failed",
                                    error="" if text is not None else "call failed")
                plans.append(agent.finish(response, obs[p]))
            else:
                plans.append(agent.observe_and_plan(p, obs[p], session.rngs[p]))
        call_ids = tuple(stored.get((turn, SIDES[p]), {}).get("call_id") for p in (0, 1))
        session.apply((plans[0], plans[1]), call_ids)
        for rec in session.records[-2:]:
            if isinstance(session.agents[rec.player], LLMAgent):
                old = stored[(turn, SIDES[rec.player])]
                if [format_order(o) for o in rec.report.orders] != list(old["orders"]):
                    return turn
    return None
