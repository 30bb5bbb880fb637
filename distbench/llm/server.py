"""An OpenAI-compatible HTTP server on loopback, with deterministic fault injection.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET /v1/models``,
``GET /health``, ``GET /stats`` (JSON counters of every other request: total, by path, by
returned status, by fault kind including ``rate_limit``) and ``POST /stats/reset`` (zeroes
them and restarts the fault sequence). Only the standard
library serves (``ThreadingHTTPServer``, one daemon thread per connection, HTTP/1.1
keep-alive), so the server runs anywhere the package does.

Who answers is pluggable: :class:`MockAnswerer` is a seeded policy that reads matrix-game
prompts and answers exactly what the ``dummy`` backend answers; :class:`LocalAnswerer`
forwards to the bundled llama.cpp model (:class:`distbench.llm.local.LocalModel`).

Order of checks for a ``/v1`` call: API key (401), then the rate limit (429), then the injected
fault, then the answer. Injected faults are drawn per call from the calls' arrival order (only
calls that pass the key and rate checks are numbered), seeded by ``ServerConfig.seed``, and
stratified: call ``n`` falls in block ``n // 100`` and gets a uniform ``u = (rank + jitter) /
100`` where ``rank`` is its place in a seeded permutation of the block, so every complete
block of 100 calls holds exactly ``100 * f`` faults of a kind whose fraction ``f`` is a whole
percentage (other fractions are met on average). The fault bands lie on ``[0, 1)`` in the order
``fail_429, fail_500, fail_503, hang, truncate, non_json, garbage``; :func:`fault_plan` gives the
kinds the first calls will get.

Nothing here logs request headers or bodies; the API key is never printed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import re
import select
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

import numpy as np

from distbench.games.matrix.prompts import MIXED_CUE, PURE_CUE
from distbench.llm.base import BackendSpec, Request
from distbench.llm.dummy import DummyBackend, splitmix64, uniforms

logger = logging.getLogger(__name__)

__all__ = [
    "FAULT_KINDS",
    "Answerer",
    "BadRequest",
    "LocalAnswerer",
    "MockAnswerer",
    "RunningServer",
    "ServerConfig",
    "detect_task",
    "fault_plan",
    "start_server",
]

FAULT_KINDS = ("fail_429", "fail_500", "fail_503", "hang", "truncate", "non_json", "garbage")
_BLOCK = 100
_LOGPROB_STREAM = 0x10C9_0B5  # keeps the logprob draw apart from the answer's draw
_MAX_BODY = 16 * 1024 * 1024
_UNRECOGNISED_TEXT = "I can only answer matrix game questions."
_GARBAGE = ("banana ??", "Action: banana", "Strategy: [purple, ??]", "¯\\_(ツ)_/¯ maybe", "???")
_HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n"


@dataclass(frozen=True)
class ServerConfig:
    """How the server listens and which faults it injects.

    Attributes:
        host: Address to bind (loopback by default).
        port: TCP port; 0 picks a free one (read it from ``RunningServer.url``).
        seed: Seed of the fault draws and of the mock's answers to calls without a seed.
        latency_ms: Delay added to every ``/v1`` response.
        rate_limit_rps: Token bucket of this many calls per second, burst ``max(1, R / 10)``;
            calls over the limit get 429 with ``Retry-After`` (whole seconds, rounded up) and
            ``retry-after-ms``. None: no limit.
        fail_429: Fraction of calls answered 429 with ``Retry-After: <retry_after>``.
        retry_after: Seconds announced by injected 429s.
        fail_500: Fraction answered 500.
        fail_503: Fraction answered 503.
        hang: Fraction that never get an answer: the server waits ``hang_seconds`` (or until
            it stops), then drops the connection.
        hang_seconds: How long a hung call is held.
        truncate: Fraction answered 200 with a JSON body cut in half.
        non_json: Fraction answered 200 with an HTML page.
        garbage: Fraction answered 200 with valid JSON whose text is nonsense.
        api_key: When set, ``/v1`` calls need ``Authorization: Bearer <api_key>`` (else 401).
    """

    host: str = "127.0.0.1"
    port: int = 0
    seed: int = 0
    latency_ms: float = 0.0
    rate_limit_rps: float | None = None
    fail_429: float = 0.0
    retry_after: float = 1.0
    fail_500: float = 0.0
    fail_503: float = 0.0
    hang: float = 0.0
    hang_seconds: float = 3600.0
    truncate: float = 0.0
    non_json: float = 0.0
    garbage: float = 0.0
    api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in FAULT_KINDS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction between 0 and 1, got {value}")
        total = sum(getattr(self, name) for name in FAULT_KINDS)
        if total > 1.0 + 1e-9:
            raise ValueError(f"the fault fractions add up to {total:g}, more than 1")
        for name in ("latency_ms", "retry_after", "hang_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.rate_limit_rps is not None and self.rate_limit_rps <= 0:
            raise ValueError(f"rate_limit_rps must be > 0, got {self.rate_limit_rps}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {self.port}")

    def fault_bands(self) -> list[tuple[str, float]]:
        """(kind, upper end) of each fault band on [0, 1), for the kinds in use."""
        bands, edge = [], 0.0
        for name in FAULT_KINDS:
            fraction = getattr(self, name)
            if fraction > 0:
                edge = round(edge + fraction, 12)
                bands.append((name, edge))
        return bands


class _FaultDraws:
    """Stratified seeded uniforms by call number (see the module docstring)."""

    def __init__(self, config: ServerConfig) -> None:
        self.seed = config.seed
        self.bands = config.fault_bands()
        self._blocks: dict[int, np.ndarray] = {}

    def _block(self, index: int) -> np.ndarray:
        block = self._blocks.get(index)
        if block is None:
            gen = np.random.default_rng(np.random.SeedSequence([self.seed, index, 0xFA17]))
            ranks = gen.permutation(_BLOCK)
            block = (ranks + gen.random(_BLOCK)) / _BLOCK
            if len(self._blocks) > 8:
                self._blocks.clear()
            self._blocks[index] = block
        return block

    def kind(self, number: int) -> str | None:
        """The fault of call ``number`` (0-based), None for a normal answer."""
        if not self.bands:
            return None
        u = float(self._block(number // _BLOCK)[number % _BLOCK])
        for name, edge in self.bands:
            if u < edge:
                return name
        return None


def fault_plan(config: ServerConfig, count: int) -> list[str | None]:
    """The fault kinds (None: answered) the first ``count`` numbered calls get."""
    draws = _FaultDraws(config)
    return [draws.kind(n) for n in range(count)]


class BadRequest(ValueError):
    """A request body the server cannot use (answered 400)."""


class Answerer(Protocol):
    """Produces OpenAI-shaped response dicts; must be safe to call from several threads."""

    model_name: str

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: bool,
        top_logprobs: int | None,
    ) -> dict[str, Any]: ...

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: int | None,
        stop: list[str] | None,
    ) -> dict[str, Any]: ...


# --- the mock answerer ------------------------------------------------------------------

_ACTION_COUNT = re.compile(r"\byour (\d+) actions?\b")
_PURE_GOAL = "Choose one of your"


def detect_task(prompt: str) -> tuple[str, int] | None:
    """The matrix task a prompt asks for, from the wording of ``games.matrix.prompts``.

    Returns:
        ``("pure", m)`` or ``("mixed", m)`` with m the number of the player's actions, or
        None when the prompt is not a matrix prompt.
    """
    count = _ACTION_COUNT.search(prompt)
    if count is None:
        return None
    m = int(count.group(1))
    if m < 1:
        return None
    if MIXED_CUE in prompt:
        return "mixed", m
    if PURE_CUE in prompt or _PURE_GOAL in prompt:  # logprob mode's cue may differ
        return "pure", m
    return None


def _stable_seed(seed: int, prompt: str) -> int:
    digest = hashlib.blake2b(f"{seed}\0{prompt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


_TOKEN = re.compile(r"\s*[A-Za-z]+|\s*\d|\s*[^\sA-Za-z\d]|\s+")


def _split_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text) or [text]


class MockAnswerer:
    """Answers matrix prompts like the ``dummy`` backend, deterministically.

    The task comes from the prompt (:func:`detect_task`); the answer is the dummy backend's
    for ``Request(task=f"matrix.{mode}:{m}", seed=s)`` with ``s`` the call's ``seed`` field,
    or a stable hash of (server seed, prompt) when the call gives none. Completion calls get
    the continuation form, chat calls the chat form. Other prompts get a fixed harmless text.

    Log-probabilities (when asked): the first token's top alternatives are the action labels
    (``" 1"`` .. ``" m"`` for completions, ``"1"`` .. ``"m"`` for chat) carrying 97 % of the
    mass, split by a flat-Dirichlet draw from the call's seed, plus ``" The"`` (2 %) and
    ``"\\n"`` (1 %); later tokens get logprob 0.

    Args:
        seed: Server seed, used for calls without a seed.
    """

    model_name = "mock"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._chat = DummyBackend(BackendSpec("dummy", "random", "chat"))
        self._completion = DummyBackend(BackendSpec("dummy", "random", "completion"))

    def _seed(self, seed: int | None, prompt: str) -> int:
        if seed is None:
            return _stable_seed(self.seed, prompt)
        return seed & 0xFFFF_FFFF_FFFF_FFFF

    def answer_text(self, prompt: str, seed: int, *, completion: bool) -> str:
        """The answer to ``prompt`` for a resolved ``seed``."""
        task = detect_task(prompt)
        if task is None:
            return _UNRECOGNISED_TEXT
        mode, m = task
        backend = self._completion if completion else self._chat
        request = Request(prompt=prompt, seed=seed, task=f"matrix.{mode}:{m}")
        return backend.answer([request])[0].text or ""

    def first_token_distribution(
        self, prompt: str, seed: int, *, completion: bool
    ) -> list[tuple[str, float]]:
        """(token, logprob) of the first token's alternatives, most likely first."""
        task = detect_task(prompt)
        others = [(" The", math.log(0.02)), ("\n", math.log(0.01))]
        if task is None:
            return [("I", math.log(0.97)), *others]
        m = task[1]
        draw_seed = splitmix64(np.array([seed ^ _LOGPROB_STREAM], dtype=np.uint64))
        weights = -np.log(uniforms(draw_seed, m)[0])
        probs = 0.97 * weights / weights.sum()
        prefix = " " if completion else ""
        labels = [(f"{prefix}{k + 1}", math.log(float(p))) for k, p in enumerate(probs)]
        return sorted(labels + others, key=lambda pair: -pair[1])

    def _logprob_entries(
        self, prompt: str, seed: int, text: str, *, completion: bool, top: int
    ) -> list[tuple[str, float, list[tuple[str, float]]]]:
        """Per generated token: (token, logprob, top alternatives)."""
        first = self.first_token_distribution(prompt, seed, completion=completion)
        known = dict(first)
        entries = []
        for i, token in enumerate(_split_tokens(text)):
            if i == 0:
                entries.append((token, known.get(token, math.log(0.001)), first[:top]))
            else:
                entries.append((token, 0.0, [(token, 0.0)][:top]))
        return entries

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
    ) -> dict[str, Any]:
        prompt = _last_user_text(messages)
        resolved = self._seed(seed, prompt)
        text = self.answer_text(prompt, resolved, completion=False)
        lp = None
        if logprobs:
            entries = self._logprob_entries(
                prompt, resolved, text, completion=False, top=top_logprobs or 0
            )
            lp = {"content": [_chat_logprob(*entry) for entry in entries], "refusal": None}
        prompt_text = "\n".join(str(msg.get("content", "")) for msg in messages)
        return chat_response(self.model_name, text, _approx_tokens(prompt_text), lp)

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: int | None = None,
        stop: list[str] | None = None,
    ) -> dict[str, Any]:
        resolved = self._seed(seed, prompt)
        text = self.answer_text(prompt, resolved, completion=True)
        for marker in stop or []:
            if marker and marker in text:
                text = text[: text.index(marker)]
        lp = None
        if logprobs is not None:
            entries = self._logprob_entries(prompt, resolved, text, completion=True, top=logprobs)
            offsets, position = [], len(prompt)
            for token, _, _ in entries:
                offsets.append(position)
                position += len(token)
            lp = {
                "tokens": [token for token, _, _ in entries],
                "text_offset": offsets,
                "token_logprobs": [value for _, value, _ in entries],
                "top_logprobs": [dict(alts) for _, _, alts in entries],
            }
        return completion_response(self.model_name, text, _approx_tokens(prompt), lp)


