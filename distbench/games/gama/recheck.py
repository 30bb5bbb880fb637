"""A GAMA-Bench record played again by the engine through the replay provider, and compared.

:func:`replay_record` runs a ``gama`` game with the record's parameters, every seat the replay
provider (``replay:PATH``) reading the record, through the family's own shard runner (the
same prompts, parser, rules and rows as any run), and returns the round records the engine
produced (``gama_rounds.aggregates_json``). :func:`round_difference` compares round records
with the stored ones key by key and names the first that differs. The rules alone are checked
by ``benchmarks/bench_gama_replay.py``; this checks the engine's play.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from distbench.games.gama.plan import GamaRunConfig, plan_shards
from distbench.games.gama.records import GamaRecord
from distbench.games.gama.runner import run_shard
from distbench.llm.registry import build_backend, make_spec, resolve_spec

SHUFFLED = ("guessing", "dollar")
"""Games whose stored ``responses`` GAMA shuffled in place when it reported the round."""
SKIPPED = ("removed_player_info",)
"""GAMA's list of the eliminated, one list shared by every round and mutated after."""


def record_options(rec: GamaRecord) -> tuple[tuple[str, str], ...]:
    """The record's parameters as ``--option`` pairs (what :func:`rules.make_params` reads)."""
    return tuple((k, json.dumps(v) if isinstance(v, float) else str(v))
                 for k, v in asdict(rec.params).items())


def replay_record(rec: GamaRecord) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The engine's round records for ``rec`` replayed, and its ``gama_games`` row."""
    spec = resolve_spec(make_spec("replay", str(rec.path)))
    config = GamaRunConfig(game=rec.game, seats=(spec,) * rec.params.players, num_games=1,
                           options=record_options(rec))
    (shard,) = plan_shards(config, "recheck")
    result = run_shard(shard, {spec: build_backend(spec)})
    rounds = result.tables["gama_rounds"][1].to_pylist()
    (game,) = result.tables["gama_games"][1].to_pylist()
    return [json.loads(r["aggregates_json"]) for r in rounds], game


def round_difference(rec: GamaRecord, produced: list[dict[str, Any]]) -> str | None:
    """The first stored key whose value ``produced`` does not reproduce (None: all are);
    ``responses`` of :data:`SHUFFLED` games as multisets, floats within 1e-9."""
    if len(produced) != len(rec.rounds):
        return f"{len(produced)} rounds played, {len(rec.rounds)} stored"
    for t, (ours, stored) in enumerate(zip(produced, rec.rounds, strict=True), start=1):
        for key, theirs in stored.items():
            if key in SKIPPED:
                continue
            mine = ours.get(key, "<none>")
            if key == "responses" and rec.game in SHUFFLED:
                theirs, mine = sorted(theirs), sorted(mine)
            if isinstance(theirs, float) and isinstance(mine, float) and abs(theirs - mine) < 1e-9:
                continue
            if theirs != mine:
                return f"round {t} {key}: stored {theirs!r}, replayed {mine!r}"
    return None
