"""OpenAI-compatible backends over async httpx: ``/v1/chat/completions`` and ``/v1/completions``.

Payload building and response parsing are pure functions (tested without a network). One retry
loop per call lives in :meth:`OpenAICompatibleBackend._call`; httpx's own retries are off.
API keys are read from the environment variable the provider names, held in memory only, and
never placed in a row, a log line or an exception message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import random
import time
from collections.abc import Sequence
from typing import Any

import httpx

from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.limits import (
    Limits,
    RateLimiter,
    backoff_delay,
    classify_status,
    retry_after_seconds,
)

log = logging.getLogger(__name__)


class AuthenticationFailed(RuntimeError):
    """The endpoint rejected the credentials (401/403): the whole run stops."""


class EndpointUnavailable(RuntimeError):
    """The endpoint cannot be used (no key in the environment, server unreachable)."""


def build_payload(spec: BackendSpec, req: Request) -> tuple[str, dict[str, Any]]:
    """The (path, JSON body) of a request for ``spec``'s style.

    Chat style sends the prompt as one user message; completion style sends it as the raw
    prompt, for base models.
    """
    body: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        "seed": int(req.seed % (2**31)),
    }
    if req.stop:
        body["stop"] = list(req.stop)
    if spec.style == "completion":
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


class BadBody(ValueError):
    """A 2xx response whose body is not a usable OpenAI answer."""


def parse_body(style: str, data: Any) -> tuple[str, int | None, int | None, tuple | None]:
    """(text, prompt_tokens, completion_tokens, first-token top logprobs) of a response body.

    Raises:
        BadBody: the body is not an OpenAI-shaped answer.
    """
    try:
        choice = data["choices"][0]
        if style == "completion":
            text = choice["text"]
        else:
            text = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise BadBody(f"unexpected response shape ({type(exc).__name__}: {exc})") from None
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    usage = data.get("usage") or {}
    top: tuple | None = None
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    if isinstance(lp, dict):
        if style == "completion" and lp.get("top_logprobs"):
            first = lp["top_logprobs"][0] or {}
            top = tuple((str(t), float(v)) for t, v in first.items())
        elif lp.get("content"):
            first = lp["content"][0] or {}
            entries = first.get("top_logprobs") or [
                {"token": first.get("token", ""), "logprob": first.get("logprob", -math.inf)}
            ]
            top = tuple((str(e["token"]), float(e["logprob"])) for e in entries)
    return text, usage.get("prompt_tokens"), usage.get("completion_tokens"), top


def estimate_tokens(req: Request) -> int:
    """Rough token count for the tokens-per-minute bucket: 4 characters a token."""
    return len(req.prompt) // 4 + req.max_tokens


class OpenAICompatibleBackend(Backend):
    """An OpenAI-compatible endpoint.

    Options read from the spec: ``base_url``, ``key_env`` (environment variable holding the
    key, or None for keyless servers), ``rpm``, ``tpm``, ``max_concurrency``, ``timeout``,
    ``max_retries``.
    """

    def __init__(self, spec: BackendSpec, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep=asyncio.sleep, rng_seed: int = 0) -> None:
        super().__init__(spec)
        base = spec.option("base_url")
        if not base:
            raise EndpointUnavailable(f"provider {spec.provider!r} needs a base URL (--base-url)")
        self.base_url = str(base).rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
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
        )
        self._transport = transport
        self._sleep = sleep
        self._rng = random.Random(rng_seed)
        self._client: httpx.AsyncClient | None = None
        self._limiter: RateLimiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._auth_error: str | None = None

    def _scrub(self, text: str) -> str:
        """``text`` with the key (if it ever appears) replaced by ``***``."""
        return text.replace(self._key, "***") if self._key else text

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def _ensure(self) -> tuple[httpx.AsyncClient, RateLimiter]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # The client, the limiter's locks and the connection pool belong to one event loop;
            # a backend reused under a new loop (one asyncio.run per shard) starts them afresh.
            self._client, self._limiter, self._loop = None, None, loop
        if self._client is None:
            transport = self._transport or httpx.AsyncHTTPTransport(retries=0)
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                transport=transport,
                timeout=httpx.Timeout(self.limits.timeout),
                limits=httpx.Limits(max_connections=self.limits.max_concurrency,
                                    max_keepalive_connections=self.limits.max_concurrency),
            )
            self._limiter = RateLimiter(self.limits)
        return self._client, self._limiter  # type: ignore[return-value]

    @property
    def limiter(self) -> RateLimiter | None:
        return self._limiter

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        results = await asyncio.gather(*(self._call(r) for r in requests), return_exceptions=True)
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

    def _auth_message(self, status: int) -> str:
        who = f"{self.spec.provider} at {self.base_url}"
        fix = (f"check the key in the environment variable {self.key_env}" if self.key_env
               else "the server requires credentials")
        return f"{who} rejected the request with HTTP {status} (authentication): {fix}"

    async def _call(self, req: Request) -> Response:
        client, limiter = self._ensure()
        path, body = build_payload(self.spec, req)
        t0 = time.perf_counter()
        attempts = 0
        status: int | None = None
        error = ""
        while True:
            if self._auth_error:
                raise AuthenticationFailed(self._auth_error)
            attempts += 1
            await limiter.acquire(estimate_tokens(req))
            wait: float | None = None
            async with limiter.slot():
                if self._auth_error:
                    raise AuthenticationFailed(self._auth_error)
                try:
                    resp = await client.post(path, json=body, headers=self._headers())
                except httpx.TimeoutException:
                    status, error, verdict = None, f"timeout after {self.limits.timeout:g} s", "retry"
                except httpx.TransportError as exc:
                    status, error, verdict = None, f"connection error ({type(exc).__name__})", "retry"
                else:
                    status = resp.status_code
                    verdict = classify_status(status)
                    if verdict == "ok":
                        try:
                            text, p_tok, c_tok, top = parse_body(self.spec.style, resp.json())
                        except (ValueError, BadBody) as exc:
                            error = self._scrub(f"bad response body: {str(exc)[:200]}")
                            verdict = "retry"
                        else:
                            limiter.on_success()
                            return Response(
                                text=text, status="ok", http_status=status, attempts=attempts,
                                latency_ms=(time.perf_counter() - t0) * 1000,
                                prompt_tokens=p_tok, completion_tokens=c_tok, logprobs=top,
                            )
                    elif verdict == "auth":
                        self._auth_error = self._auth_message(status)
                        raise AuthenticationFailed(self._auth_error)
                    else:
                        error = self._scrub(f"HTTP {status}: {resp.text[:200]!r}")
                        if status == 429:
                            limiter.on_throttled()
                        wait = retry_after_seconds(resp.headers)
            if verdict == "fail" or attempts > self.limits.max_retries:
                return Response(
                    text=None, status="failed", error=error, http_status=status,
                    attempts=attempts, latency_ms=(time.perf_counter() - t0) * 1000,
                )
            delay = backoff_delay(attempts, self.limits.backoff_base, self.limits.backoff_cap,
                                  self._rng)
            if wait is not None:
                delay = wait + self._rng.uniform(0, 0.1 * wait + 0.01)
            log.debug("retrying %s after %.2f s (attempt %d: %s)", path, delay, attempts, error)
            await self._sleep(delay)


async def check_reachable(spec: BackendSpec, timeout: float = 5.0) -> None:
    """Raises EndpointUnavailable unless the endpoint answers ``GET /v1/models`` at all.

    Any HTTP answer counts as reachable (some servers do not list models); a 401/403 raises
    AuthenticationFailed, so a bad key is reported before any work starts.
    """
    backend = OpenAICompatibleBackend(spec)
    try:
        async with httpx.AsyncClient(base_url=backend.base_url, timeout=timeout) as client:
            resp = await client.get("/v1/models", headers=backend._headers())
    except httpx.HTTPError as exc:
        raise EndpointUnavailable(
            f"cannot reach {spec.provider} at {backend.base_url} ({type(exc).__name__}); "
            "is the server running, and is --base-url right?"
        ) from None
    if resp.status_code in (401, 403):
        raise AuthenticationFailed(backend._auth_message(resp.status_code))
