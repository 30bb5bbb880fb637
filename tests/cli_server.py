"""Starting and stopping ``distbench serve ...`` as a real subprocess (shared by the server and
local-model tests; not a test module)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time


def distbench(*args: str, cwd, timeout: float = 300) -> subprocess.CompletedProcess:
    """``distbench <args>`` in a subprocess as a user runs it off a terminal (no stdin), without
    API keys."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    for key in ("OPENAI_API_KEY", "TOGETHER_API_KEY"):
        env.pop(key, None)
    return subprocess.run(distbench_argv(*args), cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def distbench_argv(*args: str) -> list[str]:
    """``distbench <args>`` through the real entry point."""
    return [sys.executable, "-m", "distbench.cli", *args]


def start_cli_server(*args: str, env: dict[str, str] | None = None,
                     timeout: float = 60) -> tuple[subprocess.Popen, str]:
    """Starts ``distbench serve ...``; returns (process, url) once it prints the serving line."""
    proc = subprocess.Popen(
        distbench_argv("serve", *args), stderr=subprocess.PIPE, stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    deadline = time.monotonic() + timeout
    line = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:
            line = proc.stderr.readline()
            if line.startswith(b"serving ") or not line:
                break
        elif proc.poll() is not None:
            break
    if not line.startswith(b"serving "):
        proc.kill()
        rest = proc.stderr.read().decode(errors="replace")
        raise AssertionError(f"no serving line: {line!r} {rest}")
    return proc, line.decode().split(" on ", 1)[1].strip()


def stop_cli_server(proc: subprocess.Popen) -> tuple[int, str]:
    """Sends SIGTERM and waits: (exit code, stderr)."""
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err.decode()
