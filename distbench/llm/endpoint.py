"""Endpoints: one caching, rate-limited backend per endpoint, shared by every shard of a run.

* :class:`CachingBackend` puts the response cache in front of any backend.
* :class:`EndpointActor` is the async Ray actor holding one endpoint's backend (and so its rate
  limiter, connection pool and cache). It is named after :func:`endpoint_key` (provider, base
  URL, model, style and a fingerprint of the key — never the key), created by the driver and
  looked up by the shard tasks, and restartable (``max_restarts``).
* :class:`ActorBackend` is what a shard task uses: it sends its requests to the actor in
  batches and gets answers back in order.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from distbench.llm import meter
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.cache import ResponseCache, cache_key

NAMESPACE = "distbench"
BATCH = 256


def endpoint_key(spec: BackendSpec) -> str:
    """Identity of an endpoint: provider, base URL, model, style and key fingerprint."""
    key_env = spec.option("key_env")
    secret = os.environ.get(key_env, "") if key_env else ""
    fingerprint = hashlib.sha256(secret.encode()).hexdigest()[:12] if secret else ""
    text = json.dumps([spec.provider, spec.option("base_url"), spec.model, spec.style,
                       fingerprint])
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def actor_name(spec: BackendSpec) -> str:
    return f"distbench-endpoint-{spec.provider}-{endpoint_key(spec)}"


class CachingBackend(Backend):
    """Answers from the cache when it can, asks ``inner`` for the rest, stores the answers."""

    def __init__(self, inner: Backend, cache: ResponseCache | None) -> None:
        super().__init__(inner.spec)
        self.inner = inner
        self.cache = cache
        self.reports_answers = inner.reports_answers

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Cached answers, and the inner backend's for the rest.

        A request of several samples hits under its own key (answered with ``n``), or, when
        every sample is cached under its one-sample key (an endpoint without ``n`` answered
        it sample by sample), as those ``parts``. Fresh answers are stored the way they came:
        ``n`` answers under the request's key, parts under their samples' keys.
        """
        if self.cache is None:
            return await self.inner.generate(requests)
        keys = [cache_key(self.spec, r) for r in requests]
        singles = {i: [cache_key(self.spec, s) for s in r.split()]
                   for i, r in enumerate(requests) if r.samples}
        hits = self.cache.get_many(keys + [k for ks in singles.values() for k in ks])
        found: dict[int, Response] = {}
        for i, key in enumerate(keys):
            if key in hits:
                found[i] = hits[key]
            elif i in singles and all(k in hits for k in singles[i]):
                parts = tuple(hits[k] for k in singles[i])
                found[i] = Response(text=parts[0].text, attempts=0, cache_hit=True,
                                    parts=parts)
        missing = [i for i in range(len(requests)) if i not in found]
        if found:
            self.answered_hits([found[i] for i in sorted(found)])
        answers = await self.inner.generate([requests[i] for i in missing]) if missing else []
        items: list[tuple[str, Response]] = []
        for i, answer in zip(missing, answers, strict=True):
            if answer.parts is not None:
                items.extend(zip(singles[i], answer.parts, strict=True))
            else:
                items.append((keys[i], answer))
        self.cache.put_many(items)
        found.update(zip(missing, answers, strict=True))
        return [found[i] for i in range(len(requests))]

    def answered_hits(self, responses: list[Response]) -> None:
        if self.reports_answers:
            for r in responses:
                for part in r.parts or (r,):
                    self.answered(part)

    async def aclose(self) -> None:
        await self.inner.aclose()
        if self.cache is not None:
            self.cache.close()


class MeteredBackend(Backend):
    """Counts a backend's answers for the live progress (:mod:`distbench.llm.meter`): as
    each returns when the backend reports them (``reports_answers``), else per batch; the
    answers asked for as the requests arrive; and the backend's status line."""

    def __init__(self, inner: Backend, key: str) -> None:
        super().__init__(inner.spec)
        self.inner = inner
        self.key = key
        wrapped = [inner, inner.inner] if isinstance(inner, CachingBackend) else [inner]
        for backend in wrapped:
            backend.on_status = lambda message: meter.set_status(key, message)
            if inner.reports_answers:
                backend.on_answer = lambda r: meter.record(key, (r,))

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        meter.record_sent(self.key, requests)
        answers = await self.inner.generate(requests)
        if not self.inner.reports_answers:
            meter.record(self.key, answers)
        return answers

    async def aclose(self) -> None:
        await self.inner.aclose()


def default_cache_path() -> Path:
    from distbench import cache_dir

    return cache_dir() / "responses.sqlite"


def build_direct(spec: BackendSpec) -> Backend:
    """The endpoint's backend in this process, behind the cache unless ``cache`` is off."""
    from distbench.llm.registry import build_backend

    inner = build_backend(spec)
    if spec.option("cache", True):
        path = spec.option("cache_path") or default_cache_path()
        inner = CachingBackend(inner, ResponseCache(path))
    backend = MeteredBackend(inner, endpoint_key(spec))
    _DIRECT[endpoint_key(spec)] = backend
    return backend


