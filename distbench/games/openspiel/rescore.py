"""Re-reading an openspiel run's stored answers (``distbench rescore``): the family's hook.

Every match of the shard is played again by today's runner (:func:`.runner.run_shard`:
OpenSpiel's rules, the same seeded chance outcomes and scripted players), each model move's
answer taken from ``moves`` (:mod:`distbench.games.answers.replay`, by the sampling seed of its match
and ply) instead of a model, read by today's parser and scored again. A match whose re-read
answers change its course (an answer read as another move, or as a move where the stored
match ended) asks for answers the source never got: it is **kept as stored** and counted as
diverged. Logprob mode is refused (its token probabilities are not stored).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from distbench.games.answers import replay
from distbench.games.base import Rescored, StoredShard
from distbench.games.base import seat_label as player_label
from distbench.games.openspiel.plan import OpenSpielShard, move_seed
from distbench.games.openspiel.runner import run_shard
from distbench.llm.base import Response


def shard_of(record: Mapping[str, Any], run_id: str) -> OpenSpielShard:
    """The shard a commit record describes (for ``run_id``)."""
    fields = {k: v for k, v in record.items() if k not in ("family", "run_id")}
    fields["player"] = replay.spec_of(fields["player"])
    fields["opponent"] = replay.spec_of(fields["opponent"])
    fields["seat_orders"] = tuple(fields["seat_orders"])
    fields["specs"] = tuple(replay.spec_of(s) for s in fields.get("specs") or ())
    return OpenSpielShard(**fields, run_id=run_id)


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook (see the module docstring)."""
    shard = shard_of(stored.shard, stored.run_id)
    if shard.mode != "play":
        raise ValueError("an openspiel run in logprob mode cannot be rescored: its readings' "
                         "token probabilities are not stored")
    labels = {player_label(s): (s.provider, s.model) for s in shard.specs}
    answers: dict[tuple[str, str], dict[int, Response]] = {}
    old: dict[tuple, str] = {}
    for r in stored.table("moves").to_pylist():
        if r["call_id"] is None or r["player_label"] not in labels:
            continue  # a scripted player's move
        old[(r["match_id"], r["ply"])] = r["parse_status"]
        answers.setdefault(labels[r["player_label"]], {})[
            move_seed(shard.llm_seed, r["match_id"], r["ply"])] = replay.stored_response(
                r["raw_text"], r["parse_status"] == "call_failed", r["parse_detail"],
                r["latency_ms"])
    result = run_shard(shard, replay.replays(shard.specs, answers))
    tables = replay.stored_tables(stored, result)
    moves = tables["moves"][1]
    diverged = {r["match_id"] for r in moves.to_pylist() if r["parse_detail"] == replay.NOT_STORED}
    return replay.rescored(
        stored, result, tables, ("matches", "moves"), diverged, "moves", old,
        lambda t: {(r["match_id"], r["ply"]): r["parse_status"]
                   for r in t["moves"][1].to_pylist() if r["call_id"] is not None})
