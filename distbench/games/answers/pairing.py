"""The plumbing of a tournament pairing, shared by the families whose pairing seats two players
of any kind (scripted players, models) on the same instances in both seat orders and writes
one row per game and seat order with ``player_row``, ``player_col``, ``score_row``,
``score_col`` and ``status`` (``bimatrix``, ``repeated``; ``openspiel`` reads its players the
same way). A family keeps what is its own (its config's fields and checks, how a game is
played and scored); the shard, its stable id, the plan, the player reading, the summary, the
outcomes and the shard's result are one logic, here. Part of the family contract: any family
may import it; it imports no family.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from distbench.games.answers.replay import spec_of
from distbench.games.base import (
    RunPlan,
    SeatOutcome,
    ShardResult,
    chunk_id,
    config_plan,
    game_chunks,
    seat_label,
)
from distbench.llm.base import BackendSpec
from distbench.llm.calls import calls_table
from distbench.store.catalog import cursor_records

__all__ = ["PairShard", "model_player", "pair_plan", "pair_result", "pair_shards",
           "pair_summary", "scripted_player", "seat_outcomes", "shard_from_record"]


@dataclass(frozen=True)
class PairShard:
    """Instances ``start..stop-1`` of one seed of a pairing, each in both seat orders (a
    family subclasses it to give ``family`` its name)."""

    shard_id: str
    run_id: str
    seed: int
    start: int
    stop: int
    config: Any
    family: str = ""

    @property
    def specs(self) -> tuple[BackendSpec, ...]:
        return self.config.specs()

    @property
    def num_units(self) -> int:
        """Progress units: games (both seat orders)."""
        return 2 * (self.stop - self.start)


def pair_shards(config: Any, run_id: str, shard_type: type[PairShard], prefix: str,
                seeds: Iterable[int] | None = None) -> list[PairShard]:
    """The shards of a pairing in a stable order (seed, chunk of ``config.shard_games``), each
    id ``<prefix>-<hash>`` of the family, the chunk and the pairing's identity. ``seeds``: the
    config's ``seeds`` field (each shard keyed by its seed); None: its single ``seed`` field."""
    identity = config.identity()
    if seeds is None:
        seeds, keyed = (config.seed,), False
    else:
        del identity["seeds"]
        keyed = True
    return [shard_type(chunk_id(prefix, shard_type.family, identity, kind="pairing",
                                start=start, stop=stop, **({"seed": seed} if keyed else {})),
                       run_id, seed, start, stop, config)
            for seed in seeds for start, stop in game_chunks(config.num_games, config.shard_games)]


def pair_plan(config: Any, shards: list[PairShard], seeds: Iterable[int], *, unit: str,
              table: str, summarize: Any, calls_per_model: int | None) -> RunPlan:
    """The :class:`RunPlan` of a pairing: its calls are ``calls_per_model`` for each model
    that is not a free in-process one (None: not known beforehand)."""
    from distbench.llm.registry import backend_class

    paid = [s for s in config.specs() if not backend_class(s.provider).in_process]
    return config_plan(
        config, shards[0].family if shards else "", shards, seeds, summarize=summarize,
        unit=unit, summary_tables=(table,),
        expected_calls=calls_per_model * len(paid) if paid and calls_per_model else None)


def model_player(text: str, scripted: str, hint: str = "") -> tuple[BackendSpec, str]:
    """A model ``PROVIDER[:MODEL]`` as a tournament seats it; ValueError in one line saying the
    entry is neither one of the ``scripted`` players (as described) nor a model (+ ``hint``)."""
    from distbench.llm.registry import UnknownProviderError, make_spec

    try:
        spec = make_spec(text)
    except (UnknownProviderError, ValueError) as exc:
        raise ValueError(f"{text!r}: not {scripted} nor a model ({exc}){hint}") from None
    return spec, seat_label(spec)


def scripted_player(text: str, names: Iterable[str], aliases: Mapping[str, str] | None = None,
                    scripted: str | None = None) -> tuple[Any, str]:
    """A scripted player by one of its ``names`` (or an alias), else a model (ValueError)."""
    names = tuple(names)
    name = (aliases or {}).get(text, text)
    if name in names:
        return name, name
    return model_player(text, scripted or "|".join(names))


def pair_summary(con: Any, table: str, games: str, *averages: str) -> list[dict[str, Any]]:
    """Per (row player, column player) of ``table``: ``games`` (the count), complete, forfeits,
    call_failed, the mean seat scores and the mean of each of ``averages``."""
    extra = "".join(f", avg({c}) AS {c}" for c in averages)
    return cursor_records(con.execute(
        f"SELECT player_row, player_col, count(*) AS {games}, "
        "count(*) FILTER (WHERE status = 'complete') AS complete, "
        "count(*) FILTER (WHERE status = 'forfeit') AS forfeits, "
        "count(*) FILTER (WHERE status = 'call_failed') AS call_failed, "
        f"avg(score_row) AS score_row, avg(score_col) AS score_col{extra} "
        f"FROM {table} GROUP BY player_row, player_col ORDER BY player_row, player_col"))


def seat_outcomes(con: Any, table: str, game_id: str, instance: str) -> list[SeatOutcome]:
    """Every game of ``table`` but those a failed call ended, row seat first, with each seat's
    score (the ``game_id`` and ``instance`` columns name the game and what it was played on)."""
    return [SeatOutcome(*row) for row in con.execute(
        f"SELECT {game_id}, {instance}, player_row, player_col, score_row, score_col, shard_id "
        f"FROM {table} WHERE status <> 'call_failed' ORDER BY {game_id}").fetchall()]


def pair_result(shard: PairShard, table: str, rows: pa.Table, logs: Mapping[BackendSpec, list],
                mode: str, stats: Mapping[str, Any]) -> ShardResult:
    """The shard's result: ``rows`` as ``table`` and the logged calls (per model, a list of
    ``(request, response, call id, trial id)``) as ``calls``."""
    tables = {table: (shard.shard_id, rows)}
    calls = [calls_table(shard.run_id, shard.shard_id, spec, mode,
                         *map(list, zip(*group, strict=True)))
             for spec, group in logs.items()]
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=dict(stats))


def shard_from_record(record: Mapping[str, Any], run_id: str, shard_type: type[PairShard],
                      config_type: type, tuples: Iterable[str] = ()) -> PairShard:
    """The pairing's shard a commit record describes (for ``run_id``): the players read back
    as scripted names or models, the ``tuples`` fields as tuples."""
    c = dict(record["config"])
    for key in tuples:
        c[key] = tuple(c[key])
    c["player_a"], c["player_b"] = spec_of(c["player_a"]), spec_of(c["player_b"])
    return shard_type(record["shard_id"], run_id, int(record["seed"]), int(record["start"]),
                      int(record["stop"]), config_type(**c))
