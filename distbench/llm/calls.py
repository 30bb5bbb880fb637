"""The ``calls`` rows: one per model call, for every family. Never a key or a header.

A request of several samples answered in one call is one row (``samples`` = k); one that the
endpoint answered sample by sample is given to :func:`calls_table` as its one-sample requests
and their answers (``samples`` = 1 each), exactly the rows of one request per trial.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from distbench.llm.base import BackendSpec, Request, Response, redact_url
from distbench.llm.cache import cache_key
from distbench.store.schema import CALLS


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
        "prompt_tokens": [r.prompt_tokens for r in responses],
        "completion_tokens": [r.completion_tokens for r in responses],
        "reasoning_content": [r.reasoning for r in responses],
        "reasoning_tokens": [r.reasoning_tokens for r in responses],
        "cache_hit": [r.cache_hit for r in responses],
        "samples": [r.n for r in requests],
        "notes": [r.notes for r in responses],
        "batch_id": [r.batch_id for r in responses],
    }
    return pa.table(columns, schema=CALLS)


def _response_text(response: Response) -> str | None:
    """The stored answer text: the JSON list of the samples' texts for a request answered with
    several samples (``n``), else the text."""
    if response.texts is not None and response.status == "ok":
        return json.dumps(list(response.texts), ensure_ascii=False)
    return response.text
