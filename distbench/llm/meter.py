"""Live counts of model calls, per endpoint, in the process that makes them.

Backends that call a model report each answer as it returns (:func:`record`); the endpoint
actor of a run (or, without Ray, the driver's own backends) thus holds counts that move call
by call, which the driver reads a few times a second for the progress line
(:func:`snapshot`). Counts only grow; a reader subtracts what it saw when its run started.

Besides the answers, an endpoint counts the answers it was asked for (``sent``, when the
requests reach it: ``sent - calls`` are in flight) and keeps one line saying what its model
is doing when that is slow and otherwise invisible, such as loading a local model or its
first prompt evaluation (:func:`set_status`, :func:`status`; empty when there is nothing to
say).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from distbench.llm.base import Request, Response

__all__ = ["FIELDS", "record", "record_sent", "set_status", "snapshot", "status"]

FIELDS = ("calls", "failed", "cache_hits", "prompt_tokens", "completion_tokens", "sent")

_lock = threading.Lock()
_counts: dict[str, dict[str, int]] = {}
_status: dict[str, str] = {}


def record(key: str, responses: Iterable[Response], *, cache_hits: bool = False) -> None:
    """Counts ``responses`` (answers that just returned) for endpoint ``key``."""
    with _lock:
        c = _counts.setdefault(key, dict.fromkeys(FIELDS, 0))
        for whole in responses:
            if whole.probe is not None:  # paid, though no answer of a trial
                c["prompt_tokens"] += whole.probe[0]
                c["completion_tokens"] += whole.probe[1]
            for r in whole.parts or (whole,):
                # A request of several samples counts as that many answers (so the count
                # moves with the trials the run plans, whichever way they are asked).
                answers = r.answers
                c["calls"] += answers
                c["failed"] += answers * (r.status != "ok")
                c["cache_hits"] += answers * (cache_hits or r.cache_hit)
                c["prompt_tokens"] += r.prompt_tokens or 0
                c["completion_tokens"] += r.completion_tokens or 0


def record_sent(key: str, requests: Sequence[Request]) -> None:
    """Counts the answers ``requests`` ask endpoint ``key`` for (a request of ``n`` samples
    counts ``n``, as :func:`record` counts its answers)."""
    with _lock:
        c = _counts.setdefault(key, dict.fromkeys(FIELDS, 0))
        c["sent"] += sum(r.n for r in requests)


def set_status(key: str, message: str) -> None:
    """What endpoint ``key``'s model is doing now, in a few words ("" when nothing worth
    saying: it is answering)."""
    with _lock:
        _status[key] = message


def status(keys: Iterable[str] | None = None) -> str:
    """The status lines of ``keys`` (None: every endpoint of this process), joined by "; "."""
    with _lock:
        chosen = _status.values() if keys is None else [_status.get(k, "") for k in keys]
        return "; ".join(s for s in chosen if s)


def snapshot(keys: Iterable[str] | None = None) -> dict[str, int]:
    """The sums of the counts of ``keys`` (None: every endpoint of this process)."""
    with _lock:
        chosen = _counts.values() if keys is None else [_counts[k] for k in keys if k in _counts]
        return {f: sum(c[f] for c in chosen) for f in FIELDS}
