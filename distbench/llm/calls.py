"""The ``calls`` rows: one per model call, for every family. Never a key or a header.

A request of several samples answered in one call is one row (``samples`` = k); one that the
endpoint answered sample by sample is given to :func:`calls_table` as its one-sample requests
and their answers (``samples`` = 1 each), exactly the rows of one request per trial.

An answer is never free because its endpoint did not say what it cost: an answer of a paid
endpoint (not in process, not from the cache) whose token counts are missing or implausible
(:func:`usage_problem`: none, 0, negative, a completion longer than the request allowed, a
prompt far longer than the text sent) is stored at the request's ceiling
(:func:`ceiling_tokens`: the prompt at a quarter of its characters, the whole completion
budget; the bound budgets admit shards on) with ``usage_estimated`` true, so budgets, costs
and the summary count it so and say that the spend is partly estimated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from distbench.llm.base import BackendSpec, Request, Response, redact_url
from distbench.llm.cache import cache_key
from distbench.store.schema import CALLS

__all__ = ["calls_table", "ceiling_tokens", "usage_problem"]


def ceiling_tokens(req: Request) -> tuple[int, int]:
    """(prompt, completion) tokens ``req`` is counted at when its endpoint's counts are not
    usable: a quarter of the prompt's characters (rounded up) and ``max_tokens`` per sample."""
    text = req.completion_prompt()
    return max(1, -(-len(text) // 4)), req.max_tokens * max(1, req.n)


def usage_problem(req: Request, response: Response) -> str:
    """Why an answered call's token counts cannot be trusted ("" when they can)."""
    prompt, completion = response.prompt_tokens, response.completion_tokens
    if prompt is None and completion is None:
        return "no usable usage reported"
    if prompt is None or prompt <= 0:
        return f"prompt_tokens {prompt}"
    if completion is None or completion < 0:
        return f"completion_tokens {completion}"
    if completion == 0 and (response.text or "").strip():
        return "completion_tokens 0 for a non-empty answer"
    allowed = req.max_tokens * max(1, req.n)
    if completion > allowed:
        return f"completion_tokens {completion:,} over the {allowed:,} the request allowed"
    sent = len(req.completion_prompt().encode("utf-8"))
    if prompt > 2 * sent + 512:
        return f"prompt_tokens {prompt:,} for a prompt of {sent:,} bytes"
    return ""


def _paid(spec: BackendSpec) -> bool:
    """Whether calls to ``spec`` go to an endpoint (not an in-process model)."""
    from distbench.llm.registry import backend_class

    if spec.provider.startswith("scripted"):
        return False
    try:
        return not backend_class(spec.provider).in_process
    except Exception:  # noqa: BLE001 - an unknown provider: counted as paid
        return True


def _counted(spec: BackendSpec, requests: Sequence[Request], responses: Sequence[Response]
             ) -> list[tuple[int | None, int | None, bool, str]]:
    """(prompt tokens, completion tokens, estimated, notes) of each call: the endpoint's
    counts, or the request's ceiling when an answered call's counts are not usable."""
    paid = _paid(spec)
    out = []
    for req, r in zip(requests, responses, strict=True):
        why = usage_problem(req, r) if paid and r.status == "ok" and not r.cache_hit else ""
        if not why:
            out.append((r.prompt_tokens, r.completion_tokens, False, r.notes))
            continue
        prompt, completion = ceiling_tokens(req)
        note = f"usage: {why}; counted at the request's ceiling"
        out.append((prompt, completion, True, f"{r.notes}; {note}" if r.notes else note))
    return out


def calls_table(
    run_id: str,
    shard_id: str,
    spec: BackendSpec,
    mode: str,
    requests: Sequence[Request],
    responses: Sequence[Response],
    call_ids: Sequence[str],
    trial_ids: Sequence[str],
) -> pa.Table:
    """Arrow rows of the ``calls`` table for aligned requests and responses.

    Args:
        run_id: The run.
        shard_id: The shard that made the calls.
        spec: The model called.
        mode: The family's mode label of these calls (e.g. ``pure``, ``semi``).
        requests: The requests, in order.
        responses: Their answers, aligned with ``requests``.
        call_ids: Unique, deterministic ids of the calls.
        trial_ids: What each call answered (a trial, or an episode turn).
    """
    endpoint = redact_url(f"{spec.provider}:{spec.option('base_url') or 'in-process'}")
    n = len(requests)
    counted = _counted(spec, requests, responses)
    columns = {
        "run_id": [run_id] * n,
        "shard_id": [shard_id] * n,
        "call_id": list(call_ids),
        "trial_id": list(trial_ids),
        "mode": [mode] * n,
        "endpoint": [endpoint] * n,
        "provider": [spec.provider] * n,
        "model": [spec.model] * n,
        "style": [spec.style] * n,
        "request_hash": [cache_key(spec, r) for r in requests],
        "prompt_text": [r.completion_prompt() for r in requests],
        "response_text": [_response_text(r) for r in responses],
        "status": [r.status for r in responses],
        "error": [r.error for r in responses],
        "http_status": [r.http_status for r in responses],
        "attempts": [r.attempts for r in responses],
        "latency_ms": [r.latency_ms for r in responses],
        "queue_ms": [r.queue_ms for r in responses],
        "prompt_tokens": [c[0] for c in counted],
        "completion_tokens": [c[1] for c in counted],
        "reasoning_content": [r.reasoning for r in responses],
        "reasoning_tokens": [r.reasoning_tokens for r in responses],
        "cache_hit": [r.cache_hit for r in responses],
        "samples": [r.n for r in requests],
        "notes": [c[3] for c in counted],
        "batch_id": [r.batch_id for r in responses],
        "usage_estimated": [c[2] for c in counted],
    }
    return pa.table(columns, schema=CALLS)


def _response_text(response: Response) -> str | None:
    """The stored answer text: the JSON list of the samples' texts for a request answered with
    several samples (``n``), else the text."""
    if response.texts is not None and response.status == "ok":
        return json.dumps(list(response.texts), ensure_ascii=False)
    return response.text
