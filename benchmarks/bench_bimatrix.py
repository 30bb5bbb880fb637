"""Benchmark of the bimatrix support-enumeration kernel against nashpy.

Prints, per game size (2x2 .. 5x5), games solved per second on one core by

* ``nashpy.Game(A, B).support_enumeration()`` (default arguments: every support pair), timed
  on a sample of games and extrapolated (milliseconds per game, all of it Python);
* :func:`distbench.kernels.bimatrix.solve_bimatrix` (serial, the default), best of several
  repetitions on a batch, JIT compilation excluded; it includes everything the kernel returns
  (equilibria, pure equilibria, both maximin LPs, Pareto cells, welfare);

and the ratio kernel/nashpy with the target (>= 1000x at 3x3). The games are the same for both:
continuous uniform payoffs in [-10, 10] for each player (nondegenerate with probability 1),
so nashpy's degeneracy warning is not what is timed.

Usage::

    python benchmarks/bench_bimatrix.py           # about a minute on a quiet machine
    python benchmarks/bench_bimatrix.py --quick   # smoke test
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

TARGETS = {3: 1000.0}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,3,4,5")
    parser.add_argument("--games", type=int, default=20_000, help="kernel batch per size")
    parser.add_argument("--nashpy-seconds", type=float, default=4.0,
                        help="time spent on nashpy per size (its rate is extrapolated)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.nashpy_seconds, args.repeats = 2_000, 0.5, 1

    import nashpy
    import numba

    from distbench.kernels.bimatrix import solve_bimatrix

    print(f"date: {datetime.datetime.now(datetime.UTC):%a %b %d %H:%M:%S UTC %Y}")
    print(f"machine: {cpu_model()}, load average {load_average()}")
    print(f"software: Python {platform.python_version()}, numpy {np.__version__}, numba "
          f"{numba.__version__}, nashpy {nashpy.__version__}")
    rng = np.random.default_rng(2026)
    t0 = time.perf_counter()
    solve_bimatrix(np.zeros((1, 2, 2)), np.ones((1, 2, 2)))
    print(f"first call (compile or cache load): {time.perf_counter() - t0:.2f} s\n")
    print(f"{'size':>5} {'nashpy games/s':>15} {'kernel 1 core':>14} {'ratio':>9} "
          f"{'target':>9} {'eq/game':>8}")
    failed = False
    for size in (int(s) for s in args.sizes.split(",")):
        a = rng.uniform(-10, 10, (args.games, size, size))
        b = rng.uniform(-10, 10, (args.games, size, size))
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            sol = solve_bimatrix(a, b)
            best = min(best, time.perf_counter() - t0)
        kernel_rate = args.games / best
        done = 0
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            while time.perf_counter() - t0 < args.nashpy_seconds and done < args.games:
                list(nashpy.Game(a[done], b[done]).support_enumeration())
                done += 1
        nashpy_rate = done / (time.perf_counter() - t0)
        ratio = kernel_rate / nashpy_rate
        target = TARGETS.get(size)
        verdict = "-"
        if target is not None:
            ok = ratio >= target
            failed |= not ok
            verdict = f">={target:,.0f}x {'PASS' if ok else 'FAIL'}"
        print(f"{size}x{size:<3} {nashpy_rate:15,.1f} {kernel_rate:14,.0f} {ratio:8,.0f}x "
              f"{verdict:>9} {sol.num_eq.mean():8.2f}")
    print(f"\nload average at end: {load_average()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
