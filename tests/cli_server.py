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


def kill_9_after_commits(argv: list[str], cwd, commits, at_least: int, env: dict[str, str],
                         timeout: float = 240) -> int:
    """Starts ``argv`` in its own session, sends ``kill -9`` to the whole group once
    ``commits`` holds ``at_least`` commit markers, and returns how many it holds then.

    Raises:
        AssertionError: the command ended before it could be killed.
    """
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if commits.is_dir() and len(list(commits.glob("*.json"))) >= at_least:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the command ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return len(list(commits.glob("*.json")))
