"""End-to-end throughput of a dummy-model matrix run versus the seed protocol run sequentially.

The work: ``--games`` 3x3 games (default 10,000) x ``--trials`` trials (100): 10^6 trials.

* distbench: ``run_matrix`` of that run, the dummy answering as arrays (its ``fast`` option: the
  same seeded policy, no text), writing Parquet, summary and manifest. Each figure is measured
  in a fresh Python process (a new Ray driver, like a new ``distbench`` command) with the
  library imported; the time is the whole run including connecting to Ray:

  - "first run": against a local Ray cluster just started with ``ray start --head`` (as a
    cluster user runs it; ``cluster/local.sh start 0``); it creates the warm executor pool
    (``--keep-warm``, the default with ``--address``).
  - "warm": the next run, a new driver process against the same cluster, pool warm; the
    median of ``--repeats`` such processes (default 3). The target.
  - "steady": a second run in each of those processes (median).
  - "tasks": a new driver with ``keep_warm=0``: shards as plain Ray tasks (Ray starts the
    job's worker processes).
  - "cold": a process that starts its own Ray instance.
* baseline: a straightforward sequential implementation of the seed protocol: a Python loop
  over games with ``scipy.optimize.linprog`` (one LP per game, the column strategy read from
  its duals), per-trial Python scoring of a random action, JSON output, run on the same work
  (``--baseline-games`` times a part of it and scales linearly; ``--quick`` times 200 games).
* the text path: answers parsed per second by the strict pure-action parser.

Usage: python benchmarks/bench_sweep.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def seed_protocol(num_games: int, num_trials: int, out: Path, seed: int = 0) -> float:
    """The baseline; returns its wall time in seconds."""
    from scipy.optimize import linprog

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    games, trials = [], []
    for g in range(num_games):
        u = rng.integers(-50, 51, size=(3, 3)).astype(float)
        m, n = u.shape
        # maximise v s.t. u^T x >= v, sum x = 1, x >= 0  (variables x, v)
        c = np.zeros(m + 1)
        c[-1] = -1.0
        a_ub = np.hstack([-u.T, np.ones((n, 1))])
        a_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
        res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs")
        x, v = res.x[:m], res.x[-1]
        y = -res.ineqlin.marginals
        y = y / y.sum()
        games.append({"game_id": g, "payoff_matrix": u.tolist(), "row_strategy": x.tolist(),
                      "col_strategy": y.tolist(), "value": float(v)})
        uy = u @ y
        br = float(uy.max())
        for t in range(num_trials):
            action = int(rng.integers(m))
            llm_value = float(uy[action])
            trials.append({"game_id": g, "trial": t, "action": action + 1,
                           "llm_value": llm_value, "br_value": br,
                           "nash_gap": br - llm_value})
    gaps = [t["nash_gap"] for t in trials]
    summary = {"num_games": num_games, "num_trials_per_game": num_trials,
               "total_trials": len(trials), "mean_nash_gap": float(np.mean(gaps))}
    for name, payload in (("games.json", games), ("trials.json", trials),
                          ("summary.json", summary)):
        with open(out / name, "w") as fh:
            json.dump(payload, fh)
    return time.perf_counter() - t0


def distbench_runs(run_dir: Path, games: int, trials: int, address: str | None,
                   num_workers: int, keep_warm: float, runs: int) -> list[float]:
    """Wall times of ``runs`` consecutive runs in this process (each into a new folder)."""
    import ray  # noqa: F401  (imported before timing, as the CLI has it imported)

    from distbench.engine.driver import run_config
    from distbench.games.matrix.plan import MatrixRunConfig
    from distbench.llm.registry import make_spec

    config = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(0,), num_games=games,
                             num_trials=trials, modes=("pure",),
                             llm=make_spec("dummy", fast=True), shard_trials=100_000)
    out = []
    for k in range(runs):
        t0 = time.perf_counter()
        run_config(config, run_dir / f"run{k}", parallel=True, num_workers=num_workers,
                   address=address, keep_warm=keep_warm)
        out.append(time.perf_counter() - t0)
    return out


def child(args: list[str]) -> tuple[list[float], float]:
    """Runs this script's ``--child`` mode in a new process: (run times, process wall time)."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"child run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["s"], wall


