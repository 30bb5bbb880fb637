"""Benchmark of the zero-sum kernels against a scipy ``linprog`` loop.

Prints, per game size, games solved per second by

* a scipy ``linprog(method="highs")`` loop, one row LP per game (timed on a sample and
  extrapolated: it costs about a millisecond per game, almost all of it Python overhead);
* :func:`distbench.kernels.solve_zero_sum` on one core (serial) and on all numba threads
  (parallel), best of several repetitions, JIT compilation excluded and reported separately;

the ratio kernel/scipy with the targets (>= 2000x at 3x3, >= 300x at 10x10), the largest
value difference between the two on the sample, the scoring kernels' throughput, and the
throughput of :func:`distbench.games.matrix.generate.generate_games`, and the bootstrap kernel
(:func:`distbench.kernels.cluster_resample_means`) against a plain numpy bootstrap.

The solver input is uniform integer payoffs in [-50, 50] (the ``midVar`` spread). Unless
``--warm-cache`` is given, numba's cache is pointed at a fresh temporary directory so that the
compile time shown is a real compile, not a cache load.

Usage::

    python benchmarks/bench_kernels.py           # full run, 10^5 games per size
    python benchmarks/bench_kernels.py --quick   # small run for a smoke test
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

TARGETS = {3: 2000.0, 10: 300.0}


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


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls (the least disturbed on a shared machine)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def scipy_value(u: np.ndarray) -> float:
    """Value of one game by the row LP: maximize v s.t. U^T x >= v, sum x = 1, x >= 0."""
    from scipy.optimize import linprog

    m, n = u.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    res = linprog(
        c,
        A_ub=np.hstack([-u.T, np.ones((n, 1))]),
        b_ub=np.zeros(n),
        A_eq=np.append(np.ones(m), 0.0)[None, :],
        b_eq=[1.0],
        bounds=[(0.0, None)] * m + [(None, None)],
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return -res.fun


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small run (smoke test)")
    parser.add_argument("--sizes", default="2,3,5,10", help="square sizes, comma separated")
    parser.add_argument("--games", type=int, default=None, help="games per size for the kernel")
    parser.add_argument("--scipy-games", type=int, default=None, help="scipy sample per size")
    parser.add_argument("--repeats", type=int, default=None, help="kernel repetitions (best)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warm-cache",
        action="store_true",
        help="use numba's normal cache (compile time then shows a cache load)",
    )
    args = parser.parse_args(argv)

    n_games = args.games or (20_000 if args.quick else 100_000)
    n_scipy = args.scipy_games or (200 if args.quick else 1000)
    repeats = args.repeats or (3 if args.quick else 5)
    sizes = [int(s) for s in args.sizes.split(",")]

    if args.warm_cache:
        return run(args, n_games, n_scipy, repeats, sizes)
    # a fresh numba cache, so that the first call below is a real compile
    with tempfile.TemporaryDirectory(prefix="distbench-bench-numba-") as tmp:
        os.environ["NUMBA_CACHE_DIR"] = tmp
        return run(args, n_games, n_scipy, repeats, sizes)


def run(
    args: argparse.Namespace, n_games: int, n_scipy: int, repeats: int, sizes: list[int]
) -> int:
    """Run the benchmark and print the report."""

    # imported here so that NUMBA_CACHE_DIR takes effect
    import numba
    import scipy

    from distbench.kernels import score_actions, score_strategies, solve_zero_sum

    print("bench_kernels.py")
    print(f"  date      {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    print(f"  cpu       {cpu_model()} ({os.cpu_count()} logical cpus visible)")
    print(
        f"  versions  python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, scipy {scipy.__version__}"
    )
    print(f"  load avg  {load_average()} (at start)")
    print(f"  command   {' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}")
    print(f"  input     uniform integer payoffs in [-50, 50]; kernel {n_games:,} games per size,")
    print(f"            best of {repeats}; scipy linprog(highs) loop on {n_scipy:,} of them")
    print()

    # ---- JIT compile (or cache load), excluded from the timings below
    tiny = np.random.default_rng(0).integers(-5, 6, size=(4, 3, 3)).astype(np.float64)
    t0 = time.perf_counter()
    solve_zero_sum(tiny)
    t_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    solve_zero_sum(tiny, parallel=True)
    t_parallel = time.perf_counter() - t0
    sol = solve_zero_sum(tiny)
    idx = np.arange(4)
    t0 = time.perf_counter()
    score_actions(tiny, sol.col, sol.value, idx, idx % 3)
    score_strategies(tiny, sol.col, sol.value, idx, sol.row)
    t_score = time.perf_counter() - t0
    kind = "cache load" if args.warm_cache else "compile"
    print(f"numba threads {numba.get_num_threads()} (threading layer {numba.threading_layer()})")
    print(
        f"first call ({kind}): solve serial {t_serial:.2f} s, solve parallel {t_parallel:.2f} s, "
        f"scoring {t_score:.2f} s"
    )
    print()

    scipy_value(tiny[0])  # import and warm up scipy outside the timings

    rng = np.random.default_rng(args.seed)
    header = (
        f"{'size':>6} {'scipy games/s':>14} {'kernel 1 core':>14} {'ratio':>8} {'target':>8} "
        f"{'':>4} {'parallel':>12} {'pivots':>7} {'max |dv|':>9} {'score trials/s':>15}"
    )
    print("solver (games/s)")
    print(header)
    print("-" * len(header))
    results = []
    for k in sizes:
        payoffs = rng.integers(-50, 51, size=(n_games, k, k)).astype(np.float64)
        sample = payoffs[:n_scipy]
        t0 = time.perf_counter()
        ref = np.array([scipy_value(u) for u in sample])
        scipy_rate = len(sample) / (time.perf_counter() - t0)

        serial_rate = n_games / best_time(lambda p=payoffs: solve_zero_sum(p), repeats)
        par_rate = n_games / best_time(lambda p=payoffs: solve_zero_sum(p, parallel=True), repeats)
        sol = solve_zero_sum(payoffs)
        max_dv = float(np.abs(sol.value[:n_scipy] - ref).max())
        if sol.status.any():
            print(f"  warning: {int(sol.status.sum())} games hit the pivot cap")

        # scoring: 4 pure-action trials per game
        gi = np.repeat(np.arange(n_games), 4)
        actions = rng.integers(0, k, size=gi.shape[0])
        score_rate = gi.shape[0] / best_time(
            lambda p=payoffs, s=sol, g=gi, a=actions: score_actions(p, s.col, s.value, g, a),
            repeats,
        )

        ratio = serial_rate / scipy_rate
        target = TARGETS.get(k)
        verdict = "" if target is None else ("PASS" if ratio >= target else "FAIL")
        target_s = "-" if target is None else f">={target:,.0f}x"
        print(
            f"{f'{k}x{k}':>6} {fmt_rate(scipy_rate):>14} {fmt_rate(serial_rate):>14} "
            f"{ratio:>7,.0f}x {target_s:>8} {verdict:>4} {fmt_rate(par_rate):>12} "
            f"{sol.iterations.mean():>7.2f} {max_dv:>9.1e} {fmt_rate(score_rate):>15}"
        )
        results.append((k, ratio, target))
    print()
    print("  ratio = kernel on 1 core / scipy loop; parallel uses all numba threads;")
    print("  pivots = mean simplex pivots per game; max |dv| = largest value difference from")
    print("  scipy on the sample; score = score_actions, 4 pure-action trials per game.")
    print()

    # ---- game generation
    print("generation (generate_games, games/s)")
    try:
        from distbench.games.matrix.generate import generate_games
    except ImportError as exc:
        print(f"  generation: not available ({exc})")
    else:
        print(f"{'bucket':>22} {'games/s':>12}")
        n_gen = n_games
        for k in sizes:
            for kind_ in ("mixed", "pure"):
                bucket = f"{k}x{k}_midVar_{kind_}"
                try:
                    generate_games(bucket, args.seed, 0, 256)  # warm-up
                    dt = best_time(
                        lambda b=bucket: generate_games(b, args.seed, 0, n_gen), max(1, repeats - 2)
                    )
                except Exception as exc:  # report and go on: the solver figures stand alone
                    print(f"{bucket:>22} failed: {type(exc).__name__}: {exc}")
                    continue
                print(f"{bucket:>22} {fmt_rate(n_gen / dt):>12}")
    print()

    # ---- bootstrap resampling (the run summary's 95% CI)
    import distbench.kernels.resample_jit  # noqa: F401 - loaded: every size takes the kernel
    from distbench.kernels import cluster_resample_means

    resamples = 2000
    print(f"bootstrap ({resamples:,} resamples of G games; draws/s, one core)")
    print(f"{'G':>8} {'numpy':>12} {'kernel':>12} {'ratio':>7}")
    for g in (100, 10_000):
        sums, counts = rng.normal(size=g) * 10.0, np.full(g, 100.0)
        cluster_resample_means(sums, counts, 0, 1, 1)  # compile or load

        def with_numpy(g=g, sums=sums, counts=counts) -> np.ndarray:
            # what a plain numpy bootstrap does: draw indices, gather, sum (in cache-sized steps)
            gen = np.random.default_rng(1)
            out = np.empty(resamples)
            step = max(1, (1 << 17) // g)
            for lo in range(0, resamples, step):
                hi = min(resamples, lo + step)
                idx = gen.integers(0, g, size=(hi - lo, g))
                out[lo:hi] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
            return out

        draws = resamples * g
        numpy_rate = draws / best_time(with_numpy, max(1, repeats - 2))
        kernel_rate = draws / best_time(
            lambda s=sums, c=counts: cluster_resample_means(s, c, 0, resamples, 1), repeats)
        print(f"{g:>8,} {fmt_rate(numpy_rate):>12} {fmt_rate(kernel_rate):>12} "
              f"{kernel_rate / numpy_rate:>6.1f}x")
    print()
    print(f"load avg {load_average()} (at end)")
    failed = [k for k, ratio, target in results if target is not None and ratio < target]
    if failed:
        print(f"targets missed at sizes {failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
