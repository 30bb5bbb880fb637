"""Live counts of model calls, per endpoint, in the process that makes them.

Backends that call a model report each answer as it returns (:func:`record`); the endpoint
actor of a run (or, without Ray, the driver's own backends) thus holds counts that move call
by call, which the driver reads a few times a second for the progress line
(:func:`snapshot`). Counts only grow; a reader subtracts what it saw when its run started.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from distbench.llm.base import Response

__all__ = ["FIELDS", "record", "snapshot"]

FIELDS = ("calls", "failed", "cache_hits", "prompt_tokens", "completion_tokens")

_lock = threading.Lock()
_counts: dict[str, dict[str, int]] = {}


def record(key: str, responses: Iterable[Response], *, cache_hits: bool = False) -> None:
    """Counts ``responses`` (answers that just returned) for endpoint ``key``."""
    with _lock:
        c = _counts.setdefault(key, dict.fromkeys(FIELDS, 0))
        for whole in responses:
            for r in whole.parts or (whole,):
                # A request of several samples counts as that many answers (so the count
                # moves with the trials the run plans, whichever way they are asked).
                answers = r.answers
                c["calls"] += answers
                c["failed"] += answers * (r.status != "ok")
                c["cache_hits"] += answers * (cache_hits or r.cache_hit)
                c["prompt_tokens"] += r.prompt_tokens or 0
                c["completion_tokens"] += r.completion_tokens or 0


def snapshot(keys: Iterable[str] | None = None) -> dict[str, int]:
    """The sums of the counts of ``keys`` (None: every endpoint of this process)."""
    with _lock:
        chosen = _counts.values() if keys is None else [_counts[k] for k in keys if k in _counts]
        return {f: sum(c[f] for c in chosen) for f in FIELDS}
