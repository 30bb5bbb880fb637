"""Start-up that fits the work, and distbench's overhead against a real server.

1. A one-call ``distbench run`` (the dummy, 1 game x 1 trial), the whole process timed, with
   the default ``--parallel auto`` against ``--no-parallel`` and ``--parallel`` (a local Ray
   instance); median of ``--repeats``. The target: auto at most 1.5x --no-parallel.
2. distbench against llama-cpp-python's own OpenAI-compatible server (``python -m
   llama_cpp.server``, the bundled SmolLM2), concurrency 4: ``distbench run`` (whole process,
   ``--parallel auto``) against a minimal asyncio httpx loop sending the same requests (the
   prompts distbench sent, read back from the run's ``calls`` table, with the same bodies) at
   the same concurrency. The target: at least 0.9x the loop's calls/s.

Usage: python benchmarks/bench_startup.py [--repeats N] [--calls N] [--skip-server]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {**os.environ, "RAY_AUTH_MODE": "disabled"}


def whole_run(args: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "distbench", "run", *args], cwd=cwd, env=ENV,
                   check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0


def startup(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = ["--llm-type", "dummy", "--num-games", "1", "--num-trials", "1", "--overwrite"]
        times: dict[str, list[float]] = {"auto": [], "--no-parallel": [], "--parallel": []}
        whole_run([*base, "--run-id", "warm", "--no-parallel"], Path(tmp))  # caches warm
        for r in range(repeats):
            for name in times:
                extra = [] if name == "auto" else [name]
                times[name].append(whole_run([*base, "--run-id", f"r{r}{name}", *extra],
                                             Path(tmp)))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"1. one-call run, whole process, median of {repeats}: auto {med['auto']:.2f} s, "
          f"--no-parallel {med['--no-parallel']:.2f} s, --parallel {med['--parallel']:.2f} s; "
          f"auto / --no-parallel = {med['auto'] / med['--no-parallel']:.2f} (target <= 1.5)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def httpx_loop(url: str, bodies: list[dict], concurrency: int) -> float:
    """Seconds to send ``bodies`` to ``url`` at ``concurrency`` (a minimal client)."""
    import httpx

    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        async def one(body: dict) -> None:
            async with sem:
                (await client.post("/v1/completions", json=body)).raise_for_status()

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0


def against_server(calls: int) -> None:
    import httpx

    from distbench.llm.local import find_model_path
    from distbench.store.catalog import open_run

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        log = open(Path(tmp) / "server.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model",
                                 str(find_model_path()), "--host", "127.0.0.1", "--port",
                                 str(port)], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            games = max(1, calls // 10)
            args = ["--llm-type", "llamacpp", "--base-url", url, "--style", "completion",
                    "--num-games", str(games), "--num-trials", "10", "--max-concurrency", "4",
                    "--no-cache", "--run-id", "d"]
            elapsed = whole_run(args, Path(tmp))
            con = open_run(Path(tmp) / "results" / "d")
            rows = con.execute("select prompt_text from calls order by call_id").fetchall()
            n = len(rows)
            bodies = [{"prompt": p, "max_tokens": 16, "temperature": 1.0, "seed": i,
                       "top_p": 1.0, "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}
                      for i, (p,) in enumerate(rows)]
            loop = asyncio.run(httpx_loop(url, bodies, 4))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"2. llama-cpp-python's server (SmolLM2), {n} calls at concurrency 4: distbench "
          f"(whole process) {n / elapsed:.2f} calls/s, minimal httpx loop {n / loop:.2f} "
          f"calls/s: ratio {loop / elapsed:.2f} (target >= 0.9)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=120)
    parser.add_argument("--skip-server", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}; load {os.getloadavg()[0]:.1f}")
    startup(args.repeats)
    if not args.skip_server:
        against_server(args.calls)


if __name__ == "__main__":
    main()
