"""OpenAI-compatible backends over async httpx: ``/v1/chat/completions`` and ``/v1/completions``
(and Anthropic's ``/v1/messages`` for a provider whose ``wire`` option is ``"anthropic"``: the
same backend, its payload, headers and answer reading from :mod:`distbench.llm.anthropic`).

Payload building and response parsing are pure functions (tested without a network). One retry
loop per call lives in :meth:`OpenAICompatibleBackend._call`; httpx's own retries are off.

A response body is untrusted data: it is read within the attempt's deadline and up to
:data:`MAX_BODY_BYTES` (:func:`read_capped`), and :func:`parse_body` checks every field it uses
(a malformed one is a :class:`BadBody` naming it: one failed call; an implausible token count is
None with a note; text is made valid UTF-8). A new field of an answer is one more
:class:`Parsed` attribute and one more helper in :mod:`distbench.llm.bodies`.
API keys are read from the environment variable the provider names, held in memory only, and
never placed in a row, a log line or an exception message.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import random
import re
import sys
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from distbench.llm import anthropic
from distbench.llm.base import (
    Backend,
    BackendSpec,
    BackendUnavailable,
    Request,
    Response,
    redact_url,
    valid_text,
)
from distbench.llm.bodies import (  # noqa: F401 - re-exported: the parsing of answers
    BadBody,
    Parsed,
    ordered_choices,
    parse_body,
)
from distbench.llm.limits import (
    RETRY_AFTER_CAP_S,
    Limits,
    RateLimiter,
    backoff_delay,
    classify_status,
    retry_after_seconds,
)
from distbench.llm.transport import BodyTooLarge as LeanBodyTooLarge
from distbench.llm.transport import LeanPool, json_bytes

log = logging.getLogger(__name__)

if importlib.util.find_spec("sniffio") is None:
    # httpcore tries ``import sniffio`` for every lock it sets up (several per request); a
    # module that is not installed is searched for on the whole path each time, milliseconds
    # a call. Recording it as absent makes each of those imports fail at once, as they would.
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]



def _lean_reachable(base_url: str) -> bool:
    """Whether the lean HTTP/1.1 path can reach ``base_url``: plain ``http://``, no user or
    password in it, and no proxy from the environment (``HTTP_PROXY``/``ALL_PROXY`` unless
    ``NO_PROXY`` exempts the host), since only httpx speaks to proxies."""
    import urllib.request

    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.username or parts.password:
        return False
    proxies = urllib.request.getproxies()
    if not (proxies.get("http") or proxies.get("all")):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname or ""))

class AuthenticationFailed(BackendUnavailable):
    """The endpoint rejected the credentials (401/403): the whole run stops."""


class EndpointUnavailable(BackendUnavailable):
    """The endpoint cannot be used (no key in the environment, server unreachable, wrong
    path)."""


SAMPLING_DIALECTS: dict[str, dict[str, float | int]] = {
    # The OpenAI API: plain temperature sampling once top_p is 1 and the penalties are 0.
    "openai": {"top_p": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0},
    # llama.cpp's servers (llama-server and llama-cpp-python's) default to top_k 40,
    # top_p 0.95, min_p 0.05 and repeat_penalty 1.1 (llama-cpp-python) unless told otherwise.
    "llamacpp": {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0,
                 "repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0},
    # vLLM: top_k -1 and repetition_penalty 1 switch its filters off.
    "vllm": {"top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0,
             "presence_penalty": 0.0, "frequency_penalty": 0.0},
    # Send temperature only (a server that rejects unknown fields); its defaults then apply.
    "none": {},
}
"""The sampling fields each kind of server is sent beside ``temperature``, so that every
request states plain temperature sampling (no top-k, top-p, min-p or repetition penalty)
instead of inheriting the server's defaults. A provider names its dialect in its ``sampling``
option."""


def sampling_fields(spec: BackendSpec) -> dict[str, float | int]:
    """The sampling fields (besides temperature) sent to ``spec``'s server."""
    dialect = spec.option("sampling", "openai")
    try:
        return dict(SAMPLING_DIALECTS[dialect])
    except KeyError:
        raise ValueError(f"unknown sampling dialect {dialect!r}; known: "
                         f"{', '.join(SAMPLING_DIALECTS)}") from None