_DIRECT: dict[str, Backend] = {}
"""The last backend :func:`build_direct` made per endpoint in this process (for the limits
in force, read by a driver running shards here)."""


def throttle_state(stats: list[dict[str, float]]) -> dict[str, float]:
    """The rate in force and the configured one summed over endpoints (``rate_rps``,
    ``rate_limit_rps``), from :func:`limiter_stats` records; empty when none is limited."""
    limited = [st for st in stats if "rate_rps" in st]
    if not limited:
        return {}
    return {"rate_rps": sum(st["rate_rps"] for st in limited),
            "rate_limit_rps": sum(st["rate_limit_rps"] for st in limited)}


def direct_throttle_state(keys: list[str]) -> dict[str, float]:
    """:func:`throttle_state` of this process's endpoints ``keys`` (without Ray)."""
    return throttle_state([limiter_stats(_DIRECT[k]) for k in keys if k in _DIRECT])


OWNER_POLL_S = 0.2
"""How often an endpoint actor checks that the driver owning it is alive."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    try:  # a killed driver its parent has not reaped yet is a zombie: gone all the same
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


class EndpointActor:
    """The Ray actor of one endpoint (wrapped with ``ray.remote`` by :func:`get_or_create`).

    ``owner`` is the (Ray node id, pid) of the driver that created it. On the driver's node
    the actor checks every :data:`OWNER_POLL_S` seconds that the driver lives, and exits at
    once when it is gone (``kill -9``): no model call is made for a run nobody will write.
    Ray ends a dead driver's actors too, but only after seconds; elsewhere that is what
    happens."""

    def __init__(self, spec: BackendSpec, owner: tuple[str, int] | None = None) -> None:
        if owner is not None:
            self._watch(*owner)
        self.backend = build_direct(spec)
        self.calls = 0

    @staticmethod
    def _watch(node: str, pid: int) -> None:
        import ray

        context = ray.get_runtime_context()
        if context.get_node_id() != node:
            return

        def stop() -> None:
            try:  # no restart: a restarted actor would replay the calls in flight
                ray.kill(context.current_actor, no_restart=True)
            finally:
                os._exit(0)  # in-flight HTTP calls end with the process

        if not _alive(pid):
            stop()

        def watch() -> None:
            while _alive(pid):
                time.sleep(OWNER_POLL_S)
            stop()

        threading.Thread(target=watch, name="distbench-owner", daemon=True).start()

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += len(requests)
        return await self.backend.generate(requests)

    def stats(self) -> dict[str, float]:
        """``requests`` received, the live counts of the answers (``meter.FIELDS``), the
        backend's ``status`` line and, for a rate-limited backend, its limits now
        (:func:`limiter_stats`)."""
        key = endpoint_key(self.backend.spec)
        return {"requests": self.calls, **meter.snapshot([key]), "status": meter.status([key]),
                **limiter_stats(self.backend)}


def limiter_stats(backend: Backend) -> dict[str, float]:
    """The limits in force at ``backend`` (or the backend it wraps) and the configured ones:
    ``rate_rps`` / ``rate_limit_rps`` (when an rpm is set), ``concurrency`` /
    ``concurrency_limit`` and ``throttled`` (429s seen); empty when it has no rate limiter."""
    while backend is not None:
        limiter = getattr(backend, "limiter", None)
        if limiter is not None:
            state = limiter.state()
            out = {"concurrency": state.concurrency,
                   "concurrency_limit": state.configured_concurrency,
                   "throttled": state.throttled}
            if state.rps is not None and state.configured_rps is not None:
                out.update(rate_rps=state.rps, rate_limit_rps=state.configured_rps)
            return out
        backend = getattr(backend, "inner", None)
    return {}


def get_or_create(spec: BackendSpec):
    """The endpoint actor for ``spec``: created (once per cluster namespace) or looked up."""
    import ray

    remote = ray.remote(EndpointActor)
    return remote.options(
        name=actor_name(spec),
        namespace=NAMESPACE,
        get_if_exists=True,
        max_restarts=3,
        max_task_retries=2,
        max_concurrency=1000,
        num_cpus=0,
    ).remote(spec, (ray.get_runtime_context().get_node_id(), os.getpid()))


class ActorBackend(Backend):
    """A shard's view of an endpoint actor: batches out, answers back in order."""

    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        import ray

        self._actor = ray.get_actor(actor_name(spec), namespace=NAMESPACE)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        batches = [list(requests[i : i + BATCH]) for i in range(0, len(requests), BATCH)]
        results = await asyncio.gather(*(self._actor.generate.remote(b) for b in batches))
        return [r for batch in results for r in batch]
