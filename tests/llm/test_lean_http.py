"""The lean HTTP/1.1 path of plain ``http://`` endpoints (issue 35's speed,
:mod:`distbench.llm.transport`): answers read from real sockets over loopback in every framing
a server may use, kept-alive connections reused (and a stale one replaced), the body cap, and
malformed answers as httpx's transport errors."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from distbench.llm.base import Request
from distbench.llm.http import OpenAICompatibleBackend
from distbench.llm.registry import make_spec
from distbench.llm.transport import BodyTooLarge, LeanPool
from distbench.mockserver import ServerConfig, start_server


async def _serve(answers: list[bytes], close_after: bool = False):
    """A raw server on a free loopback port answering each request with the next of
    ``answers`` (closing the connection after each when ``close_after``); (server, url,
    connections opened)."""
    opened = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened[0] += 1
        try:
            while answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                await reader.readexactly(length)
                writer.write(answers.pop(0))
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", opened


def _run(answers: list[bytes], cap: int = 1 << 20, calls: int = 1, close_after: bool = False):
    async def main():
        server, url, opened = await _serve(answers, close_after)
        pool = LeanPool(url, [("api-version", "1")], {"Authorization": "Bearer k"}, 4)
        try:
            out = [await pool.post("/v1/chat/completions", b'{"a":1}', cap) for _ in range(calls)]
        finally:
            await pool.aclose()
            server.close()
        return out, opened[0]

    return asyncio.run(main())


def test_content_length_chunked_and_close_delimited_bodies_are_read_whole():
    (a, b), opened = _run([
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRetry-After: 2\r\n\r\nhello",
        b"HTTP/1.1 429 Too Many\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: t\r\n\r\n",
    ], calls=2)
    assert a == (200, b"hello", {"content-length": "5", "retry-after": "2"})
    assert b[:2] == (429, b"abcde")
    assert opened == 1  # the second call went over the kept connection
    (c,), _ = _run([b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"],
                   close_after=True)
    assert c[:2] == (200, b"until the end")


def test_a_connection_the_server_closed_is_replaced_not_failed():
    answers = [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"] * 3
    out, opened = _run(list(answers), calls=3, close_after=True)
    assert [o[1] for o in out] == [b"ok"] * 3 and opened == 3


def test_bodies_over_the_cap_are_not_read():
    with pytest.raises(BodyTooLarge) as announced:
        _run([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100], cap=10)
    assert announced.value.args == (200, 100)
    with pytest.raises(BodyTooLarge) as found:
        _run([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" + b"x" * 32
              + b"\r\n0\r\n\r\n"], cap=10)
    assert found.value.args == (200, None)


@pytest.mark.parametrize("answer", [
    b"garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
])
def test_malformed_answers_are_transport_errors(answer):
    with pytest.raises(httpx.TransportError):
        _run([answer], close_after=True)


def test_a_refused_connection_is_a_connect_error():
    async def main():
        server, url, _ = await _serve([])
        server.close()
        await server.wait_closed()
        return await LeanPool(url, [], {}, 1).post("/x", b"{}", 10)

    with pytest.raises(httpx.ConnectError):
        asyncio.run(main())


def test_a_plain_http_endpoint_is_asked_over_the_lean_path_and_keeps_its_connections(
        monkeypatch):
    with start_server(ServerConfig(seed=1)) as server:
        spec = make_spec("llamacpp", "mock", base_url=server.url, max_concurrency=4,
                         cache=False, max_retries=0)
        backend = OpenAICompatibleBackend(spec)

        async def ask():
            out = []
            for r in range(3):
                out += await backend.generate([Request(prompt=f"q{i}", seed=10 * r + i)
                                               for i in range(8)])
            kept = len(backend._lean._idle)
            await backend.aclose()
            return out, kept

        answers, kept = asyncio.run(ask())
        monkeypatch.setenv("DISTBENCH_LEAN_HTTP", "0")
        assert not OpenAICompatibleBackend(spec)._lean_ok  # httpx kept on request
    assert all(a.status == "ok" and a.text for a in answers)
    assert 1 <= kept <= 4


def test_a_proxy_or_credentials_keep_httpx(monkeypatch):
    """Only httpx speaks to proxies and sends a URL's credentials: the lean path steps aside
    when the environment names a proxy the host is not exempt from, or the URL carries a user."""
    from distbench.llm.http import _lean_reachable

    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert _lean_reachable("http://127.0.0.1:9/v1")
    assert not _lean_reachable("https://127.0.0.1:9/v1")
    assert not _lean_reachable("http://user:secret@127.0.0.1:9/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert not _lean_reachable("http://10.1.2.3:8000/v1")
    monkeypatch.setenv("NO_PROXY", "10.1.2.3")
    assert _lean_reachable("http://10.1.2.3:8000/v1")
