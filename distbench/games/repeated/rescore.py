"""Re-reading a repeated-games run's stored answers (``distbench rescore``): the family's hook.

Every match of the shard is played again by today's runner (:func:`.runner.run_shard`: the
same stage games, the same machines and their seeded draws), each answer taken from the source
run instead of a model (:mod:`distbench.games.answers.replay`, by the sampling seed of its match,
round and seat): the model's row-seat answers from ``rounds``, the column seat's (self-play, a
model opponent) from ``calls``. A match whose re-read answers change its course (an answer
read as a move now where the stored match ended) asks for answers the source never got: it is
**kept as stored** and counted as diverged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from distbench.games.answers.pairing import shard_from_record
from distbench.games.answers.replay import (
    NOT_STORED,
    replays,
    rescored,
    spec_of,
    stored_response,
    stored_tables,
)
from distbench.games.base import Rescored, StoredShard, derive_seed
from distbench.games.repeated.plan import RepeatedRunConfig, RepeatedShard
from distbench.games.repeated.runner import run_shard
from distbench.games.repeated.tournament import RepeatedPairConfig, RepeatedPairShard
from distbench.llm.base import Response

ANSWER = re.compile(r"/r\d+/(row|col)$")
"""How an answer's id ends: ``<match>/r<round>/<seat>``."""


def shard_of(record: Mapping[str, Any], run_id: str) -> RepeatedShard:
    """The shard a commit record describes (for ``run_id``)."""
    c = dict(record["config"])
    c["seeds"] = tuple(c["seeds"])
    c["llm"] = spec_of(c["llm"])
    c["opponents"] = tuple(spec_of(o) for o in c["opponents"])
    return RepeatedShard(record["shard_id"], run_id, int(record["seed"]), int(record["start"]),
                         int(record["stop"]), spec_of(record["opponent"]), RepeatedRunConfig(**c))


def _called(stored: StoredShard, llm_seed: int,
            answers: dict[tuple[str, str], dict[int, Response]]) -> None:
    """Adds the answers of the stored ``calls`` (trial ids ``<match>/r<round>/<seat>`` in
    runs, call ids so in tournaments) to ``answers`` by their request seeds."""
    if "calls" not in stored.tables:
        return
    for r in stored.table("calls").to_pylist():
        ident = r["trial_id"] if ANSWER.search(r["trial_id"]) else r["call_id"]
        match, rnd, seat = ident.rsplit("/", 2)
        seed = derive_seed(llm_seed, match, int(rnd[1:]) - 1, seat)
        answers.setdefault((r["provider"], r["model"]), {}).setdefault(
            seed, stored_response(r["response_text"], r["status"] != "ok", r["error"] or "",
                                  r["latency_ms"]))


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook (see the module docstring)."""
    if "player_a" in (stored.shard.get("config") or {}):
        return _rescore_pairing(stored)
    shard = shard_of(stored.shard, stored.run_id)
    c = shard.config
    answers: dict[tuple[str, str], dict[int, Response]] = {}
    mine = answers.setdefault((c.llm.provider, c.llm.model), {})
    old: dict[tuple, str] = {}
    for r in stored.table("rounds").to_pylist():
        old[(r["match_id"], r["round"])] = r["parse_status"]
        seed = derive_seed(c.llm_seed, r["match_id"], r["round"] - 1, "row")
        mine[seed] = stored_response(r["raw_text"], r["raw_text"] is None, r["parse_detail"],
                                     r["latency_ms"])
    _called(stored, c.llm_seed, answers)
    result = run_shard(shard, replays(shard.specs, answers))
    tables = stored_tables(stored, result)
    rounds = tables["rounds"][1]
    diverged = {r["match_id"] for r in rounds.to_pylist()
                if NOT_STORED in (r["parse_detail"] or "")}
    return rescored(stored, result, tables, ("repeated_matches", "rounds"), diverged, "rounds",
                    old, lambda t: {(r["match_id"], r["round"]): r["parse_status"]
                                    for r in t["rounds"][1].to_pylist()})


def _rescore_pairing(stored: StoredShard) -> Rescored:
    """A tournament pairing's shard (``repeated_duels``): every answer from ``calls`` (the
    dummy's, not logged, are asked again of the dummy); a match that asks an answer the source
    never got is kept as stored."""
    shard = shard_from_record(stored.shard, stored.run_id, RepeatedPairShard, RepeatedPairConfig,
                              ("seeds",))
    c = shard.config
    answers: dict[tuple[str, str], dict[int, Response]] = {}
    _called(stored, c.llm_seed, answers)
    backends = replays(shard.specs, answers)
    result = run_shard(shard, backends)
    tables = stored_tables(stored, result)
    missed = {seed for b in backends.values() for seed in getattr(b, "missed", [])}
    old_rows = stored.table("repeated_duels").to_pylist()
    diverged = {r["match_id"] for r in old_rows if missed and any(
        derive_seed(c.llm_seed, r["match_id"], k, seat) in missed
        for k in range(r["rounds_planned"]) for seat in ("row", "col"))}
    return rescored(stored, result, tables, ("repeated_duels",), diverged, "matches",
                    {r["match_id"]: r["status"] for r in old_rows},
                    lambda t: {r["match_id"]: r["status"]
                               for r in t["repeated_duels"][1].to_pylist()})
