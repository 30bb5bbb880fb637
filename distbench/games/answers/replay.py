"""Stored answers played back to a family's own runner: the shared part of the ``rescore``
hooks of the bimatrix, repeated and openspiel families.

A hook rebuilds the shard from its commit record (:func:`spec_of`), gathers the stored
answers by the sampling seed of the request that got them (each family derives one seed per
answer from stable ids), and runs the family's ``run_shard`` with :class:`Replay` backends: the
runner builds its requests as it does in a live run, each gets its stored answer back, and
today's parsers and scorers read and score it. No model is called. A request whose answer was
never stored (a re-read answer changed the rest of a match, so the match asks what the stored
one never asked) gets a failed answer saying :data:`NOT_STORED`; the hook keeps such a unit as
stored (:func:`keep_stored`) and counts it as diverged. The dummy model's answers are not
logged in ``calls``: where one is not in the family's tables, the dummy (in-process,
deterministic, free) answers it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from distbench.games.base import Rescored, ShardResult
from distbench.llm.base import Backend, BackendSpec, Request, Response

NOT_STORED = "answer not stored (rescore: the re-read answers changed the rest of the game)"
"""The error of a replayed request whose answer the source run never got."""


def spec_of(value: Any) -> Any:
    """A model as a commit record writes it (a dict of :class:`BackendSpec`'s fields) as a
    :class:`BackendSpec`; anything else as is."""
    if isinstance(value, Mapping) and "provider" in value and "model" in value:
        options = tuple((str(k), _frozen(v)) for k, v in value.get("options") or ())
        return BackendSpec(str(value["provider"]), str(value["model"]),
                           str(value.get("style") or "chat"), options)
    return value


def _frozen(value: Any) -> Any:
    """A JSON value with its lists as tuples (a spec's options are hashable)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def stored_response(text: str | None, failed: bool, error: str = "",
                    latency_ms: float | None = None) -> Response:
    """A stored answer as the runner gets it back."""
    if failed or text is None:
        return Response(text=None, status="failed", error=error or "call failed",
                        latency_ms=latency_ms or 0.0)
    return Response(text=text, latency_ms=latency_ms or 0.0)


class Replay(Backend):
    """A backend answering each request with the stored answer of its sampling seed."""

    in_process = True

    def __init__(self, spec: BackendSpec, answers: Mapping[int, Response],
                 fallback: Backend | None = None) -> None:
        super().__init__(spec)
        self.answers = dict(answers)
        self.fallback = fallback
        self.missed: list[int] = []  # the seeds of requests with no stored answer

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        out: list[Response | None] = [self.answers.get(r.seed) for r in requests]
        todo = [k for k, r in enumerate(out) if r is None]
        if todo and self.fallback is not None:
            again = await self.fallback.generate([requests[k] for k in todo])
            for k, response in zip(todo, again, strict=True):
                out[k] = response
        else:
            self.missed += [requests[k].seed for k in todo]
            for k in todo:
                out[k] = Response(text=None, status="failed", error=NOT_STORED)
        return [r for r in out if r is not None]


def replays(specs: Iterable[BackendSpec], answers: Mapping[tuple[str, str], Mapping[int, Response]]
            ) -> dict[BackendSpec, Backend]:
    """One :class:`Replay` per model, from ``answers[(provider, model)]`` (seed -> answer);
    the dummy also answers what is not stored."""
    from distbench.llm.dummy import DummyBackend

    out: dict[BackendSpec, Backend] = {}
    for spec in specs:
        fallback = DummyBackend(spec) if spec.provider == "dummy" else None
        out[spec] = Replay(spec, answers.get((spec.provider, spec.model), {}), fallback)
    return out


def restamp(table: pa.Table, run_id: str) -> pa.Table:
    """``table`` with its ``run_id`` column set to ``run_id``."""
    if "run_id" not in table.column_names:
        return table
    k = table.schema.get_field_index("run_id")
    return table.set_column(k, table.schema.field(k), pa.array([run_id] * table.num_rows,
                                                                 pa.string()))


def stored_tables(stored: Any, result: Any) -> dict[str, tuple[str, pa.Table]]:
    """The tables of a replayed shard (``result``, a ``ShardResult``) under the stored file
    stems, the ``calls`` as stored (no call was made again: they are the source's calls,
    re-stamped with the new run id)."""
    tables = {name: (stored.tables[name][0] if name in stored.tables else stem, table)
              for name, (stem, table) in result.tables.items() if name != "calls"}
    return tables | stored_calls(stored)


def stored_calls(stored: Any) -> dict[str, tuple[str, pa.Table]]:
    """``{"calls": (stem, table)}``: a stored shard's calls as they were (a rescore calls no
    model), re-stamped with the shard's run id; ``{}`` when it stored none."""
    if "calls" not in stored.tables:
        return {}
    stem, calls = stored.tables["calls"]
    return {"calls": (stem, restamp(calls, stored.run_id))}


def keep_stored(new: pa.Table, old: pa.Table, key: str, units: set[str], run_id: str
                ) -> pa.Table:
    """``new`` with the rows of ``units`` (values of column ``key``) replaced by their stored
    rows (re-stamped with ``run_id``), in the stored order of ``key``."""
    if not units:
        return new
    marked = pa.array(sorted(units), pa.string())
    kept = new.filter(pc.invert(pc.is_in(new[key], value_set=marked)))
    back = restamp(old.filter(pc.is_in(old[key], value_set=marked)), run_id).cast(new.schema)
    return pa.concat_tables([kept, back]).sort_by([(key, "ascending")])


def rescored(stored: Any, result: ShardResult, tables: dict[str, tuple[str, pa.Table]],
             names: Sequence[str], diverged: set[str], unit: str, old: Mapping[Any, str],
             new_of: Callable[[dict[str, tuple[str, pa.Table]]], Mapping[Any, str]]
             ) -> Rescored:
    """The replayed shard as the ``rescore`` hook returns it: ``names``'
    tables keep their stored rows of the ``diverged`` matches (:func:`keep_stored`, by
    ``match_id``), and the answers' status transitions compare ``old`` with ``new_of(tables)``
    (after that)."""
    for name in names:
        stem, table = tables[name]
        tables[name] = (stem, keep_stored(table, stored.table(name), "match_id", diverged,
                                          stored.run_id))
    return Rescored(ShardResult(stored.shard_id, tables, dict(result.stats)),
                    dict(transitions(unit, old, new_of(tables))), len(diverged))


def transitions(unit: str, old: Mapping[Any, str], new: Mapping[Any, str]
                ) -> Counter[tuple[str, str, str]]:
    """(unit, old status, new status) counts of every stored answer (``dropped`` when the
    re-read game no longer asks it)."""
    return Counter((unit, status, new.get(k, "dropped")) for k, status in old.items())
