"""The health of a run's model calls (``summary.json``'s ``calls`` record), from its ``calls``
table: counts, failures, tokens and cost. Kept apart from the driver, which writes it."""

from __future__ import annotations

from typing import Any

from distbench.llm.base import BackendSpec, cost_usd
from distbench.llm.calls import COUNTED_COMPLETION, COUNTED_PROMPT, ESTIMATED


def call_health(con: Any, specs: list[BackendSpec] | None = None,
                batch_price: float = 0.5,
                probes: tuple[int, list[tuple[Any, ...]]] | None = None
                ) -> dict[str, Any] | None:
    """How the run's model calls went, from its ``calls`` table: counts, failures, the most
    common failure explained, the tokens the endpoints reported and, for models with a price
    (``specs``' ``price_in``/``price_out``), what they cost, calls answered by a batch
    (``batch_id``) at ``batch_price`` of it (None when the run made no calls). ``probes``
    (:func:`distbench.engine.budget.committed_probes`): the ``n`` probes, paid without a
    ``calls`` row, counted in the tokens and the cost as ``probe_requests``."""
    from distbench.llm.http import explain_failure

    try:
        rows = con.execute(
            "select status, http_status, error, endpoint, count(*) from calls "
            "group by all order by count(*) desc, status, http_status nulls first, error"
        ).fetchall()
    except Exception:  # noqa: BLE001 - a run without a calls table made no calls
        return None
    total = sum(r[4] for r in rows)
    if not total:
        return None
    failed_rows = [r for r in rows if r[0] != "ok"]
    failed = sum(r[4] for r in failed_rows)
    out: dict[str, Any] = {"calls": total, "failed": failed,
                           "failed_share": round(failed / total, 6)}
    if failed_rows:
        _, status, error, endpoint, count = failed_rows[0]
        out["top_failure"] = {"http_status": status, "error": error, "count": count,
                              "explained": explain_failure(status, error or "",
                                                           endpoint.partition(":")[2])}
    by_kind = con.execute(  # a call whose counts were not usable at its ceiling
        f"select provider, model, coalesce(sum({COUNTED_PROMPT}), 0), "
        f"coalesce(sum({COUNTED_COMPLETION}), 0), batch_id is not null as batched from calls "
        "where not cache_hit group by all order by all").fetchall()
    if probes is not None and probes[0]:
        out["probe_requests"] = probes[0]
        by_kind = [*by_kind, *((*row, False) for row in probes[1])]
    out["prompt_tokens"] = int(sum(r[2] for r in by_kind))
    out["completion_tokens"] = int(sum(r[3] for r in by_kind))
    priced = {(s.provider, s.model): s for s in specs or []}
    kinds: dict[tuple[str, str], float | None] = {}
    for p, m, pt, ct, batched in by_kind:
        cost = cost_usd(priced[(p, m)], pt, ct) if (p, m) in priced else None
        if cost is not None and batched:
            cost *= batch_price
        before = kinds.get((p, m), 0.0)
        kinds[(p, m)] = None if before is None or cost is None else before + cost
    by_model = [(p, m, None, None) for p, m in kinds]
    costs = list(kinds.values())
    estimated = con.execute(f"select count(*) filter (where {ESTIMATED}) from calls "
                            "where not cache_hit").fetchone()[0]
    if estimated:  # counted at their requests' ceilings (distbench.llm.calls)
        out["usage_estimated_calls"] = int(estimated)
    batched_calls = con.execute("select count(*) from calls where batch_id is not null"
                                ).fetchone()[0]
    if batched_calls:
        out["batch_calls"] = int(batched_calls)
        out["batch_price"] = batch_price
    if not by_kind:  # every answer from the response cache: nothing was billed
        out["billed_calls"] = 0
    out["cost_usd"] = (0.0 if not by_kind else
                       round(sum(costs), 6) if None not in costs else None)
    out["cost_by_model"] = {f"{p}:{m}": None if c is None else round(c, 6)
                            for (p, m, _, _), c in zip(by_model, costs, strict=True)}
    return out
