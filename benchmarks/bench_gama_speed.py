"""Benchmark of GAMA-Bench's leaderboard protocol for one model against the mock server.

The protocol (``distbench suite gama``): the eight games, five runs each, ten seats of one model,
20 rounds: 8 x 5 x 20 x 10 = 8,000 answers at most (Battle Royale asks one seat a round and the
Pirate Game ends when a plan passes, so fewer are asked). The model is ``llamacpp:mock`` behind
``distbench serve mock --latency-ms L`` (default 200 ms per call), which answers each request
with a valid random answer. The protocol runs as one shard in this process (``--no-parallel``:
no Ray start in the figure): each game asks its next round as soon as its own answers are
back, so one game's CPU overlaps the others' calls.

Printed: the calls made, the wall time of the run, its **critical path** (the longest chain of
calls that must follow each other: the most sequential steps of any game, a Pirate round being
two steps, proposers then voters, times the latency), the ratio wall / critical path (the
issue's target: at most 1.5), and what GAMA's loop, one call after another, would take (calls x
latency), and the CPU the run and the mock server used (what bounds the figure when it is far
above the critical path).

Usage::

    python benchmarks/bench_gama_speed.py                  # 200 ms, five runs (about 10 s)
    python benchmarks/bench_gama_speed.py --latency-ms 50 --runs 2
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def start_mock(latency_ms: float) -> tuple[subprocess.Popen, str]:
    """``distbench serve mock --port 0 --latency-ms L``; (process, url) once it serves."""
    proc = subprocess.Popen([sys.executable, "-m", "distbench.cli", "serve", "mock", "--port",
                             "0", "--latency-ms", str(latency_ms)],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:
            line = proc.stderr.readline().decode()
            if line.startswith("serving "):
                return proc, line.split(" on ", 1)[1].strip()
    proc.kill()
    raise SystemExit("the mock server did not start")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from distbench.engine.driver import run_plan
    from distbench.games.gama.board import suite_configs, suite_plan
    from distbench.games.registry import load_families
    from distbench.llm.registry import make_spec
    from distbench.store.catalog import open_run

    load_families()
    proc, url = start_mock(args.latency_ms)
    try:
        spec = make_spec("llamacpp", "mock", base_url=url, max_concurrency=1000, cache=False,
                         max_retries=0)
        configs = suite_configs([spec], runs=args.runs)
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "speed"
            plan = suite_plan(configs, run_dir.name)
            start, cpu0, server0 = time.perf_counter(), time.process_time(), process_cpu(proc.pid)
            run_plan(plan, run_dir, parallel=False)
            wall = time.perf_counter() - start
            cpu, server = time.process_time() - cpu0, process_cpu(proc.pid) - server0
            con = open_run(run_dir, threads=1)
            calls, failed = con.execute(
                "select count(*), count(*) filter (where status <> 'ok') from calls").fetchone()
            steps = con.execute(
                "select max(rounds * (case when game = 'pirate' then 2 else 1 end)), "
                "count(*) filter (where status <> 'ok') from gama_games").fetchone()
            per_game = con.execute("select game, count(*), avg(rounds) from gama_games "
                                   "group by all order by all").fetchall()
            con.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    latency = args.latency_ms / 1000.0
    critical = steps[0] * latency
    print(f"protocol: 8 games x {args.runs} runs x 10 seats, llamacpp:mock at "
          f"{args.latency_ms:g} ms per call")
    print("games (rounds played, mean): " + ", ".join(f"{g} {n} ({r:.1f})" for g, n, r in
                                                      per_game))
    print(f"calls: {calls:,} ({failed} failed); games not complete: {steps[1]}")
    print(f"wall: {wall:.2f} s; critical path: {steps[0]} steps x {latency:g} s = "
          f"{critical:.2f} s; ratio {wall / critical:.2f}")
    print(f"CPU: this process {cpu:.1f} s ({cpu / calls * 1000:.1f} ms a call), the mock "
          f"server {server:.1f} s ({server / calls * 1000:.1f} ms a call); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"GAMA's sequential loop: {calls:,} x {latency:g} s = {calls * latency:,.0f} s "
          f"({calls * latency / wall:,.0f}x longer)")


if __name__ == "__main__":
    main()
