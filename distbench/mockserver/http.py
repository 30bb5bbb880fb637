"""The mock server's HTTP side: a stdlib server on loopback that routes, counts and faults.

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /v1/messages``
(Anthropic's Messages API: the chat answer in its shape, the key in ``x-api-key`` or as a
bearer token; and its Message Batches, :mod:`distbench.mockserver.batches`), ``GET /v1/models``,
``GET /health``, ``GET /stats`` (JSON counters of every other request: total, by path, by
returned status, by fault kind including ``rate_limit``, and ``usage``: the prompt and
completion tokens of the answers sent whole, what a provider would bill) and ``POST /stats/reset`` (zeroes
them and restarts the fault sequence). Only the standard
library serves (``ThreadingHTTPServer``, one daemon thread per connection, HTTP/1.1
keep-alive), so the server runs anywhere the package does.

A ``/v1`` call goes through the API key (401), the rate limit (429), then its injected fault
(:mod:`distbench.mockserver.faults`), then the answerer
(:mod:`distbench.mockserver.answerers`); bodies are read and written by
:mod:`distbench.mockserver.wire`.

Nothing here logs request headers or bodies; the API key is never printed.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from distbench.mockserver.answerers import Answerer, MockAnswerer
from distbench.mockserver.batches import (
    MAX_UPLOAD,
    BatchStore,
    CreateLost,
    NotFound,
    ServerFault,
    parse_upload,
)
from distbench.mockserver.faults import (
    HOSTILE_HTML,
    HOSTILE_USAGE,
    HUGE_BODY_BYTES,
    FaultDraws,
    ServerConfig,
    TokenBucket,
    misreport_usage,
)
from distbench.mockserver.wire import (
    BadRequest,
    _read_headers,
    chat_args,
    chat_response,
    completion_args,
    completion_response,
    error_body,
    message_response,
    messages_args,
)

logger = logging.getLogger(__name__)

__all__ = ["SWITCH_INTERVAL", "RunningServer", "start_server"]

SWITCH_INTERVAL = 0.02
"""The GIL switch interval (seconds) of a process that does nothing but serve (``distbench
serve mock`` sets it; an in-process server leaves its host's alone). A thread waiting for the
GIL wakes every interval to claim it: with hundreds of keep-alive connections, one thread
each, answering a burst of calls, Python's default 5 ms spent more of the server's CPU on those
wake-ups than on the answers (gama speed bench: 20 -> 9 context switches and 0.36-0.46 ->
0.29-0.34 ms of CPU a call)."""

_MAX_BODY = 16 * 1024 * 1024
_GARBAGE = ("banana ??", "Action: banana", "Strategy: [purple, ??]", "¯\\_(ツ)_/¯ maybe", "???")
_HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n"


def _object_body(raw: bytes) -> dict[str, Any]:
    """A request body that must be a JSON object (BadRequest otherwise; JSONDecodeError when
    it is no JSON)."""
    body = json.loads(raw or b"null")
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body

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
            self.usage: Counter[str] = Counter()

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

    def billed(self, usage: Any) -> None:
        """Counts the tokens of an answer's ``usage`` (what a provider bills)."""
        if not isinstance(usage, dict):
            return
        with self._lock:
            for key in ("prompt_tokens", "completion_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    self.usage[key] += value

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "by_path": dict(self.by_path),
                "by_status": dict(self.by_status),
                "faults": dict(self.faults),
                "usage": {"prompt_tokens": self.usage["prompt_tokens"],
                          "completion_tokens": self.usage["completion_tokens"]},
            }

    def with_batches(self, store: BatchStore) -> dict[str, Any]:
        """:meth:`snapshot` with the Batch API's counts (``batches``: created, requests,
        completed, failed, billed tokens; read from its folder, so they survive a restart)."""
        return {**self.snapshot(), "batches": store.counts()}


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
        self.draws = FaultDraws(config)
        self.bucket = TokenBucket(config.rate_limit_rps) if config.rate_limit_rps else None
        self._number = 0
        self._number_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.batches = BatchStore(config.batch_dir, self.answer, seed=config.seed,
                                  delay=config.batch_delay, fail=config.batch_fail,
                                  expire=config.batch_expire, faulty=config.batch_faulty,
                                  faults=config.batch_faults, window=config.batch_window,
                                  usage=config.usage)
        super().__init__((config.host, config.port), _Handler)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, body) of a ``/v1`` call's answer, as a live call gets it without faults
        (the Batch API answers its lines with it)."""
        try:
            payload = self.answer_payload(path, body)
            return 200, message_response(payload) if path == _MESSAGES else payload
        except BadRequest as exc:
            return 400, error_body(str(exc), "invalid_request_error")
        except Exception as exc:  # noqa: BLE001 - the model failed: 500, keep serving
            logger.warning("answerer failed: %s: %s", type(exc).__name__, exc)
            return 500, error_body(f"the model failed: {type(exc).__name__}", "server_error")

    def answer_payload(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The OpenAI-shaped answer of a ``/v1`` call (a ``/v1/messages`` call is answered as
        a chat call, its body converted by the caller: :func:`message_response`)."""
        if path == _MESSAGES:
            messages, args = messages_args(body)
            return self.answerer.chat(messages, **self._with_n(args))
        if path == "/v1/chat/completions":
            messages, args = chat_args(body)
            return self.answerer.chat(messages, **self._with_n(args))
        prompt, args = completion_args(body)
        return self.answerer.complete(prompt, **self._with_n(args))

    def _with_n(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with ``n`` as this server treats it (``ServerConfig.n_mode``); ``n`` is
        left out when it is 1, so an answerer need not know it."""
        mode = self.config.n_mode
        n = args.pop("n", 1)
        if n != 1 and mode == "reject":
            raise BadRequest("Only one completion choice is allowed")
        if n != 1 and mode == "serve":
            args["n"] = n
        return args

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


_DATE: list[Any] = [0, ""]
"""The second and the Date header formatted for it (:meth:`_Handler.date_time_string`)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stalls
    server_version = "distbench/1"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        # Only the request line (method, path, protocol) and status reach here: no headers.
        logger.debug("%s " + format, self.client_address[0], *args)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if logger.isEnabledFor(logging.DEBUG):  # a request's line formatted only when logged
            super().log_request(code, size)

    def date_time_string(self, timestamp: float | None = None) -> str:
        # The Date header changes once a second: formatted once a second, not per response.
        if timestamp is not None:
            return super().date_time_string(timestamp)
        now = int(time.time())
        cached = _DATE
        if cached[0] != now:
            cached[:] = [now, super().date_time_string(now)]
        return cached[1]

    def parse_request(self) -> bool:
        """The request line and headers; a well-formed HTTP/1.x request line has its headers
        read by :func:`_read_headers` (the standard library's e-mail parser costs a third of
        a call's CPU here), any other goes through the standard library's checks."""
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = line.split(" ")
        if len(words) != 3 or words[2] not in ("HTTP/1.1", "HTTP/1.0") \
                or not words[1].startswith("/") or words[1].startswith("//"):
            return super().parse_request()
        self.requestline = line
        self.command, self.path, self.request_version = words
        self.close_connection = words[2] == "HTTP/1.0"
        headers = _read_headers(self.rfile)
        if headers is None:
            self.send_error(431, "Line too long or too many headers")
            return False
        self.headers = headers  # type: ignore[assignment]
        connection = headers.get("connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if headers.get("expect", "").lower() == "100-continue" and words[2] == "HTTP/1.1":
            return self.handle_expect_100()
        return True

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
            # The head and the body go out in one write (end_headers would flush the head
            # alone): one system call and one thread switch a response fewer.
            if self.request_version == "HTTP/0.9":
                self.wfile.write(body)
            else:
                self._headers_buffer.append(b"\r\n" + body)
                self.flush_headers()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers=headers)

    def _error(
        self, status: int, message: str, kind: str, code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._json(status, error_body(message, kind, code), headers)

    def _read_body(self, limit: int = _MAX_BODY) -> bytes:
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
        if size < 0 or size > limit:
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
            self._send(200, json.dumps(self.server.stats.with_batches(self.server.batches)
                                       ).encode())
            return
        self.server.stats.request(path)
        if path == "/health":
            self._json(200, {"status": "ok"})
        elif path == "/v1/models":
            if self._authorised():
                model = {"id": self.server.answerer.model_name, "object": "model",
                         "created": 0, "owned_by": "distbench"}
                self._json(200, {"object": "list", "data": [model]})
        elif path in (*_LIVE, "/stats/reset"):
            self._error(405, f"use POST for {path}", "invalid_request_error")
        elif path.startswith("/v1/messages/batches/") or path == "/v1/messages/batches":
            if self._authorised():
                self._messages_batch_get(path)
        elif path.startswith(("/v1/files/", "/v1/batches/")) or path == "/v1/batches":
            if self._authorised():
                self._batch_get(path)
        else:
            self._error(404, f"no route {path}", "invalid_request_error", "not_found")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self._path()
        try:
            raw = self._read_body(MAX_UPLOAD if path in ("/v1/files", "/v1/messages/batches")
                                  else _MAX_BODY)
        except BadRequest as exc:
            self.server.stats.request(path)
            self._error(400, str(exc), "invalid_request_error")
            return
        if path == "/stats/reset":
            self.server.reset()
            self._send(200, json.dumps(self.server.stats.snapshot()).encode())
            return
        self.server.stats.request(path)
        if path.startswith("/v1/messages/batches"):
            if self._authorised():
                self._messages_batch_post(path, raw)
            return
        if path == "/v1/files" or path.startswith("/v1/batches"):
            if self._authorised():
                self._batch_post(path, raw)
            return
        if path not in _LIVE:
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
        hostile = self.server.config.hostile_body if kind == "hostile" else None
        if kind is not None and kind != "truncate" and hostile not in _ODD_ANSWERS:
            self._fault(kind, path, number, raw)
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
        if hostile is not None:
            payload = _odd_answer(hostile, payload)
        elif kind is None:  # an answer sent whole: billed (the true tokens), then reported
            self.server.stats.billed(payload.get("usage"))
            payload = misreport_usage(payload, self.server.config.usage)
        if path == _MESSAGES:
            payload = message_response(payload)
        data = json.dumps(payload).encode()
        if kind == "truncate":
            data = data[: max(1, len(data) // 2)]
        self._send(200, data)

    def _answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.server.answer_payload(path, body)

    # -- the Batch API (distbench.mockserver.batches)

    def _batch_get(self, path: str) -> None:
        store = self.server.batches
        parts = path.strip("/").split("/")  # v1 files ID [content] | v1 batches [ID]
        try:
            if parts[1] == "batches" and len(parts) == 2:
                query = dict(parse_qsl(self.path.partition("?")[2]))
                limit = int(query["limit"]) if query.get("limit", "").isdigit() else 20
                self._json(200, store.list(limit, query.get("after")))
            elif parts[1] == "files" and len(parts) == 4 and parts[3] == "content":
                self._send(200, store.content(parts[2]), "application/jsonl")
            elif parts[1] == "files" and len(parts) == 3:
                self._json(200, store.file(parts[2]))
            elif parts[1] == "batches" and len(parts) == 3:
                self._json(200, store.retrieve(parts[2]))
            else:
                self._error(404, f"no route {path}", "invalid_request_error", "not_found")
        except NotFound as exc:
            self._error(404, str(exc), "invalid_request_error", "not_found")
        except ServerFault as exc:
            self._error(500, str(exc), "server_error")

    def _messages_batch_get(self, path: str) -> None:
        store = self.server.batches
        parts = path.strip("/").split("/")  # v1 messages batches [ID [results]]
        try:
            if len(parts) == 3:
                query = dict(parse_qsl(self.path.partition("?")[2]))
                limit = int(query["limit"]) if query.get("limit", "").isdigit() else 20
                page = store.list_messages(limit, query.get("after_id"), query.get("before_id"))
                self._json(200, {**page, "data": [self._absolute(b) for b in page["data"]]})
            elif len(parts) == 4:
                self._json(200, self._absolute(store.retrieve_messages(parts[3])))
            elif len(parts) == 5 and parts[4] == "results":
                self._send(200, store.messages_results(parts[3]), "application/x-jsonl")
            else:
                self._error(404, f"no route {path}", "invalid_request_error", "not_found")
        except BadRequest as exc:
            self._error(400, str(exc), "invalid_request_error")
        except NotFound as exc:
            self._error(404, str(exc), "invalid_request_error", "not_found")
        except ServerFault as exc:
            self._error(500, str(exc), "server_error")

    def _messages_batch_post(self, path: str, raw: bytes) -> None:
        store = self.server.batches
        parts = path.strip("/").split("/")

        def route() -> dict[str, Any] | None:
            if path == "/v1/messages/batches":
                return self._absolute(store.create_messages(_object_body(raw)))
            if len(parts) == 5 and parts[4] == "cancel":
                return self._absolute(store.cancel_messages(parts[3]))
            return None

        self._batch_answer(path, route)

    def _batch_answer(self, path: str, route: Callable[[], dict[str, Any] | None]) -> None:
        """Answers a batch route: its JSON (200), ``no route`` (404) when it returns None, and
        the store's refusals as the batch APIs give them (400, 404, the injected 502)."""
        try:
            answer = route()
        except json.JSONDecodeError as exc:
            self._error(400, f"the body is not valid JSON: {exc.msg}", "invalid_request_error")
        except BadRequest as exc:
            self._error(400, str(exc), "invalid_request_error")
        except NotFound as exc:
            self._error(404, str(exc), "invalid_request_error", "not_found")
        except CreateLost:
            self._error(502, "Bad Gateway (injected: the batch was created)", "server_error")
        else:
            if answer is None:
                self._error(404, f"no route {path}", "invalid_request_error", "not_found")
            else:
                self._json(200, answer)

    def _absolute(self, batch: dict[str, Any]) -> dict[str, Any]:
        """A Message Batch with its ``results_url`` on this server (as Anthropic gives one)."""
        if batch.get("results_url"):
            host, port = self.server.server_address[:2]
            batch = {**batch, "results_url": f"http://{host}:{port}{batch['results_url']}"}
        return batch

    def _batch_post(self, path: str, raw: bytes) -> None:
        store = self.server.batches
        parts = path.strip("/").split("/")

        def route() -> dict[str, Any] | None:
            if path == "/v1/files":
                return store.upload(*parse_upload(self.headers.get("Content-Type", ""), raw))
            if path == "/v1/batches":
                return store.create(_object_body(raw))
            if parts[1] == "batches" and len(parts) == 4 and parts[3] == "cancel":
                return store.cancel(parts[2])
            return None

        self._batch_answer(path, route)

    def _authorised(self) -> bool:
        key = self.server.config.api_key
        if not key:
            return True
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and _same(token.strip(), key):
            return True
        anthropic_key = self.headers.get("x-api-key")
        if anthropic_key is not None and _same(anthropic_key.strip(), key):
            return True
        header = header or anthropic_key or ""
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

    def _choices(self, raw: bytes) -> int:
        """How many choices an answer to this body has: its ``n`` when the server serves
        ``n`` and the body is readable, else 1."""
        if self.server.config.n_mode != "serve":
            return 1
        try:
            n = json.loads(raw or b"null").get("n", 1)
        except (ValueError, AttributeError):
            return 1
        return n if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 128 else 1

    def _fault(self, kind: str, path: str, number: int, raw: bytes = b"") -> None:
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
            texts = [text] * self._choices(raw)
            if path == _MESSAGES:
                payload = message_response(chat_response(model, texts, 1))
            elif path == "/v1/chat/completions":
                payload = chat_response(model, texts, 1)
            else:
                payload = completion_response(model, [" " + t for t in texts], 1)
            self._json(200, payload)
        elif kind == "hostile":
            self._hostile(config.hostile_body, path, raw)
        else:  # pragma: no cover - FAULT_KINDS and this switch are kept in step
            raise AssertionError(kind)

    def _hostile(self, body: str, path: str, raw: bytes) -> None:
        """The hostile bodies that are not an odd answer: a drip, 1 GB, a 429 with an
        unbounded ``Retry-After``."""
        if body in _RETRY_AFTERS:
            self._error(429, "Rate limit reached (hostile); retry later.", "requests",
                        "rate_limit_exceeded", {"Retry-After": _RETRY_AFTERS[body]})
            return
        self.close_connection = True
        self.server.stats.status(200)
        try:
            if body == "drip":
                data = json.dumps(_odd_answer("drip", self._answer_or_empty(path, raw))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.flush()
                deadline = time.monotonic() + self.server.config.hang_seconds
                for byte in data:
                    if time.monotonic() > deadline or self.server.stopping.wait(1.0):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            elif body == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                head = b'{"choices": [{"index": 0, "message": {"content": "'
                self.wfile.write(head)
                chunk = b"a" * (1 << 20)
                for _ in range(HUGE_BODY_BYTES // len(chunk)):
                    if self.server.stopping.is_set():
                        return
                    self.wfile.write(chunk)
                self.wfile.write(b'"}}]}')
            else:  # pragma: no cover - HOSTILE_BODIES and these switches are kept in step
                raise AssertionError(body)
        except (BrokenPipeError, ConnectionResetError, OSError):
            return

    def _answer_or_empty(self, path: str, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw or b"null")
            return self._answer(path, body) if isinstance(body, dict) else {}
        except Exception:  # noqa: BLE001 - a drip of an error is a drip all the same
            return {}


_MESSAGES = "/v1/messages"
_LIVE = ("/v1/chat/completions", "/v1/completions", _MESSAGES)

_RETRY_AFTERS = {"retry_after_huge": "999999999", "retry_after_inf": "inf",
                 "retry_after_2099": "Thu, 01 Jan 2099 00:00:00 GMT"}
_ODD_ANSWERS = frozenset({*HOSTILE_USAGE, "surrogate", "html", "index_string", "index_duplicate",
                          "index_range"})


def _odd_answer(body: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A valid answer ``payload`` with the odd field of hostile body ``body`` (NaN and
    Infinity are written as Python's json writes them; a lone surrogate as ``\\ud83d``)."""
    payload = json.loads(json.dumps(payload))  # a copy
    choices = payload.get("choices") or []
    if body in HOSTILE_USAGE:
        payload["usage"] = HOSTILE_USAGE[body]
    elif body == "surrogate" and choices:
        for choice in choices:
            if "message" in choice:
                choice["message"]["content"] = "\ud83d" + str(choice["message"]["content"])
            else:
                choice["text"] = str(choice.get("text", "")) + " \udc00"
    elif body == "html" and choices:
        for choice in choices:
            if "message" in choice:
                choice["message"]["content"] = HOSTILE_HTML + str(choice["message"]["content"])
            else:
                choice["text"] = str(choice.get("text", "")) + HOSTILE_HTML
    elif body == "index_string" and choices:
        choices[-1]["index"] = "zero"
    elif body == "index_duplicate" and choices:
        choices.append(dict(choices[0]))
    elif body == "index_range" and choices:
        choices[-1]["index"] = len(choices) + 6
    return payload


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
        """Counters: ``requests``, ``by_path``, ``by_status`` (str keys), ``faults``,
        ``usage`` (billed tokens of live calls), ``batches`` (the Batch API's counts)."""
        return self._server.stats.with_batches(self._server.batches)

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
