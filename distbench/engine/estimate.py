"""The expected bill of a plan, beside its ceiling.

A plan's ceiling (``RunPlan.expected_tokens``/``expected_cost``, the budgets' estimates)
counts every answer at its whole completion budget (``max_tokens``): safe, and far above the
bill when answers are short (a pure answer ``Action: 2`` is 3 tokens of a 256-token budget).
The expected figure (``RunPlan.shard_expected``) counts the prompts as rendered and, per
answer, the completion tokens a model is likely to write: the median of the model's earlier
answers in the same mode when the output folder holds runs of it (:func:`observed_completion`,
source ``calls``), else the shortest valid answer of the mode's format (``format``), else the
budget (``budget``, e.g. ``--reasoning cot``, whose length no format tells).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.engine.worker import in_process, shard_specs

log = logging.getLogger(__name__)

__all__ = ["Expected", "SOURCES", "expected_of", "observed_completion"]

SOURCES = {"calls": "the median answer of earlier runs of the model (their calls)",
           "format": "the shortest valid answer of each mode",
           "budget": "the whole budget (no format tells a reasoning's length)"}
"""What each source of the expected completion tokens means, for the printed line."""

MAX_RUNS = 50
"""Runs of the output folder read for :func:`observed_completion` (the newest by name)."""


@dataclass(frozen=True, slots=True)
class Expected:
    """The likely bill of a plan's model calls.

    Attributes:
        prompt_tokens: Prompt tokens (the prompts rendered, a quarter of their characters).
        completion_tokens: Completion tokens expected.
        cost: USD at the live price (None: a model without a price).
        sources: Where the completion figure came from (keys of :data:`SOURCES`).
    """

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    sources: tuple[str, ...]

    def source_text(self) -> str:
        """The sources in words, e.g. ``completion by the shortest valid answer...``."""
        return "; ".join(SOURCES.get(s, s) for s in self.sources)


def expected_of(plan: Any, observed: Any = None, shards: Iterable[Any] | None = None
                ) -> Expected | None:
    """The :class:`Expected` bill of ``shards`` (default: all of the plan's) by the plan's
    ``shard_expected`` hook; None when the plan has none. Free in-process models count
    nothing."""
    hook = getattr(plan, "shard_expected", None)
    if hook is None:
        return None
    prompt = completion = 0
    cost: float | None = 0.0
    sources: dict[str, None] = {}
    for shard in plan.shards if shards is None else shards:
        if all(in_process(s) for s in shard_specs(shard)):
            continue
        p, c, usd, source = hook(shard, observed)
        prompt += p
        completion += c
        cost = None if cost is None or usd is None else cost + usd
        sources.update(dict.fromkeys(x for x in source.split("+") if x))
    return Expected(prompt, completion, cost, tuple(sources))


def observed_completion(folder: Path | str | None,
                        specs: Iterable[Any] = ()) -> dict[tuple[str, str, str], float]:
    """(provider, model, mode) -> the median (t-digest) completion tokens per answer of the committed
    ``calls`` of the runs in ``folder`` (a folder of run folders, such as ``results/``; the
    newest :data:`MAX_RUNS` by name), ok calls only (not those whose counts were missing or
    implausible: ``estimated_completion_tokens``), a request of several samples counted per sample.
    ``specs`` (when given) keeps only those models. Unreadable runs are skipped: the
    estimate then falls back on the answer format."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from distbench.store.catalog import find_runs
    from distbench.store.writer import committed_files

    if folder is None or not Path(folder).is_dir():
        return {}
    wanted = {(s.provider, s.model) for s in specs}
    try:
        runs = find_runs([folder])[-MAX_RUNS:]
    except ValueError:  # no run in it (NotARunError)
        return {}
    tables = []
    for run in runs:
        try:
            files = committed_files(run).get("calls", [])
        except Exception:  # noqa: BLE001 - a damaged run says nothing about lengths
            log.debug("skipping %s for the observed completion tokens", run, exc_info=True)
            continue
        for path in files:
            try:
                names = set(pq.read_schema(path).names)
                table = pq.read_table(path, columns=[
                    "provider", "model", "mode", "status", "completion_tokens", "samples",
                    *(["estimated_completion_tokens"]
                      if "estimated_completion_tokens" in names else [])])
            except Exception:  # noqa: BLE001 - an old or foreign file: skipped
                continue
            ok = pc.and_(pc.fill_null(pc.equal(table["status"], "ok"), False),
                         pc.is_valid(table["completion_tokens"]))
            if "estimated_completion_tokens" in table.column_names:  # a ceiling teaches no length
                ok = pc.and_(ok, pc.is_null(table["estimated_completion_tokens"]))
            table = table.filter(ok)
            per = pc.divide(pc.cast(table["completion_tokens"], "float64"),
                            pc.cast(pc.max_element_wise(pc.fill_null(table["samples"], 1), 1),
                                    "float64"))
            tables.append(table.select(["provider", "model", "mode"]).append_column("per", per))
    if not tables:
        return {}
    import pyarrow as pa

    rows = pa.concat_tables(tables).group_by(["provider", "model", "mode"]).aggregate(
        [("per", "approximate_median")]).to_pylist()
    return {(r["provider"], r["model"], r["mode"]): float(r["per_approximate_median"])
            for r in rows if r["per_approximate_median"] is not None
            and (not wanted or (r["provider"], r["model"]) in wanted)}
