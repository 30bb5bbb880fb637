"""What live progress costs.

1. A 10^6-trial dummy run (10,000 3x3 games x 100 trials, the dummy answering as arrays, in
   this process, 50 shards of 20,000 trials) with the progress line (``Progress`` writing
   plain lines, as off a terminal, and the live-call watcher asked for) against the same run
   with no progress callbacks; alternated, ``--repeats`` times each (default 3), medians.
   The target: under 2% more time.
2. The per-call cost of the live counts (``distbench.llm.meter.record``), against the time of
   the fastest model call there is (a loopback HTTP call to the mock server).

Usage: python benchmarks/bench_progress.py [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path


def one_run(out: Path, games: int, with_progress: bool) -> float:
    from distbench.cli.progress import Progress
    from distbench.engine.driver import run_plan
    from distbench.games.matrix.plan import MatrixRunConfig
    from distbench.llm.registry import make_spec

    config = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(0,), num_games=games,
                             num_trials=100, modes=("pure",), llm=make_spec("dummy", fast=True),
                             shard_trials=20_000)
    plan = config.plan(out.name)
    kwargs = {}
    spent = [0.0]

    def timed(fn):
        def call(*a):
            t = time.perf_counter()
            fn(*a)
            spent[0] += time.perf_counter() - t
        return call

    if with_progress:
        p = Progress(plan.unit, len(plan.shards), expected_calls=plan.expected_calls,
                     stream=io.StringIO(), tty=False)
        kwargs = dict(progress=timed(p.update), on_start=timed(p.start),
                      on_stage=timed(p.stage), on_calls=timed(p.live))
    t0 = time.perf_counter()
    run_plan(plan, out, parallel=False, **kwargs)
    total = time.perf_counter() - t0
    if with_progress:
        SPENT.append(spent[0] / total)
    return total


SPENT: list[float] = []


def meter_cost(n: int = 200_000) -> float:
    """Seconds per recorded call."""
    from distbench.llm import meter
    from distbench.llm.base import Response

    resp = (Response(text="Action: 1", prompt_tokens=100, completion_tokens=3),)
    t0 = time.perf_counter()
    for _ in range(n):
        meter.record("bench", resp)
    return (time.perf_counter() - t0) / n


def fastest_call(n: int = 200) -> float:
    """Seconds per call of a loopback HTTP call to the mock server (one at a time)."""
    import httpx

    from distbench.mockserver import ServerConfig, start_server

    body = {"model": "m", "prompt": "Action:", "max_tokens": 4}
    with start_server(ServerConfig()) as server, httpx.Client(base_url=server.url) as client:
        client.post("/v1/completions", json=body)
        t0 = time.perf_counter()
        for _ in range(n):
            client.post("/v1/completions", json=body)
        return (time.perf_counter() - t0) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10^5 trials, 1 repeat")
    args = parser.parse_args()
    games, repeats = (1_000, 1) if args.quick else (10_000, args.repeats)
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}; "
          f"{time.strftime('%Y-%m-%d')}")
    with tempfile.TemporaryDirectory() as tmp:
        one_run(Path(tmp) / "warm", 200, True)  # compiled kernels loaded, caches warm
        plain, shown = [], []
        for r in range(repeats):
            for with_progress, times in ((False, plain), (True, shown)):
                times.append(one_run(Path(tmp) / f"r{r}{with_progress}", games, with_progress))
    a, b = statistics.median(plain), statistics.median(shown)
    print(f"1. {games * 100:,}-trial dummy run, median of {repeats}: no progress {a:.2f} s, "
          f"with progress {b:.2f} s: ratio {b / a:.4f} ({100 * (b / a - 1):+.2f}%; target < +2%)")
    inside = statistics.median(SPENT[1:])  # the first is the warm-up run
    print(f"   time inside the progress callbacks: {100 * inside:.3f}% of the run "
          "(the whole-run ratio above moves by several % between identical runs here)")
    per_call, call = meter_cost(), fastest_call()
    print(f"2. live counts: {per_call * 1e6:.2f} us per call; the fastest model call "
          f"(loopback mock server) {call * 1e3:.2f} ms: {100 * per_call / call:.3f}% of it")


if __name__ == "__main__":
    main()
