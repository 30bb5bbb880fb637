"""Re-reading a bimatrix run's stored answers (``distbench rescore``): the family's hook.

The shard is played again by today's runner (:func:`.runner.run_shard`: games generated and
solved again, answers parsed and scored again) with every answer taken from the source run
instead of a model (:mod:`distbench.games.answers.replay`): the model's own answers from
``bimatrix_trials`` (by the sampling seed of its game, seat, mode and trial), a model
opponent's (and in self-play an unplayed seat's) from ``calls``. The answers of a bimatrix
trial do not depend on each other, so nothing diverges. Logprob readings are not re-read
(their token probabilities are not stored): a run with logprob mode is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from distbench.games.answers.pairing import shard_from_record
from distbench.games.answers.replay import (
    replays,
    spec_of,
    stored_response,
    stored_tables,
    transitions,
)
from distbench.games.base import Rescored, ShardResult, StoredShard, derive_seed
from distbench.games.base import seat_label as player_label
from distbench.games.bimatrix.plan import BimatrixRunConfig, BimatrixShard
from distbench.games.bimatrix.runner import run_shard
from distbench.games.bimatrix.tournament import BimatrixPairConfig, BimatrixPairShard
from distbench.llm.base import Response

FAILED = "call_failed"


def shard_of(record: Mapping[str, Any], run_id: str) -> BimatrixShard:
    """The shard a commit record describes (for ``run_id``)."""
    c = dict(record["config"])
    for key in ("sets", "seeds", "modes", "seats"):
        c[key] = tuple(c[key])
    c["llm"] = spec_of(c["llm"])
    c["opponents"] = tuple(spec_of(o) for o in c["opponents"])
    return BimatrixShard(record["shard_id"], run_id, int(record["seed"]), int(record["start"]),
                         int(record["stop"]), record["game_set"], BimatrixRunConfig(**c))


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook (see the module docstring)."""
    if "player_a" in (stored.shard.get("config") or {}):
        return _rescore_pairing(stored)
    shard = shard_of(stored.shard, stored.run_id)
    c = shard.config
    if "logprob" in c.modes:
        raise ValueError("a bimatrix run in logprob mode cannot be rescored: its readings' "
                         "token probabilities are not stored")
    answers: dict[tuple[str, str], dict[int, Response]] = {}
    trials = stored.table("bimatrix_trials").to_pylist()
    old: dict[tuple, str] = {}
    mine = answers.setdefault((c.llm.provider, c.llm.model), {})
    for r in trials:
        unit = (r["game_id"], r["seat"], r["mode"], r["trial"])
        old[unit] = r["parse_status"]
        seed = derive_seed(c.llm_seed, r["game_id"], r["seat"], r["mode"], r["trial"], "")
        mine.setdefault(seed, stored_response(r["raw_text"], r["parse_status"] == FAILED,
                                              r["parse_detail"], r["latency_ms"]))
    if "calls" in stored.tables:
        for r in stored.table("calls").to_pylist():
            # call ids: <shard>/<tag><seat>/<mode>/<i>; trial ids: <game>/<seat>/<mode>/t<t>
            tagged = r["call_id"][len(stored.shard_id) + 1:].split("/", 1)[0]
            tag = "opp-" if tagged.startswith("opp-") else ""
            game, seat, mode, t = r["trial_id"].rsplit("/", 3)
            seed = derive_seed(c.llm_seed, game, seat, mode, int(t[1:]), tag)
            answers.setdefault((r["provider"], r["model"]), {}).setdefault(
                seed, stored_response(r["response_text"], r["status"] != "ok", r["error"] or "",
                                      r["latency_ms"]))
    result = run_shard(shard, replays(shard.specs, answers))
    tables = stored_tables(stored, result)
    new = {(r["game_id"], r["seat"], r["mode"], r["trial"]): r["parse_status"]
           for r in tables["bimatrix_trials"][1].to_pylist()}
    return Rescored(ShardResult(stored.shard_id, tables, dict(result.stats)),
                    dict(transitions("trials", old, new)))


def _rescore_pairing(stored: StoredShard) -> Rescored:
    """A tournament pairing's shard (``bimatrix_duels``): each model's answer in a seat is
    the one of its request seed (game, seat, mode; the same against every opponent)."""
    shard = shard_from_record(stored.shard, stored.run_id, BimatrixPairShard, BimatrixPairConfig)
    c = shard.config
    models = {player_label(s): (s.provider, s.model) for s in shard.specs}
    answers: dict[tuple[str, str], dict[int, Response]] = {}
    old: dict[tuple, str] = {}
    for r in stored.table("bimatrix_duels").to_pylist():
        for seat in ("row", "col"):
            label = r[f"player_{seat}"]
            if label not in models:
                continue  # a scripted player
            old[(r["duel_id"], seat)] = r[f"status_{seat}"]
            seed = int(derive_seed(c.llm_seed, r["game_id"], seat, c.mode, 0, ""))
            answers.setdefault(models[label], {}).setdefault(seed, stored_response(
                r[f"raw_{seat}"], r[f"status_{seat}"] == FAILED, r[f"detail_{seat}"]))
    result = run_shard(shard, replays(shard.specs, answers))
    tables = stored_tables(stored, result)
    new = {(r["duel_id"], seat): r[f"status_{seat}"]
           for r in tables["bimatrix_duels"][1].to_pylist() for seat in ("row", "col")
           if r[f"player_{seat}"] in models}
    return Rescored(ShardResult(stored.shard_id, tables, dict(result.stats)),
                    dict(transitions("plays", old, new)))