def build_payload(spec: BackendSpec, req: Request) -> tuple[str, dict[str, Any]]:
    """The (path, JSON body) of a request for ``spec``'s style (or the request's own).

    Chat style sends the prompt as one user message; completion style sends it as the raw
    prompt, for base models. Every body declares the whole sampling configuration
    (:func:`sampling_fields`). A provider whose ``wire`` option is ``"anthropic"`` gets the
    Messages API's path and body instead (:func:`~distbench.llm.anthropic.messages_payload`).
    """
    if spec.option("wire") == anthropic.WIRE:
        return anthropic.messages_payload(spec, req)
    body: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        **sampling_fields(spec),
        "seed": int(req.seed % (2**31)),
    }
    if req.stop:
        body["stop"] = list(req.stop)
    if req.n > 1:
        body["n"] = req.n
    if req.style_for(spec.style) == "completion":
        body["prompt"] = req.completion_prompt()
        if req.logprobs is not None:
            body["logprobs"] = int(req.logprobs)
        return "/v1/completions", body
    body["messages"] = req.chat_messages()
    if req.logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = int(req.logprobs)
    return "/v1/chat/completions", body


def request_hash(spec: BackendSpec, base_url: str, path: str, body: dict[str, Any]) -> str:
    """Stable hash of everything that decides an answer (model, endpoint, body incl. seed)."""
    text = json.dumps({"url": base_url + path, "body": body, "provider": spec.provider},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_NAMES_N = re.compile(r"(?:['\"`]n['\"`]|\bn\b\s*(?:must|should|is|=|>|<)|\bchoices?\b|"
                      r"\bbest_of\b|n_samples|num_samples)", re.I)


def rejects_n(response: Response) -> bool:
    """Whether a failed answer to a request of several samples says the server does not take
    ``n`` (a 400/422 naming ``n`` or choices, e.g. llama-server's "Only one completion choice
    is allowed")."""
    return (response.status != "ok" and response.http_status in (400, 422)
            and bool(_NAMES_N.search(response.error or "")))


def asked_for(req: Request, data: Any) -> Any:
    """A response body without the fields ``req`` did not ask for: an unrequested (perhaps
    malformed) ``logprobs`` of a choice is dropped, never parsed, stored or an error."""
    if req.logprobs is not None or not isinstance(data, dict):
        return data
    choices = data.get("choices")
    if not isinstance(choices, list):
        return data
    return {**data, "choices": [{k: v for k, v in c.items() if k != "logprobs"}
                                if isinstance(c, dict) else c for c in choices]}


def estimate_tokens(req: Request) -> int:
    """Rough token count for the tokens-per-minute bucket: 4 characters a token."""
    return len(req.prompt) // 4 + req.max_tokens * req.n


def split_base_url(url: str) -> tuple[str, list[tuple[str, str]]]:
    """(the base URL without its query string, trailing ``/`` or ``/v1``; the query's
    (name, value) pairs), so that a gateway's ``?api-key=...`` is sent with every request
    (httpx would glue the request path after the query)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    base = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    return base, parse_qsl(parts.query, keep_blank_values=True)


MAX_BODY_BYTES = 8 * 1024 * 1024
"""Largest response body read (8 MiB): a longer one is abandoned as it streams in, and the
call fails (an answer is stored clipped at 65,536 characters anyway; 128 samples of that
fit)."""

POOL_CONNECTIONS = 8
"""Most connections of one httpx pool. httpcore matches every waiting request against every
connection of its pool on each change (quadratic in the pool's size), so an endpoint allowed
many concurrent calls (``max_concurrency``) spreads them over several pools of this size."""


def pool_sizes(connections: int, most: int) -> list[int]:
    """``connections`` split as evenly as it goes into pools of at most ``most``."""
    pools = max(1, -(-connections // most))
    return [connections // pools + (i < connections % pools) for i in range(pools)]


class BodyTooLarge(Exception):
    """A response body longer than :data:`MAX_BODY_BYTES`."""


async def read_capped(client: httpx.AsyncClient, method: str, path: str, timeout: float,
                      **kwargs: Any) -> tuple[int, bytes, httpx.Headers]:
    """One request: (status, body, headers). The whole of it (connecting, sending, reading
    every byte) has ``timeout`` seconds (``TimeoutError`` past it: a server that drips its
    body a byte a second is not waited for), and the body is read as it streams in,
    abandoned past :data:`MAX_BODY_BYTES` (:class:`BodyTooLarge` with (status, message))."""
    async with asyncio.timeout(timeout):
        async with client.stream(method, path, **kwargs) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise BodyTooLarge(resp.status_code, _too_large(int(declared)))
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise BodyTooLarge(resp.status_code, _too_large(None))
                chunks.append(chunk)
            return resp.status_code, b"".join(chunks), resp.headers


def _too_large(declared: int | None) -> str:
    """The error of a body over the cap: announced (``declared`` bytes), or found so."""
    if declared is not None:
        return (f"response body too large ({declared:,} bytes announced, at most "
                f"{MAX_BODY_BYTES:,} are read): not read")
    return (f"response body too large (over {MAX_BODY_BYTES:,} bytes, the most that is "
            "read): abandoned")


class OpenAICompatibleBackend(Backend):
    """An OpenAI-compatible endpoint.

    Options read from the spec: ``base_url``, ``key_env`` (environment variable holding the
    key, or None for keyless servers), ``rpm``, ``tpm``, ``max_concurrency``, ``timeout``,
    ``max_retries``.
    """

    reports_answers = True
    call_by_call = True

    def __init__(self, spec: BackendSpec, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep=asyncio.sleep, rng_seed: int = 0) -> None:
        super().__init__(spec)
        base = spec.option("base_url")
        if not base:
            raise EndpointUnavailable(f"provider {spec.provider!r} needs a base URL (--base-url)")
        self.base_url, self._params = split_base_url(str(base))
        self.key_env = spec.option("key_env")
        self._key = os.environ.get(self.key_env, "") if self.key_env else ""
        if self.key_env and not self._key and spec.option("key_required", True):
            raise EndpointUnavailable(
                f"{spec.provider} needs an API key: set the environment variable {self.key_env}"
            )
        self.limits = Limits(
            rpm=spec.option("rpm"),
            tpm=spec.option("tpm"),
            max_concurrency=int(spec.option("max_concurrency", 4)),
            timeout=float(spec.option("timeout", 60.0)),
            max_retries=int(spec.option("max_retries", 5)),
            retry_after_cap=float(spec.option("retry_after_cap", RETRY_AFTER_CAP_S)),
        )
        self._transport = transport
        self._sleep = sleep
        self._rng = random.Random(rng_seed)
        self._clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []
        self._ssl: Any = None
        self._limiter: RateLimiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._auth_error: str | None = None
        self.n_supported: bool | None = None if spec.max_samples() > 1 else False
        """Whether the endpoint answers ``n`` samples per request (None: not known yet)."""
        self._probe: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._lean: LeanPool | None = None
        self._lean_ok = (transport is None and _lean_reachable(self.base_url)
                         and os.environ.get("DISTBENCH_LEAN_HTTP", "1") != "0")
        """Whether calls go through :class:`~distbench.llm.transport.LeanPool` (plain
        ``http://`` reached directly, no test transport; ``DISTBENCH_LEAN_HTTP=0`` keeps httpx,
        to compare). A proxy from the environment or credentials in the URL keep httpx, which
        handles them."""

    @classmethod
    def resolve(cls, spec: BackendSpec) -> BackendSpec:
        """Names the model after the server's ``/v1/models`` when the provider's placeholder
        ``default`` stands for "whatever the server serves" (llama.cpp, vLLM)."""
        if spec.model != "default":
            return spec
        cls(spec)  # a missing key is reported first
        name = served_model_name(asyncio.run(check_endpoint(spec)))
        return dataclasses.replace(spec, model=name) if name else spec

    @classmethod
    def preflight(cls, spec: BackendSpec, styles: Sequence[str] = ()) -> None:
        cls(spec)  # raises when the key is missing
        asyncio.run(check_endpoint(spec, styles))

    def _scrub(self, text: str) -> str:
        """``text`` with the key and the base URL's query values (if they ever appear)
        replaced by ``***``, and any URL's secrets redacted (:func:`redact_url`)."""
        for secret in (self._key, *(v for _, v in self._params if len(v) >= 4)):
            if secret:
                text = text.replace(secret, "***")
        return redact_url(text)

    def _headers(self) -> dict[str, str]:
        if self.spec.option("wire") == anthropic.WIRE:
            return anthropic.headers(self._key)
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def _ensure(self) -> RateLimiter:
        """This event loop's rate limiter (its connection pools made with it)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # The clients, the limiter's locks and the connection pools belong to one event
            # loop; a backend reused under a new loop (one asyncio.run per shard) starts them
            # afresh.
            self._clients, self._limiter, self._loop, self._lean = [], None, loop, None
        if not self._clients:
            self._clients = [self._new_client(size) for size in pool_sizes(
                self.limits.max_concurrency, 1 if self._transport else POOL_CONNECTIONS)]
            self._busy = [0] * len(self._clients)
            self._limiter = RateLimiter(self.limits, sleep=self._sleep)
            if self._lean_ok:
                self._lean = LeanPool(self.base_url, self._params, self._headers(),
                                      self.limits.max_concurrency)
        return self._limiter

    def _new_client(self, connections: int) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections,
                              max_keepalive_connections=connections)
        if self._ssl is None and self._transport is None:
            # One for all the pools and loops: each costs reading the CA bundle (httpx makes
            # one per transport, for plain http too).
            self._ssl = httpx.create_ssl_context()
        # The limits go to the transport (an AsyncClient given a transport ignores its own).
        transport = self._transport or httpx.AsyncHTTPTransport(
            retries=0, limits=limits, verify=self._ssl)
        # Identity encoding: the body cap counts the bytes as sent (a compressed body
        # would be inflated chunk by chunk before it is counted).
        return httpx.AsyncClient(
            headers={"Accept-Encoding": "identity"},
            base_url=self.base_url,
            transport=transport,
            timeout=httpx.Timeout(self.limits.timeout),
            limits=limits,
        )

    def _pool(self) -> int:
        """The least busy pool (the caller counts its call in and out of ``_busy``)."""
        return min(range(len(self._busy)), key=self._busy.__getitem__)

    @property
    def limiter(self) -> RateLimiter | None:
        return self._limiter

    async def aclose(self) -> None:
        lean, self._lean = self._lean, None
        if lean is not None:
            await lean.aclose()
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        results = await asyncio.gather(*(self._answered_call(r) for r in requests),
                                       return_exceptions=True)
        for res in results:
            if isinstance(res, AuthenticationFailed):
                raise res
        out: list[Response] = []
        for res in results:
            if isinstance(res, BaseException):
                out.append(Response(text=None, status="failed",
                                    error=f"internal error: {type(res).__name__}"))
            else:
                out.append(res)
        return out

    async def _answered_call(self, req: Request) -> Response:
        if req.n > 1:
            return await self._sampled(req)
        return self.answered(await self._call(req))

    async def _sampled(self, req: Request) -> Response:
        """A request of several samples: one call with ``n`` where the endpoint takes it,
        else one call per sample (:meth:`Request.split`), returned as ``parts``.

        Whether the endpoint takes ``n`` is learnt once, from the first such request, sent
        alone (the others wait for the verdict), and kept for the endpoint: it does not when
        it answers fewer choices than asked (llama-cpp-python's server ignores ``n``) or
        rejects the request with a 400/422 naming ``n`` (llama-server). A call that fails
        otherwise (timeouts, 5xx after retries) decides nothing.
        """
        if self.n_supported is None:
            if self._probe is None or self._probe[0] is not asyncio.get_running_loop():
                self._probe = (asyncio.get_running_loop(), asyncio.Lock())
            async with self._probe[1]:
                if self.n_supported is None:
                    return await self._try_n(req)
        if self.n_supported:
            return await self._try_n(req)
        return await self._one_per_sample(req)

    async def _try_n(self, req: Request) -> Response:
        answer = await self._call(req)
        if answer.status == "ok" and len(answer.texts or ()) == req.n:
            self.n_supported = True
            return self.answered(answer)
        if answer.status == "ok" or rejects_n(answer):
            if self.n_supported is not False:
                log.info("%s at %s does not take n (%s): one request per sample from now on",
                         self.spec.provider, self.base_url,
                         f"{len(answer.texts or ())} of {req.n} choices"
                         if answer.status == "ok" else answer.error[:80])
            self.n_supported = False
            return dataclasses.replace(await self._one_per_sample(req),
                                       probe=probe_tokens(req, answer))
        return self.answered(answer)

    async def _one_per_sample(self, req: Request) -> Response:
        parts = await asyncio.gather(*(self._answered_call(r) for r in req.split()))
        ok = all(p.status == "ok" for p in parts)
        return Response(text=parts[0].text if ok else None, status="ok" if ok else "failed",
                        error="" if ok else next(p.error for p in parts if p.status != "ok"),
                        parts=tuple(parts))

    def _auth_message(self, status: int) -> str:
        who = f"{self.spec.provider} at {redact_url(self.base_url)}"
        fix = (f"check the key in the environment variable {self.key_env}" if self.key_env
               else "the server requires credentials")
        return f"{who} rejected the request with HTTP {status} (authentication): {fix}"

    async def _attempt(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, httpx.Headers]:
        """One POST (:func:`read_capped` with this endpoint's timeout, key and query) through
        the least busy connection pool, or the lean path of a plain-HTTP endpoint."""
        if self._lean is not None:
            try:
                async with asyncio.timeout(self.limits.timeout):
                    return await self._lean.post(path, json_bytes(body), MAX_BODY_BYTES)
            except LeanBodyTooLarge as exc:
                raise BodyTooLarge(exc.args[0], _too_large(exc.args[1])) from None
        pool = self._pool()
        self._busy[pool] += 1
        try:
            return await read_capped(self._clients[pool], "POST", path, self.limits.timeout,
                                     json=body, headers=self._headers(), params=self._params)
        finally:
            self._busy[pool] -= 1

    async def _call(self, req: Request) -> Response:
        limiter = self._ensure()
        path, body = build_payload(self.spec, req)
        style = req.style_for(self.spec.style)
        t0 = time.perf_counter()
        wire = 0.0  # seconds on the wire, all attempts
        last = 0.0  # seconds on the wire, the last attempt
        attempts = 0
        status: int | None = None
        error = ""

        def timings() -> dict[str, float]:
            total = time.perf_counter() - t0
            return {"latency_ms": last * 1000.0, "queue_ms": max(0.0, total - wire) * 1000.0}

        while True:
            if self._auth_error:
                raise AuthenticationFailed(self._auth_error)
            attempts += 1
            wait: float | None = None
            async with limiter.slot():
                # Paced inside the slot: at most max_concurrency reservations are ahead of a
                # 429's cut, so the lowered rate applies within a few requests.
                sent_at = await limiter.acquire(estimate_tokens(req))
                if self._auth_error:
                    raise AuthenticationFailed(self._auth_error)
                sent = time.perf_counter()
                try:
                    status, content, headers = await self._attempt(path, body)
                except (httpx.TimeoutException, TimeoutError):
                    status, error, verdict = None, f"timeout after {self.limits.timeout:g} s", "retry"
                except httpx.TransportError as exc:
                    status, error, verdict = None, f"connection error ({type(exc).__name__})", "retry"
                except BodyTooLarge as exc:
                    status, error, verdict = exc.args[0], exc.args[1], "fail"
                else:
                    verdict = classify_status(status)
                    if verdict == "ok":
                        try:
                            parsed = parse_body(style, asked_for(req, _json(content)), req.n,
                                                self.spec.option("wire"))
                        except (ValueError, RecursionError) as exc:
                            error = self._scrub(f"bad response body: {str(exc)[:200]}")
                            verdict = "retry"
                        else:
                            last = time.perf_counter() - sent
                            wire += last
                            limiter.on_success(sent_at)
                            return Response(
                                text=parsed.text, status="ok", http_status=status,
                                attempts=attempts, prompt_tokens=parsed.prompt_tokens,
                                completion_tokens=parsed.completion_tokens,
                                logprobs=parsed.logprobs, texts=parsed.texts,
                                reasoning=parsed.reasoning, reasoning_tokens=parsed.reasoning_tokens,
                                notes="; ".join(dict.fromkeys(parsed.notes)), **timings(),
                            )
                    elif verdict == "auth":
                        self._auth_error = self._auth_message(status)
                        raise AuthenticationFailed(self._auth_error)
                    else:
                        shown = content[:300].decode("utf-8", errors="replace")
                        error = self._scrub(f"HTTP {status}: {shown!r}")
                        if status == 429:
                            limiter.on_throttled(sent_at)
                        wait = retry_after_seconds(headers, cap=self.limits.retry_after_cap)
                last = time.perf_counter() - sent
                wire += last
            if verdict == "fail" or attempts > self.limits.max_retries:
                return Response(
                    text=None, status="failed", error=error, http_status=status,
                    attempts=attempts, **timings(),
                )
            delay = backoff_delay(attempts, self.limits.backoff_base, self.limits.backoff_cap,
                                  self._rng)
            if wait is not None:
                delay = wait + self._rng.uniform(0, 0.1 * wait + 0.01)
            log.debug("retrying %s after %.2f s (attempt %d: %s)", path, delay, attempts, error)
            await self._sleep(delay)


def _json(content: bytes) -> Any:
    """A body's JSON (``ValueError`` when it is not JSON; NaN and Infinity are read as floats,
    as Python's json does, and checked where used)."""
    if not content.strip():
        raise BadBody("empty body")
    return json.loads(content)


def _server_message(content: bytes) -> str:
    """The error message of a server's answer body, short: OpenAI's ``error.message``,
    FastAPI's ``detail``, or the start of the body."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:200]
        if isinstance(err, str):
            return err[:200]
        if data.get("detail"):
            return str(data["detail"])[:200]
    return content[:400].decode("utf-8", errors="replace").strip()[:200]


async def check_endpoint(spec: BackendSpec, styles: Sequence[str] = (),
                         timeout: float = 10.0) -> list[str]:
    """Checks that the endpoint answers on the paths a run will use; returns the model ids
    it lists (empty when it lists none).

    ``GET /v1/models`` answering 200 proves the base URL; otherwise (some servers list no
    models) a one-token request to the run's own path must not answer 404. Styles other than
    ``spec.style`` in ``styles`` (logprob mode reads completions from a chat-style model) are
    always probed with a one-token request. 429 and 5xx answers pass: the run retries them.

    Raises:
        EndpointUnavailable: unreachable, or a path answers 404/405/400, with the server's
            message and the fix.
        AuthenticationFailed: the server rejects the key (401/403).
    """
    backend = OpenAICompatibleBackend(spec)
    where = f"{spec.provider} at {redact_url(backend.base_url)}"
    if spec.option("wire") == anthropic.WIRE and "completion" in (spec.style, *styles):
        raise EndpointUnavailable(
            f"{where} speaks the Anthropic Messages API, chat only: no completions "
            "(--style completion) and no log-probabilities (logprob mode); use chat style "
            "with pure or mixed mode")
    try:
        async with httpx.AsyncClient(base_url=backend.base_url, timeout=timeout,
                                     params=backend._params) as client:
            listed, content, _ = await read_capped(client, "GET", "/v1/models", timeout,
                                                   headers=backend._headers())
            if listed in (401, 403):
                raise AuthenticationFailed(backend._auth_message(listed))
            models: list[str] = []
            if listed == 200:
                try:
                    models = [valid_text(str(m["id"]), "id")[0]
                              for m in json.loads(content).get("data", []) if "id" in m]
                except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
                    models = []
            probes = [s for s in dict.fromkeys([spec.style, *styles])
                      if s != spec.style or listed != 200]
            for style in probes:
                path, body = build_payload(spec, Request(
                    prompt="Hello", seed=0, max_tokens=1, temperature=0.0, style=style))
                code, answer, _ = await read_capped(client, "POST", path, timeout, json=body,
                                                     headers=backend._headers())
                if code in (401, 403):
                    raise AuthenticationFailed(backend._auth_message(code))
                if code in (400, 404, 405, 422):
                    message = backend._scrub(_server_message(answer))
                    why = ("check --base-url: it should be the server's root (e.g. "
                           "http://127.0.0.1:8080) or end in /v1" if code in (404, 405)
                           else "check --llm-model and the server's settings")
                    if style == "completion" and spec.style != "completion":
                        why += ("; logprob mode reads next-token probabilities from "
                                "/v1/completions, which a chat-only endpoint does not serve")
                    raise EndpointUnavailable(
                        f"{where}: POST {path} answered HTTP {code} ({message!r}); {why}")
            return models
    except (httpx.HTTPError, TimeoutError) as exc:
        raise EndpointUnavailable(
            f"cannot reach {where} ({type(exc).__name__}); "
            "is the server running, and is --base-url right?"
        ) from None
    except BodyTooLarge as exc:
        raise EndpointUnavailable(f"{where}: {exc.args[1]}; is --base-url right?") from None


def served_model_name(models: Sequence[str]) -> str | None:
    """The name to record for a server's model: its first listed id, a GGUF path reduced to
    the file name without ``.gguf``."""
    if not models:
        return None
    name = models[0]
    if name.lower().endswith(".gguf"):
        name = name.replace("\\", "/").rsplit("/", 1)[-1][: -len(".gguf")]
    return name


_CONTEXT_PATTERNS = (
    # llama-cpp-python's server and OpenAI: "This model's maximum context length is 256
    # tokens, however you requested 620 tokens (604 in your prompt; 16 for the completion)"
    re.compile(r"maximum context length is (?P<ctx>\d+) tokens.*?requested \d+ tokens "
               r"\((?P<n>\d+) in (?:the messages|your prompt)", re.I | re.S),
    # llama-cpp-python in process: "Requested tokens (2100) exceed context window of 2048"
    re.compile(r"requested tokens \((?P<n>\d+)\) exceed context window of (?P<ctx>\d+)", re.I),
    # vLLM / OpenAI: "maximum context length is 2048 tokens. However, you requested 2100 tokens"
    re.compile(r"maximum context length is (?P<ctx>\d+) tokens.*?(?:requested|resulted in) "
               r"(?P<n>\d+) tokens", re.I | re.S),
    # llama-server: "the request exceeds the available context size (2100 > 2048)" and alike
    re.compile(r"exceeds? the available context size.*?(?P<n>\d+)\D+(?P<ctx>\d+)", re.I | re.S),
)


def explain_failure(http_status: int | None, error: str, endpoint: str = "") -> str:
    """One line saying why a call failed, with the fix when the cause is known (a wrong path,
    a prompt longer than the model's context, a missing key)."""
    text = re.sub(r"^HTTP \d{3}: ", "", error or "unknown error")
    for pattern in _CONTEXT_PATTERNS:
        match = pattern.search(text)
        if match:
            return (f"the prompt of {match['n']} tokens exceeds the model's context of "
                    f"{match['ctx']} tokens: use a model or server with a longer context "
                    "(llama.cpp: --n_ctx), or smaller games")
    if http_status == 400 and "context" in text.lower():
        return f"the prompt exceeds the model's context ({text[:160]})"
    where = f" at {endpoint}" if endpoint else ""
    if http_status in (404, 405):
        return f"the server{where} answered HTTP {http_status} (not found): check --base-url"
    if http_status is not None:
        return f"the server{where} answered HTTP {http_status}: {text[:160]}"
    return f"{text[:160]}"


def probe_tokens(req: Request, answer: Response) -> tuple[int, int]:
    """The (prompt, completion) tokens an ``n`` probe is counted at: an answered probe at the
    tokens its endpoint reported, each at ``req``'s ceiling where not usable
    (:func:`distbench.llm.calls.usage_problem`); a rejected one (HTTP 400/422) at none."""
    from distbench.llm.calls import ceiling_tokens, usage_problem

    if answer.status != "ok":
        return 0, 0
    bad_prompt, bad_completion = usage_problem(req, answer)
    ceiling = ceiling_tokens(req)
    return (ceiling[0] if bad_prompt else int(answer.prompt_tokens or 0),
            ceiling[1] if bad_completion else int(answer.completion_tokens or 0))
