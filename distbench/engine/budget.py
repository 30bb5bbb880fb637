"""Hard budgets of a run: ``--max-cost USD`` and ``--max-tokens-total N``.

The driver asks :meth:`Budget.admit` before it sends a shard off: the shard is admitted when
what the run has spent (by the endpoints' token counts, the ``calls`` rows of the shards
received so far, this run's and, on a resume, the committed shards'), plus the estimates of the
shards in flight, plus this shard's estimate stays within the budget. A refused shard is asked
again when a shard in flight returns (its reservation becomes its real spend, usually less);
the run stops when nothing is in flight and the next shard is still refused. What is in flight
is always finished and committed, so the run never throws away what it paid for.

Estimates: the plan's per-shard hook (``RunPlan.shard_estimate``: prompt tokens about,
completion tokens at most, cost at most) or, for a family without one, the shard's share of the
plan's ``expected_tokens``/``expected_cost`` by units. Prompt tokens are an estimate, so once
shards have returned, every estimate is scaled up by how far the real spend exceeded the
estimates of the shards that returned (never down): the budget holds also when the plan
underestimates.

Cache hits cost nothing and are not counted; the cost of a call is its model's price
(``--price``) applied to the tokens its endpoint reported (a call whose counts were missing or
implausible at its request's ceiling: ``calls.estimated_prompt_tokens`` and
``estimated_completion_tokens``, see :mod:`distbench.llm.calls`; the spend is then said to be
partly estimated), times ``batch_price`` for a call
answered by a batch (``calls.batch_id``). With ``--execution batch`` the estimates are at the
batch price too, and :mod:`distbench.engine.batching` asks :meth:`Budget.admit` shard by shard
before it submits a shard's requests: a wave of batches holds only admitted shards, is waited
for and committed, and the next wave admits on the real spend (see there).
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from distbench.engine.worker import in_process, shard_specs
from distbench.errors import UserError
from distbench.llm.base import BackendSpec, cost_usd
from distbench.llm.calls import COUNTED_COMPLETION, COUNTED_PROMPT, ESTIMATED

__all__ = ["Budget", "BudgetError", "BUDGET_EXIT", "Spend", "committed_probes", "probe_rows"]

BUDGET_EXIT = 4
"""Exit status of a run stopped by its budget (``budget_reached``): its committed rows are kept
and the same command with a larger budget finishes it. Failed calls are 3, bad input 2."""


class BudgetError(UserError):
    """A budget that cannot be kept: ``--max-cost`` for a model without a price."""


@dataclass(slots=True)
class Spend:
    """Tokens and money spent (``cost`` None: a model without a price was called)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Spend) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost


