"""Clean stops, measured: requests the mock server still sees after ``kill -9`` of a parallel
driver, and the lines a Ctrl-C prints.

    python benchmarks/bench_stops.py [--repeat 3]

Prints, per try, the seconds between the kill and the last request the server saw, and the
stderr lines after Ctrl-C (SIGINT to the driver's process group, as a terminal sends it).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from distbench.mockserver import ServerConfig, start_server


def _driver(url: str, cwd: str, run_id: str) -> subprocess.Popen:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "distbench.cli", "run", "--llm-type", "llamacpp", "--base-url",
         url, "--num-games", "300", "--num-trials", "20", "--parallel", "--num-workers", "2",
         "--no-cache", "--max-concurrency", "16", "--yes", "--shard-trials", "200",
         "--run-id", run_id],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)


def _wait_for_requests(server, n: int, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while server.stats()["requests"] < n:
        if time.monotonic() - t0 > timeout:
            raise SystemExit("the driver made no requests")
        time.sleep(0.05)


def after_kill(server, cwd: str, run_id: str) -> float:
    """Seconds from ``kill -9`` of the driver to the last request the server saw."""
    proc = _driver(server.url, cwd, run_id)
    base = server.stats()["requests"]
    _wait_for_requests(server, base + 200)
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    last, count = killed, server.stats()["requests"]
    while time.monotonic() - killed < 6:
        now = server.stats()["requests"]
        if now != count:
            last, count = time.monotonic(), now
        time.sleep(0.01)
    proc.wait()
    # the killed driver's Ray processes (its own session) are left to the OS
    subprocess.run(["pkill", "-9", "-s", str(proc.pid)], check=False)
    return last - killed


def ctrl_c(server, cwd: str, run_id: str) -> list[str]:
    """The stderr lines printed after SIGINT reaches the driver's process group."""
    proc = _driver(server.url, cwd, run_id)
    base = server.stats()["requests"]
    _wait_for_requests(server, base + 200)
    before = []
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(
        ("progress:", "run ", "running ", "starting "))]
    return before + lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd, \
            start_server(ServerConfig(latency_ms=50)) as server:
        for i in range(args.repeat):
            print(f"kill -9: last request {after_kill(server, cwd, f'k{i}'):.2f} s after the kill",
                  flush=True)
        for i in range(args.repeat):
            lines = ctrl_c(server, cwd, f"c{i}")
            print(f"Ctrl-C: {len(lines)} line(s) after the progress lines", flush=True)
            for line in lines:
                print("   ", line[:200])


if __name__ == "__main__":
    main()
