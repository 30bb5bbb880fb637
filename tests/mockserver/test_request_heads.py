"""The mock server's own reading of request heads (issue 35's speed: the standard library's
e-mail parser was a third of a call's CPU): header names without case, ``Connection: close``
honoured, ``Expect: 100-continue`` answered, too many headers refused, an odd request line
left to the standard library; over a raw loopback socket."""

from __future__ import annotations

import json
import socket

from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.wire import _Headers


def _exchange(url: str, data: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port.split("/")[0])), timeout=10) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_request_heads_are_read_without_the_email_parser():
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       "max_tokens": 5}).encode()
    with start_server(ServerConfig(seed=1)) as server:
        answer = _exchange(server.url, b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                           b"content-LENGTH: " + str(len(body)).encode() + b"\r\n"
                           b"Expect: 100-continue\r\nConnection: close\r\n\r\n" + body)
        assert answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 ")
        assert b'"choices"' in answer  # the body was read by its length, then the server closed
        crowded = b"GET /health HTTP/1.1\r\n" + b"".join(
            b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n"
        assert _exchange(server.url, crowded).startswith(b"HTTP/1.1 431 ")
        # not HTTP/1.x: left to the standard library's checks
        assert b"505" in _exchange(server.url, b"GET /health HTTP/2.0\r\n\r\n")


def test_header_names_compare_without_case():
    headers = _Headers({"content-type": "a"})
    assert headers.get("Content-Type") == "a" and headers["CONTENT-TYPE"] == "a"
    assert "Content-type" in headers and headers.get("x-api-key") is None