@dataclass
class Budget:
    """The budget of one run (either limit may be None: not limited).

    Args:
        max_cost: Most USD the run may spend, whole (committed shards of earlier calls count).
        max_tokens: Most tokens (prompt + completion) the run may spend, whole.
        specs: The run's models (their prices).
        estimate: Shard -> (prompt tokens, completion tokens, cost) estimated, or None.
        batch_price: Share of the price a batch answer costs (``--batch-price``): the calls
            with a ``batch_id`` are priced so.
        execution: ``"live"`` or ``"batch"``: the estimates' cost is at the batch price with
            ``"batch"``.
    """

    max_cost: float | None
    max_tokens: int | None
    specs: list[BackendSpec] = field(default_factory=list)
    estimate: Callable[[Any], tuple[int, int, float | None]] | None = None
    batch_price: float = 0.5
    execution: str = "live"
    spent: Spend = field(default_factory=Spend)
    _reserved: dict[str, tuple[float, float]] = field(default_factory=dict)
    _est_done: list[float] = field(default_factory=lambda: [0.0, 0.0])
    _real_done: list[float] = field(default_factory=lambda: [0.0, 0.0])
    refused: int = 0
    estimated_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._prices = {(s.provider, s.model): s for s in self.specs}
        if self.max_cost is not None:
            unpriced = [f"{s.provider}:{s.model}" for s in self.specs
                        if not in_process(s) and cost_usd(s, 0, 0) is None]
            if unpriced:
                raise BudgetError(f"--max-cost needs the price of every model; none is given "
                                  f"for {', '.join(unpriced)} (--price IN,OUT, or price_in and "
                                  "price_out in the spec), or use --max-tokens-total")

    @property
    def active(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None

    # --- estimates -----------------------------------------------------------------------

    def shard_estimate(self, shard: Any) -> tuple[float, float]:
        """(tokens, USD) the shard may spend, before scaling (0 for free in-process models)."""
        specs = shard_specs(shard)
        if all(in_process(s) for s in specs):
            return 0.0, 0.0
        est = self.estimate(shard) if self.estimate is not None else None
        if est is None:
            return 0.0, 0.0
        prompt, completion, cost = est
        factor = self.batch_price if self.execution == "batch" else 1.0
        return float(prompt + completion), float(cost or 0.0) * factor

    def _scale(self) -> tuple[float, float]:
        """How far the real spend exceeded the estimates of the shards returned (>= 1)."""
        out = []
        for est, real in zip(self._est_done, self._real_done, strict=True):
            out.append(max(1.0, real / est) if est > 0 else 1.0)
        return out[0], out[1]

    # --- admission -----------------------------------------------------------------------

    def admit(self, shard: Any, force: bool = False) -> bool:
        """Whether ``shard`` fits in the budget with what is spent and in flight; reserves
        its estimate when it does. ``force``: reserves it whatever the budget (a shard whose
        requests a batch already holds: paid for, or being)."""
        if not self.active:
            return True
        tokens, cost = self.shard_estimate(shard)
        if force:
            with self._lock:
                self._reserved[shard.shard_id] = (tokens, cost)
            return True
        with self._lock:
            k_tok, k_usd = self._scale()
            held_tok = sum(t for t, _ in self._reserved.values()) * k_tok
            held_usd = sum(c for _, c in self._reserved.values()) * k_usd
            if self.max_tokens is not None and \
                    self.spent.tokens + held_tok + tokens * k_tok > self.max_tokens:
                self.refused += 1
                return False
            if self.max_cost is not None and \
                    (self.spent.cost or 0.0) + held_usd + cost * k_usd > self.max_cost:
                self.refused += 1
                return False
            self._reserved[shard.shard_id] = (tokens, cost)
            return True

    def received(self, shard: Any, calls_parquet: bytes | None,
                 stats: dict[str, Any] | None = None) -> Spend:
        """A shard returned: its reservation becomes its real spend, read from its ``calls``
        table (Parquet bytes, None: no calls) and its ``n`` probes (``stats``, see
        :func:`probe_rows`). Returns that spend."""
        spend = self.calls_spend(calls_parquet)
        spend.add(self._priced(probe_rows(shard_specs(shard), stats)))
        with self._lock:
            tokens, cost = self._reserved.pop(shard.shard_id, None) or self.shard_estimate(shard)
            if tokens or cost:
                self._est_done[0] += tokens
                self._est_done[1] += cost
                self._real_done[0] += spend.tokens
                self._real_done[1] += spend.cost or 0.0
            self.spent.add(spend)
        return spend

    def calls_spend(self, calls_parquet: bytes | None) -> Spend:
        """The spend of one shard's ``calls`` table (cache hits excluded)."""
        if not calls_parquet:
            return Spend()
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        table = pq.read_table(io.BytesIO(calls_parquet), columns=[
            "provider", "model", "prompt_tokens", "completion_tokens", "cache_hit", "batch_id",
            "estimated_prompt_tokens", "estimated_completion_tokens"])
        table = table.filter(pc.invert(pc.fill_null(table["cache_hit"], False)))
        with self._lock:
            self.estimated_calls += pc.sum(pc.cast(pc.or_(
                pc.is_valid(table["estimated_prompt_tokens"]),
                pc.is_valid(table["estimated_completion_tokens"])), "int64")).as_py() or 0
        table = pa.table({  # a call whose counts were not usable counts at its ceiling
            "provider": table["provider"], "model": table["model"],
            "batched": pc.is_valid(table["batch_id"]),
            "prompt": pc.coalesce(table["estimated_prompt_tokens"], table["prompt_tokens"]),
            "completion": pc.coalesce(table["estimated_completion_tokens"],
                                      table["completion_tokens"])})
        rows = table.group_by(["provider", "model", "batched"]).aggregate(
            [("prompt", "sum"), ("completion", "sum")]).to_pylist()
        return self._priced([(r["provider"], r["model"], r["prompt_sum"] or 0,
                              r["completion_sum"] or 0, r["batched"]) for r in rows])

    def _priced(self, rows: list[tuple[Any, ...]]) -> Spend:
        """The spend of (provider, model, prompt tokens, completion tokens[, batched]) rows."""
        out = Spend()
        for provider, model, prompt, completion, *batched in rows:
            spec = self._prices.get((provider, model))
            cost = cost_usd(spec, prompt, completion) if spec is not None else None
            if cost is not None and batched and batched[0]:
                cost *= self.batch_price
            out.add(Spend(int(prompt), int(completion), cost))
        return out

    def committed(self, con: Any, probes: list[tuple[Any, ...]] = ()) -> None:
        """Counts the spend of the shards already committed (a resume), from a DuckDB
        connection over the run's ``calls`` (none: nothing spent) and their ``n`` probes'
        rows (:func:`committed_probes`)."""
        self.spent.add(self._priced(list(probes)))
        try:
            rows = con.execute(
                f"select provider, model, coalesce(sum({COUNTED_PROMPT}), 0), "
                f"coalesce(sum({COUNTED_COMPLETION}), 0), batch_id is not null from calls "
                "where not cache_hit group by all order by all").fetchall()
            estimated = con.execute(f"select count(*) filter (where {ESTIMATED}) from calls "
                                    "where not cache_hit").fetchone()[0]
        except Exception:  # noqa: BLE001 - no calls table yet: nothing spent
            return
        self.estimated_calls += int(estimated)
        self.spent.add(self._priced([tuple(r) for r in rows]))

    # --- reporting -----------------------------------------------------------------------

    def figures(self) -> dict[str, Any]:
        """The budget and the spend, for the manifest."""
        return {"max_cost_usd": self.max_cost, "max_tokens_total": self.max_tokens,
                "spent_usd": None if self.spent.cost is None else round(self.spent.cost, 6),
                "spent_tokens": self.spent.tokens,
                "prompt_tokens": self.spent.prompt_tokens,
                "completion_tokens": self.spent.completion_tokens,
                "estimated_calls": self.estimated_calls}

    def line(self) -> str:
        """The spend against the budget, for the progress line."""
        parts = []
        if self.max_cost is not None:
            parts.append(f"${self.spent.cost or 0.0:,.4f}/${self.max_cost:,.2f}")
        if self.max_tokens is not None:
            parts.append(f"tokens {self.spent.tokens:,}/{self.max_tokens:,}")
        if parts and self.estimated_calls:
            parts.append("(partly estimated)")
        return "  spent " + " ".join(parts) if parts else ""

    def rest(self, shards: list[Any]) -> tuple[float, float]:
        """(tokens, USD) ``shards`` may still spend, scaled as admissions are."""
        k_tok, k_usd = self._scale()
        tokens = cost = 0.0
        for shard in shards:
            t, c = self.shard_estimate(shard)
            tokens += t
            cost += c
        return tokens * k_tok, cost * k_usd


def proportional(plan: Any) -> Callable[[Any], tuple[int, int, float | None]] | None:
    """A shard's share of the plan's estimates by units (families without a per-shard hook);
    None when the plan has no estimate."""
    if plan.expected_tokens is None:
        return None
    paid = [s for s in plan.shards if not all(in_process(m) for m in shard_specs(s))]
    units = sum(s.num_units for s in paid)
    if not units:
        return None
    prompt, completion = plan.expected_tokens
    cost = plan.expected_cost

    def share(shard: Any) -> tuple[int, int, float | None]:
        f = shard.num_units / units
        return round(prompt * f), round(completion * f), None if cost is None else cost * f

    return share


def make_budget(plan: Any, max_cost: float | None, max_tokens: int | None,
                execution: str = "live", batch_price: float = 0.5) -> Budget | None:
    """The :class:`Budget` of ``plan`` (None when neither limit is given)."""
    if max_cost is None and max_tokens is None:
        return None
    estimate = getattr(plan, "shard_estimate", None) or proportional(plan)
    return Budget(max_cost, max_tokens, specs=plan.specs(), estimate=estimate,
                  batch_price=batch_price, execution=execution)


class ShardQueue:
    """The shards still to send, in plan order, handed out one at a time while ``admit``
    lets them through (:meth:`Budget.admit`; None: always)."""

    def __init__(self, shards: list[Any], admit: Callable[[Any], bool] | None = None) -> None:
        self._items = list(reversed(shards))
        self._admit = admit

    def take(self) -> Any | None:
        """The next shard, or None: none left, or the next one is not admitted (yet)."""
        if not self._items:
            return None
        if self._admit is not None and not self._admit(self._items[-1]):
            return None
        return self._items.pop()

    def left(self) -> list[Any]:
        """The shards not handed out, in plan order."""
        return list(reversed(self._items))

    def __len__(self) -> int:
        return len(self._items)


def probe_rows(specs: list[BackendSpec], stats: dict[str, Any] | None
               ) -> list[tuple[Any, ...]]:
    """A shard's ``n`` probes (requests sent with ``n`` to an endpoint that turned out not to
    take it: paid, but no ``calls`` row; the shard's ``probe_*`` stats) as one (provider, model,
    prompt tokens, completion tokens) row of its model, or none."""
    stats = stats or {}
    if not stats.get("probe_requests"):
        return []
    spec = next((s for s in specs if not in_process(s)), None)
    if spec is None:
        return []
    return [(spec.provider, spec.model, int(stats.get("probe_prompt_tokens", 0)),
             int(stats.get("probe_completion_tokens", 0)))]


def committed_probes(run_dir: Any) -> tuple[int, list[tuple[Any, ...]]]:
    """(how many ``n`` probes, their :func:`probe_rows`) of a run's committed shards, from
    their commit markers (a damaged marker counts none: its shard is the resume's to redo)."""
    import json
    from pathlib import Path

    from distbench.llm.base import BackendSpec as Spec
    from distbench.store.integrity import marker_paths

    count, rows = 0, []
    for path in marker_paths(Path(run_dir)):
        try:
            marker = json.loads(path.read_text(encoding="utf-8"))
            stats = marker.get("stats") or {}
            if not stats.get("probe_requests"):
                continue
            llm = marker["shard"]["llm"]
            spec = Spec(provider=str(llm["provider"]), model=str(llm["model"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        count += int(stats["probe_requests"])
        rows.extend(probe_rows([spec], stats))
    return count, rows
