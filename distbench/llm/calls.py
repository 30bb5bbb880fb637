"""The ``calls`` rows: one per model call, for every family. Never a key or a header.

A request of several samples answered in one call is one row (``samples`` = k); one that the
endpoint answered sample by sample is given to :func:`calls_table` as its one-sample requests
and their answers (``samples`` = 1 each), exactly the rows of one request per trial.

An answer is never free because its endpoint did not say what it cost: an answer of a paid
endpoint (not in process, not from the cache) whose token counts are missing or implausible
(:func:`usage_problem`: none, 0, negative, a completion longer than the request allowed, a
prompt far longer than the text sent) keeps what the endpoint said in ``prompt_tokens`` and
``completion_tokens`` (NULL when not a count) and gets the request's ceiling of each count
that is not usable in ``estimated_prompt_tokens`` or ``estimated_completion_tokens`` (:func:`ceiling_tokens`: the
prompt at a quarter of its characters, the whole completion budget; the bound budgets admit
shards on): budgets, costs and the summary count those instead (:data:`COUNTED_PROMPT`,
:data:`COUNTED_COMPLETION`) and say that the spend is partly estimated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyarrow as pa

from distbench.llm.base import BackendSpec, Request, Response, redact_url
from distbench.llm.cache import cache_key
from distbench.store.schema import CALLS

__all__ = ["COUNTED_COMPLETION", "COUNTED_PROMPT", "ESTIMATED", "calls_table", "ceiling_tokens",
           "usage_problem"]

COUNTED_PROMPT = "coalesce(estimated_prompt_tokens, prompt_tokens)"
"""SQL of the prompt tokens a call counts for (budgets, costs): the ceiling when estimated."""
COUNTED_COMPLETION = "coalesce(estimated_completion_tokens, completion_tokens)"
"""SQL of the completion tokens a call counts for."""
ESTIMATED = "(estimated_prompt_tokens is not null or estimated_completion_tokens is not null)"
"""SQL: the call counts (partly) at its request's ceiling."""


def ceiling_tokens(req: Request) -> tuple[int, int]:
    """(prompt, completion) tokens ``req`` is counted at when its endpoint's counts are not
    usable: a quarter of the prompt's characters (rounded up) and ``max_tokens`` per sample."""
    text = req.completion_prompt()
    return max(1, -(-len(text) // 4)), req.max_tokens * max(1, req.n)


def usage_problem(req: Request, response: Response, text: str | None = None
                  ) -> tuple[str, str]:
    """Why an answered call's (prompt, completion) token counts cannot be trusted, each
    ("" when it can): missing, 0 or negative, a completion longer than the request allowed
    (or 0 for a non-empty answer), a prompt far longer than the text sent (``text``, the
    request's rendered prompt when the caller has it already)."""
    prompt, completion = response.prompt_tokens, response.completion_tokens
    sent = len((req.completion_prompt() if text is None else text).encode("utf-8"))
    allowed = req.max_tokens * max(1, req.n)
    if prompt is None or prompt <= 0:
        bad_prompt = f"prompt_tokens {prompt}"
    elif prompt > 2 * sent + 512:
        bad_prompt = f"prompt_tokens {prompt:,} for a prompt of {sent:,} bytes"
    else:
        bad_prompt = ""
    if completion is None or completion < 0:
        bad_completion = f"completion_tokens {completion}"
    elif completion == 0 and (response.text or "").strip():
        bad_completion = "completion_tokens 0 for a non-empty answer"
    elif completion > allowed:
        bad_completion = (f"completion_tokens {completion:,} over the {allowed:,} the request "
                          "allowed")
    else:
        bad_completion = ""
    return bad_prompt, bad_completion


def _paid(spec: BackendSpec) -> bool:
    """Whether calls to ``spec`` go to an endpoint (not an in-process model)."""
    from distbench.llm.registry import backend_class

    if spec.provider.startswith("scripted"):
        return False
    try:
        return not backend_class(spec.provider).in_process
    except Exception:  # noqa: BLE001 - an unknown provider: counted as paid
        return True


def _estimated(spec: BackendSpec, requests: Sequence[Request], responses: Sequence[Response],
               prompts: Sequence[str]) -> list[tuple[int | None, int | None, str]]:
    """(estimated prompt tokens, estimated completion tokens, notes) of each call: for an
    answered call, the request's ceiling of each count that is not usable, else None
    (``prompts``: the requests' rendered prompts, rendered once for the rows)."""
    paid = _paid(spec)
    out = []
    for req, r, text in zip(requests, responses, prompts, strict=True):
        bad = usage_problem(req, r, text) if paid and r.status == "ok" and not r.cache_hit \
            else ("", "")
        if not any(bad):
            out.append((None, None, r.notes))
            continue
        prompt, completion = ceiling_tokens(req)
        note = f"usage: {'; '.join(w for w in bad if w)}: counted at the request's ceiling"
        out.append((prompt if bad[0] else None, completion if bad[1] else None,
                    f"{r.notes}; {note}" if r.notes else note))
    return out


_FROM_RESPONSE = {
    "status": "status", "error": "error", "http_status": "http_status", "attempts": "attempts",
    "latency_ms": "latency_ms", "queue_ms": "queue_ms", "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens", "reasoning_content": "reasoning",
    "reasoning_tokens": "reasoning_tokens", "cache_hit": "cache_hit", "batch_id": "batch_id",
}
"""``calls`` columns copied from each :class:`Response`: column -> the response's attribute."""


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
    prompts = [r.completion_prompt() for r in requests]  # long transcripts: rendered once
    estimated = _estimated(spec, requests, responses, prompts)
    same = {"run_id": run_id, "shard_id": shard_id, "mode": mode, "endpoint": endpoint,
            "provider": spec.provider, "model": spec.model, "style": spec.style}
    columns = {name: [value] * n for name, value in same.items()}
    columns.update({name: [getattr(r, attr) for r in responses]
                    for name, attr in _FROM_RESPONSE.items()})
    columns.update({
        "call_id": list(call_ids),
        "trial_id": list(trial_ids),
        "request_hash": [cache_key(spec, r) for r in requests],
        "prompt_text": prompts,
        "response_text": [_response_text(r) for r in responses],
        "samples": [r.n for r in requests],
        "notes": [e[2] for e in estimated],
        "estimated_prompt_tokens": [e[0] for e in estimated],
        "estimated_completion_tokens": [e[1] for e in estimated],
    })
    return pa.table(columns, schema=CALLS)


def _response_text(response: Response) -> str | None:
    """The stored answer text: the JSON list of the samples' texts for a request answered with
    several samples (``n``), else the text."""
    if response.texts is not None and response.status == "ok":
        return json.dumps(list(response.texts), ensure_ascii=False)
    return response.text