def _chat_logprob(token: str, logprob: float, alts: list[tuple[str, float]]) -> dict[str, Any]:
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": alt, "logprob": value, "bytes": list(alt.encode())} for alt, value in alts
        ],
    }


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):  # content parts
                return "".join(
                    part.get("text", "") for part in content if isinstance(part, dict)
                )
            return str(content)
    return ""


def chat_response(
    model: str, text: str, prompt_tokens: int, logprobs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` body."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text},
              "logprobs": logprobs, "finish_reason": "stop"}
    return _body("chat.completion", "chatcmpl-", model, text, prompt_tokens, choice)


def completion_response(
    model: str, text: str, prompt_tokens: int, logprobs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An OpenAI ``text_completion`` body."""
    choice = {"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "stop"}
    return _body("text_completion", "cmpl-", model, text, prompt_tokens, choice)


def _body(kind: str, id_prefix: str, model: str, text: str, prompt_tokens: int,
          choice: dict[str, Any]) -> dict[str, Any]:
    """The fields every OpenAI completion body shares, around one choice."""
    completion_tokens = _approx_tokens(text)
    return {
        "id": id_prefix + hashlib.blake2b(text.encode(), digest_size=8).hexdigest(),
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class LocalAnswerer:
    """Forwards calls to a :class:`distbench.llm.local.LocalModel` (which serialises them).

    Calls without a seed use a stable hash of (``seed``, prompt), as the mock does.
    """

    def __init__(self, model: Any, seed: int = 0) -> None:
        self.model = model
        self.model_name = model.name
        self.seed = seed

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: bool,
        top_logprobs: int | None,
    ) -> dict[str, Any]:
        if seed is None:
            seed = _stable_seed(self.seed, _last_user_text(messages))
        return self.model.chat(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
        )

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: int | None,
        stop: list[str] | None,
    ) -> dict[str, Any]:
        if seed is None:
            seed = _stable_seed(self.seed, prompt)
        return self.model.complete(
            prompt,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            logprobs=logprobs,
            stop=stop,
        )


# --- request bodies -----------------------------------------------------------------------


def _int_field(body: dict[str, Any], name: str, default: int | None, low: int = 0) -> int | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise BadRequest(f"'{name}' must be an integer >= {low}")
    return value


def _float_field(body: dict[str, Any], name: str, default: float) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BadRequest(f"'{name}' must be a number >= 0")
    return float(value)


def _seed_field(body: dict[str, Any]) -> int | None:
    value = body.get("seed")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("'seed' must be an integer")
    return value


def _chat_args(body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            raise BadRequest("each message must be an object with a 'role'")
    logprobs = body.get("logprobs", False)
    if not isinstance(logprobs, bool):
        raise BadRequest("'logprobs' must be true or false")
    top = _int_field(body, "top_logprobs", None)
    if top is not None and top > 20:
        raise BadRequest("'top_logprobs' must be between 0 and 20")
    return messages, {
        "max_tokens": _int_field(body, "max_tokens", 256, low=1),
        "temperature": _float_field(body, "temperature", 1.0),
        "seed": _seed_field(body),
        "logprobs": logprobs,
        "top_logprobs": top,
    }


def _completion_args(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise BadRequest("'prompt' must be a string")
    logprobs = _int_field(body, "logprobs", None)
    if logprobs is not None and logprobs > 20:
        raise BadRequest("'logprobs' must be between 0 and 20")
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise BadRequest("'stop' must be a string or a list of strings")
    return prompt, {
        "max_tokens": _int_field(body, "max_tokens", 16, low=1),
        "temperature": _float_field(body, "temperature", 1.0),
        "seed": _seed_field(body),
        "logprobs": logprobs,
        "stop": stop,
    }


def _error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# --- the server ----------------------------------------------------------------------------


class _Stats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.by_path: Counter[str] = Counter()
            self.by_status: Counter[str] = Counter()
            self.faults: Counter[str] = Counter()

    def request(self, path: str) -> None:
        with self._lock:
            self.requests += 1
            self.by_path[path] += 1

    def status(self, status: int) -> None:
        with self._lock:
            self.by_status[str(status)] += 1

    def fault(self, kind: str) -> None:
        with self._lock:
            self.faults[kind] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "by_path": dict(self.by_path),
                "by_status": dict(self.by_status),
                "faults": dict(self.faults),
            }


class _TokenBucket:
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate / 10.0)
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0.0 when a token was taken, else the seconds until one is available."""
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return 0.0
            return (1.0 - self.tokens) / self.rate


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() must not wait for hung or idle connections
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, config: ServerConfig, answerer: Answerer) -> None:
        self.config = config
        self.answerer = answerer
        self.stats = _Stats()
        self.stopping = threading.Event()
        self.draws = _FaultDraws(config)
        self.bucket = _TokenBucket(config.rate_limit_rps) if config.rate_limit_rps else None
        self._number = 0
        self._number_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__((config.host, config.port), _Handler)

    def next_number(self) -> int:
        with self._number_lock:
            number = self._number
            self._number += 1
            return number

    def reset(self) -> None:
        """Zeroes the counters and restarts the fault sequence at call 0."""
        with self._number_lock:
            self._number = 0
            self.stats.reset()

    def process_request(self, request, client_address):  # type: ignore[no-untyped-def]
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):  # type: ignore[no-untyped-def]
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request, client_address):  # type: ignore[no-untyped-def]
        logger.debug("connection error", exc_info=True)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stalls
    server_version = "distbench/1"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        # Only the request line (method, path, protocol) and status reach here: no headers.
        logger.debug("%s " + format, self.client_address[0], *args)

    # -- plumbing

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.server.stats.status(status)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers=headers)

    def _error(
        self, status: int, message: str, kind: str, code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._json(status, _error_body(message, kind, code), headers)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                self.close_connection = True
                raise BadRequest("chunked request bodies are not supported; send Content-Length")
            return b""
        try:
            size = int(length)
        except ValueError:
            self.close_connection = True
            raise BadRequest("bad Content-Length") from None
        if size < 0 or size > _MAX_BODY:
            self.close_connection = True
            raise BadRequest("request body too large")
        return self.rfile.read(size)

    def _path(self) -> str:
        return self.path.split("?", 1)[0]

    def _hang(self, seconds: float) -> None:
        """Holds the call for ``seconds``, until the server stops or the client goes away."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if self.server.stopping.wait(min(remaining, 0.25)):
                return
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                if readable and self.connection.recv(1, socket.MSG_PEEK) == b"":
                    return  # the client closed the connection
            except (OSError, ValueError):
                return

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self.server.stopping.wait(seconds)

    # -- routes

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self._path()
        if path == "/stats":
            self._send(200, json.dumps(self.server.stats.snapshot()).encode())
            return
        self.server.stats.request(path)
        if path == "/health":
            self._json(200, {"status": "ok"})
        elif path == "/v1/models":
            if self._authorised():
                model = {"id": self.server.answerer.model_name, "object": "model",
                         "created": 0, "owned_by": "distbench"}
                self._json(200, {"object": "list", "data": [model]})
        elif path in ("/v1/chat/completions", "/v1/completions", "/stats/reset"):
            self._error(405, f"use POST for {path}", "invalid_request_error")
        else:
            self._error(404, f"no route {path}", "invalid_request_error", "not_found")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self._path()
        try:
            raw = self._read_body()
        except BadRequest as exc:
            self.server.stats.request(path)
            self._error(400, str(exc), "invalid_request_error")
            return
        if path == "/stats/reset":
            self.server.reset()
            self._send(200, json.dumps(self.server.stats.snapshot()).encode())
            return
        self.server.stats.request(path)
        if path not in ("/v1/chat/completions", "/v1/completions"):
            self._error(404, f"no route {path}", "invalid_request_error", "not_found")
            return
        if not self._authorised() or not self._within_rate():
            return
        number = self.server.next_number()
        kind = self.server.draws.kind(number)
        if kind is not None:
            self.server.stats.fault(kind)
        if kind == "hang":
            self.close_connection = True
            self._hang(self.server.config.hang_seconds)
            return
        self._wait(self.server.config.latency_ms / 1000.0)
        if kind is not None and kind != "truncate":
            self._fault(kind, path, number)
            return
        try:
            body = json.loads(raw or b"null")
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            payload = self._answer(path, body)
        except json.JSONDecodeError as exc:
            self._error(400, f"the body is not valid JSON: {exc.msg}", "invalid_request_error")
            return
        except BadRequest as exc:
            self._error(400, str(exc), "invalid_request_error")
            return
        except Exception as exc:  # noqa: BLE001 - the model failed: answer 500, keep serving
            logger.warning("answerer failed: %s: %s", type(exc).__name__, exc)
            self._error(500, f"the model failed: {type(exc).__name__}", "server_error")
            return
        data = json.dumps(payload).encode()
        if kind == "truncate":
            data = data[: max(1, len(data) // 2)]
        self._send(200, data)

    def _answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answerer = self.server.answerer
        if path == "/v1/chat/completions":
            messages, args = _chat_args(body)
            return answerer.chat(messages, **args)
        prompt, args = _completion_args(body)
        return answerer.complete(prompt, **args)

    def _authorised(self) -> bool:
        key = self.server.config.api_key
        if not key:
            return True
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and _same(token.strip(), key):
            return True
        message = (
            "Incorrect API key provided." if header else "You didn't provide an API key."
        )
        self._error(401, message, "invalid_request_error", "invalid_api_key")
        return False

    def _within_rate(self) -> bool:
        bucket = self.server.bucket
        if bucket is None:
            return True
        wait = bucket.take()
        if wait <= 0:
            return True
        self.server.stats.fault("rate_limit")
        headers = {"Retry-After": str(max(1, math.ceil(wait))),
                   "retry-after-ms": str(max(1, math.ceil(wait * 1000)))}
        self._error(429, "Rate limit reached; retry later.", "requests", "rate_limit_exceeded",
                    headers)
        return False

    def _fault(self, kind: str, path: str, number: int) -> None:
        config = self.server.config
        if kind == "fail_429":
            headers = {"Retry-After": str(math.ceil(config.retry_after)),
                       "retry-after-ms": str(math.ceil(config.retry_after * 1000))}
            self._error(429, "Rate limit reached (injected); retry later.", "requests",
                        "rate_limit_exceeded", headers)
        elif kind == "fail_500":
            self._error(500, "The server had an error (injected).", "server_error")
        elif kind == "fail_503":
            self._error(503, "The engine is currently overloaded (injected).", "server_error",
                        "overloaded")
        elif kind == "non_json":
            self._send(200, _HTML, content_type="text/html; charset=utf-8")
        elif kind == "garbage":
            text = _GARBAGE[number % len(_GARBAGE)]
            model = self.server.answerer.model_name
            if path == "/v1/chat/completions":
                payload = chat_response(model, text, 1)
            else:
                payload = completion_response(model, " " + text, 1)
            self._json(200, payload)
        else:  # pragma: no cover - FAULT_KINDS and this switch are kept in step
            raise AssertionError(kind)


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


class RunningServer:
    """A server running in a background thread; stop it with :meth:`stop` or ``with``."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        self.host, self.port = server.server_address[:2]
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05},
            name=f"distbench-server-{self.port}", daemon=True,
        )
        self._thread.start()
        self._stopped = False

    @property
    def config(self) -> ServerConfig:
        return self._server.config

    def stats(self) -> dict[str, Any]:
        """Counters: ``requests``, ``by_path``, ``by_status`` (str keys), ``faults``."""
        return self._server.stats.snapshot()

    def reset_stats(self) -> None:
        """Zeroes the counters and restarts the fault sequence at call 0."""
        self._server.reset()

    def stop(self) -> None:
        """Stops serving, wakes hung and delayed calls, closes every connection."""
        if self._stopped:
            return
        self._stopped = True
        self._server.stopping.set()
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(config: ServerConfig | None = None, answerer: Answerer | None = None) -> RunningServer:
    """Binds and serves in a background thread.

    Args:
        config: Listening address and faults (default: loopback, a free port, no faults).
        answerer: Who answers (default: ``MockAnswerer(config.seed)``).

    Raises:
        OSError: The address cannot be bound (``errno.EADDRINUSE`` when the port is taken).
    """
    config = config or ServerConfig()
    answerer = answerer if answerer is not None else MockAnswerer(config.seed)
    return RunningServer(_Server(config, answerer))
