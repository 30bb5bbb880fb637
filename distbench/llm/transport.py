"""A lean HTTP/1.1 client for plain ``http://`` endpoints (issue 35's speed).

httpx stays the client of every remote API (TLS, proxies, HTTP/2, its checks); a local server
reached over plain HTTP (llama.cpp, vLLM, the mock server) is asked through :class:`LeanPool`
instead: one POST written as one buffer over an asyncio stream, the answer read by a small
parser (status line, headers, a ``Content-Length`` or chunked body, or one read to the end),
on keep-alive connections kept per endpoint. httpx spends about 4 ms of CPU a call in request
building, URL parsing, its pool and h11; this path spends a tenth of that.

What the caller relies on is kept: failures raise httpx's own exception classes
(:class:`httpx.ConnectError`, :class:`httpx.ReadError`, :class:`httpx.RemoteProtocolError`,
all :class:`httpx.TransportError`), the caller's deadline (``asyncio.timeout``) cancels a call
at any point and its connection is closed, and a body longer than the caller's cap is abandoned
as it arrives (:class:`BodyTooLarge`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from distbench.llm.base import ChatMessages, remembered

MAX_HEAD_BYTES = 64 * 1024
"""Longest status line and headers read (a longer head is a protocol error)."""


class BodyTooLarge(Exception):
    """A response body longer than the cap: args (status, declared length or None)."""


def json_bytes(body: Any) -> bytes:
    """A JSON request body as httpx encodes one (compact, UTF-8, no NaN).

    A conversation's messages are encoded once each and spliced in (:func:`spliced_json`):
    each turn of a long game sends every earlier message again, and encoding them anew was
    most of the client's JSON time. The bytes are those of one ``json.dumps`` of the body."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if type(messages) is ChatMessages and len(messages) == len(messages.pairs) > 1:
        return spliced_json(body, "messages", messages.pairs, _dumps, chat_message).encode()
    return _dumps(body).encode("utf-8")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def chat_message(role: str, content: str) -> dict[str, str]:
    """One message of an OpenAI ``messages`` list."""
    return {"role": role, "content": content}


_ENCODED: dict[tuple[Any, Any], dict[tuple[str, str], str]] = {}
_ENCODED_MAX = 200_000
"""Encoded messages by (encoder, shape), then by (role, content); each emptied when it reaches
its bound."""


def spliced_json(body: dict[str, Any], field: str, messages: Sequence[tuple[str, str]],
                 dumps: Callable[[Any], str], shape: Callable[[str, str], Any]) -> str:
    """``dumps(body)`` where ``body[field]`` holds ``shape(role, content)`` of each message,
    each message encoded once per process and spliced in (``dumps`` and ``shape`` must be
    module-level functions, and ``dumps`` deterministic and compact). The field is encoded as
    ``0`` and replaced: a quote inside a JSON string is always escaped, so ``"field":0`` can
    only be the key itself."""
    parts = remembered(_ENCODED.setdefault((dumps, shape), {}), messages,
                       lambda pair: dumps(shape(*pair)), _ENCODED_MAX)
    marker = f'"{field}":0'
    text = dumps({**body, field: 0})
    at = text.index(marker)
    return f"{text[:at]}{marker[:-1]}[{','.join(parts)}]{text[at + len(marker):]}"


class LeanPool:
    """Keep-alive connections to one plain-HTTP server, at most ``max_idle`` kept idle; the
    number in use is bounded by the caller (the endpoint's ``max_concurrency`` slots)."""

    def __init__(self, base_url: str, params: list[tuple[str, str]], headers: dict[str, str],
                 max_idle: int) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.query = ("?" + urlencode(params)) if params else ""
        self.max_idle = max(1, max_idle)
        head = {"Host": parts.netloc, "Accept": "*/*", "Accept-Encoding": "identity",
                "Connection": "keep-alive", "User-Agent": f"python-httpx/{httpx.__version__}",
                "Content-Type": "application/json", **headers}
        for key, value in head.items():
            if any(c in f"{key}{value}" for c in "\r\n\0"):
                raise ValueError(f"header {key!r} holds a line break or NUL")
        self._head = "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode("latin-1")
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes, cap: int) -> tuple[int, bytes, dict[str, str]]:
        """POST ``body`` to ``path``: (status, body, headers with lower-case names)."""
        data = (f"POST {self.prefix}{path}{self.query} HTTP/1.1\r\n".encode("latin-1")
                + self._head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
                + body)
        while self._idle:
            conn = self._idle.pop()
            try:
                return await self._exchange(conn, data, cap)
            except _Stale:
                continue  # the server closed an idle connection: take another or a new one
        try:
            conn = await asyncio.open_connection(self.host, self.port, limit=MAX_HEAD_BYTES)
        except OSError as exc:
            raise httpx.ConnectError(f"{type(exc).__name__}") from None
        try:
            return await self._exchange(conn, data, cap)
        except _Stale:
            raise httpx.RemoteProtocolError("server disconnected without a response") from None

    async def _exchange(self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                        data: bytes, cap: int) -> tuple[int, bytes, dict[str, str]]:
        reader, writer = conn
        reuse = False
        try:
            try:
                writer.write(data)
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if not exc.partial:
                    raise _Stale from None
                raise httpx.RemoteProtocolError("incomplete response head") from None
            except (ConnectionResetError, BrokenPipeError):
                raise _Stale from None
            except asyncio.LimitOverrunError:
                raise httpx.RemoteProtocolError("response head too long") from None
            status, headers = parse_head(head)
            content, reuse = await read_body(reader, status, headers, cap)
            return status, content, headers
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("incomplete response body") from None
        except OSError as exc:
            raise httpx.ReadError(type(exc).__name__) from None
        finally:
            if reuse and len(self._idle) < self.max_idle:
                self._idle.append(conn)
            else:
                writer.close()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()


class _Stale(Exception):
    """A kept connection the server had closed (nothing of an answer came back)."""


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """(status, headers with lower-case names) of a response head ending in a blank line."""
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise httpx.RemoteProtocolError("malformed status line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise httpx.RemoteProtocolError("malformed header line")
        name = name.lower()
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return int(code), headers


async def read_body(reader: asyncio.StreamReader, status: int, headers: dict[str, str],
                    cap: int) -> tuple[bytes, bool]:
    """(the body, whether the connection can be kept) of a response to a POST."""
    keep = "close" not in headers.get("connection", "").lower()
    if status in (204, 304) or 100 <= status < 200:
        return b"", keep
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _chunked(reader, status, cap), keep
    declared = headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise httpx.RemoteProtocolError("malformed Content-Length")
        size = int(declared)
        if size > cap:
            raise BodyTooLarge(status, size)
        return await reader.readexactly(size), keep
    chunks: list[bytes] = []  # no length: the body runs to the end of the connection
    total = 0
    while chunk := await reader.read(65536):
        total += len(chunk)
        if total > cap:
            raise BodyTooLarge(status, None)
        chunks.append(chunk)
    return b"".join(chunks), False


async def _chunked(reader: asyncio.StreamReader, status: int, cap: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise httpx.RemoteProtocolError("malformed chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        total += size
        if total > cap:
            raise BodyTooLarge(status, None)
        chunks.append((await reader.readexactly(size + 2))[:-2])
