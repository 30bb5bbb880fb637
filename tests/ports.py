"""Ports for tests that run beside anything (a server on 127.0.0.1:8080, another test run):
never a fixed port, always one the kernel hands out."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now (bound to port 0, then released), for
    a server a test starts and restarts on the same port."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
