"""OpenAI-compatible backends over async httpx: ``/v1/chat/completions`` and ``/v1/completions``.

Payload building and response parsing are pure functions (tested without a network). One retry
loop per call lives in :meth:`OpenAICompatibleBackend._call`; httpx's own retries are off.
API keys are read from the environment variable the provider names, held in memory only, and
never placed in a row, a log line or an exception message.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import math
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any

import httpx

from distbench.llm.base import (
    Backend,
    BackendSpec,
    BackendUnavailable,
    Request,
    Response,
    redact_url,
)
from distbench.llm.limits import (
    Limits,
    RateLimiter,
    backoff_delay,
    classify_status,
    retry_after_seconds,
)

log = logging.getLogger(__name__)


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
    (:func:`sampling_fields`).
    """
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


def reasoning_of(style: str, data: Any) -> tuple[str | None, int | None]:
    """(reasoning text, reasoning tokens) a provider returned beside the answer: the first
    choice's ``message.reasoning_content`` (chat) and ``usage.completion_tokens_details.
    reasoning_tokens``; None for what is absent or not of the right type (never an error)."""
    if not isinstance(data, dict):
        return None, None
    text = None
    choices = data.get("choices")
    if style != "completion" and isinstance(choices, list) and choices:
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        value = message.get("reasoning_content") if isinstance(message, dict) else None
        text = value if isinstance(value, str) else None
    usage = data.get("usage")
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    tokens = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        tokens = None
    return text, tokens


def choice_texts(style: str, data: Any) -> tuple[str, ...]:
    """The text of every choice of a response body, in the order of their ``index`` (a
    request with ``n`` gets ``n`` choices from a server that takes it)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        raise BadBody("unexpected response shape (no choices)")
    ordered = sorted(enumerate(choices), key=lambda pair: (
        pair[1].get("index", pair[0]) if isinstance(pair[1], dict) else pair[0], pair[0]))
    texts = []
    for _, choice in ordered:
        try:
            text = choice["text"] if style == "completion" else choice["message"]["content"]
        except (KeyError, TypeError) as exc:
            raise BadBody(f"unexpected response shape ({type(exc).__name__}: {exc})") from None
        texts.append(text if isinstance(text, str) else "" if text is None else str(text))
    return tuple(texts)


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


class OpenAICompatibleBackend(Backend):
    """An OpenAI-compatible endpoint.

    Options read from the spec: ``base_url``, ``key_env`` (environment variable holding the
    key, or None for keyless servers), ``rpm``, ``tpm``, ``max_concurrency``, ``timeout``,
    ``max_retries``.
    """

    reports_answers = True

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
        self.n_supported: bool | None = None if spec.max_samples() > 1 else False
        """Whether the endpoint answers ``n`` samples per request (None: not known yet)."""
        self._probe: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

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
            self._limiter = RateLimiter(self.limits, sleep=self._sleep)
        return self._client, self._limiter  # type: ignore[return-value]

    @property
    def limiter(self) -> RateLimiter | None:
        return self._limiter

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

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
            return await self._one_per_sample(req)
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

    async def _call(self, req: Request) -> Response:
        client, limiter = self._ensure()
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
                            data = asked_for(req, resp.json())
                            text, p_tok, c_tok, top = parse_body(style, data)
                            reasoning, r_tok = reasoning_of(style, data)
                            texts = choice_texts(style, data) if req.n > 1 else None
                        except (ValueError, BadBody) as exc:
                            error = self._scrub(f"bad response body: {str(exc)[:200]}")
                            verdict = "retry"
                        else:
                            last = time.perf_counter() - sent
                            wire += last
                            limiter.on_success(sent_at)
                            return Response(
                                text=text, status="ok", http_status=status, attempts=attempts,
                                prompt_tokens=p_tok, completion_tokens=c_tok, logprobs=top,
                                texts=texts, reasoning=reasoning, reasoning_tokens=r_tok,
                                **timings(),
                            )
                    elif verdict == "auth":
                        self._auth_error = self._auth_message(status)
                        raise AuthenticationFailed(self._auth_error)
                    else:
                        error = self._scrub(f"HTTP {status}: {resp.text[:300]!r}")
                        if status == 429:
                            limiter.on_throttled(sent_at)
                        wait = retry_after_seconds(resp.headers)
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


def _server_message(resp: httpx.Response) -> str:
    """The error message of a server's answer, short: OpenAI's ``error.message``, FastAPI's
    ``detail``, or the start of the body."""
    try:
        data = resp.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:200]
        if isinstance(err, str):
            return err[:200]
        if data.get("detail"):
            return str(data["detail"])[:200]
    return resp.text.strip()[:200]


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
    try:
        async with httpx.AsyncClient(base_url=backend.base_url, timeout=timeout) as client:
            resp = await client.get("/v1/models", headers=backend._headers())
            if resp.status_code in (401, 403):
                raise AuthenticationFailed(backend._auth_message(resp.status_code))
            models: list[str] = []
            if resp.status_code == 200:
                try:
                    models = [str(m["id"]) for m in resp.json().get("data", []) if "id" in m]
                except (ValueError, AttributeError, TypeError, KeyError):
                    models = []
            probes = [s for s in dict.fromkeys([spec.style, *styles])
                      if s != spec.style or resp.status_code != 200]
            for style in probes:
                path, body = build_payload(spec, Request(
                    prompt="Hello", seed=0, max_tokens=1, temperature=0.0, style=style))
                answer = await client.post(path, json=body, headers=backend._headers())
                code = answer.status_code
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
    except httpx.HTTPError as exc:
        raise EndpointUnavailable(
            f"cannot reach {where} ({type(exc).__name__}); "
            "is the server running, and is --base-url right?"
        ) from None


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