def parse_rate(count: int) -> float:
    from distbench.games.answers.parse import parse_pure

    texts = [f"Action: {1 + (k % 3)}" for k in range(count)]
    t0 = time.perf_counter()
    for text in texts:
        parse_pure(text, 3)
    return count / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 trials, smaller baseline")
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--baseline-games", type=int, default=None)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start figure")
    parser.add_argument("--repeats", type=int, default=3,
                        help="new driver processes for the warm figure (the median is reported)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--address", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--keep-warm", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    games = args.games or (1_000 if args.quick else 10_000)
    base_games = args.baseline_games or (200 if args.quick else games)
    cpus = os.cpu_count() or 1

    if args.child:  # one driver process: its run times as JSON
        times = distbench_runs(Path(args.child), games, args.trials, args.address, cpus,
                               args.keep_warm, args.runs)
        print(json.dumps({"s": times}))
        return

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    total = games * args.trials
    print(f"# bench_sweep  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  {platform.machine()}  "
          f"cpus={cpus}  python {platform.python_version()}  "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"work: {games:,} 3x3 games x {args.trials} trials = {total:,} trials (pure, dummy)")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        b = seed_protocol(base_games, args.trials, tmp)
        baseline = b * games / base_games
        print(f"\nbaseline (seed protocol, sequential): {base_games:,} games in {b:.2f} s -> "
              f"{baseline:.1f} s for the work, {total / baseline:,.0f} trials/s\n")

        def report(label: str, seconds: float, wall: float | None = None,
                   target: bool = False) -> None:
            ratio = baseline / seconds
            line = (f"distbench {label}: {seconds:.2f} s, {total / seconds:,.0f} trials/s, "
                    f"ratio {ratio:.0f}x")
            if target:
                line += f" (target >= 50x)  {'PASS' if ratio >= 50 else 'FAIL'}"
            if wall is not None:
                line += f"  [whole process incl. Python start and imports: {wall:.2f} s]"
            print(line, flush=True)

        port = 6479
        address = f"127.0.0.1:{port}"
        env = {**os.environ, "RAY": str(Path(sys.executable).parent / "ray"),
               "RAY_PORT": str(port), "RAY_NODE_CPUS": str(cpus)}
        started = subprocess.run(["bash", str(REPO / "cluster" / "local.sh"), "start", "0"],
                                 env=env, capture_output=True, text=True)
        if started.returncode != 0:
            raise SystemExit(f"cluster/local.sh start failed (a cluster already on port {port}? "
                             f"RAY_PORT={port} cluster/local.sh stop):\n{started.stderr[-2000:]}")
        keep = ["--address", address, "--keep-warm", "120", "--games", str(games),
                "--trials", str(args.trials)]
        try:
            (first,), wall = child(["--child", str(tmp / "first"), *keep])
            report("first run on the new cluster (starts the warm pool)", first, wall)
            warms, steadies = [], []
            for k in range(args.repeats):
                (warm, steady), _ = child(["--child", str(tmp / f"warm{k}"), "--runs", "2", *keep])
                warms.append(warm)
                steadies.append(steady)
            print("warm runs: " + ", ".join(f"{w:.2f} s" for w in warms) + "; steady runs: "
                  + ", ".join(f"{w:.2f} s" for w in steadies))
            report(f"warm (new driver process, pool warm; median of {args.repeats})",
                   statistics.median(warms), target=True)
            report(f"steady (second run, same process; median of {args.repeats})",
                   statistics.median(steadies))
            (tasks,), wall = child(["--child", str(tmp / "tasks"), "--address", address,
                                    "--games", str(games), "--trials", str(args.trials)])
            report("tasks (new driver, keep_warm=0: Ray starts the job's workers)", tasks,
                   wall)
        finally:
            subprocess.run(["bash", str(REPO / "cluster" / "local.sh"), "stop"], env=env,
                           capture_output=True)
        size = sum(p.stat().st_size for p in (tmp / "warm0" / "run0").rglob("*.parquet"))
        print(f"parquet written per run: {size / 1e6:.1f} MB")
        if not args.no_cold:
            (cold,), wall = child(["--child", str(tmp / "cold"), "--games", str(games),
                                   "--trials", str(args.trials)])
            report("cold (starts its own Ray)", cold, wall)
    rate = parse_rate(200_000 if not args.quick else 50_000)
    print(f"\ntext path: {rate:,.0f} answers parsed per second ('Action: k', one core)")


if __name__ == "__main__":
    main()
