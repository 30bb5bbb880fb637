"""Benchmark of adaptive against uniform tournament scheduling on a planted order.

Six players with known Bradley–Terry strengths (``--strengths``, default 1.5, 0.9, 0.3, -0.3,
-0.9, -1.5: adjacent players 0.6 apart, the stronger winning 65% of their games) play in
rounds; in a round a scheduled pair plays blocks of ``--round-instances`` instances in both
seat orders (two games each), each game drawn from the planted probabilities (the dummy path:
no family, so the figures measure the schedule alone). Both schedules stop by the same rule as
``distbench tournament --adaptive``: every adjacent pair of ranks separated at
``--confidence`` (its bootstrap difference interval excludes 0), or ``--max-matches`` games.

- **uniform**: every round, one block of each of the 15 pairs;
- **adaptive**: round 0 the same, then
  :func:`distbench.engine.tournament.allocate_round` (one block per adjacent pair of ranks not
  separated yet, handed to them in proportion to how far their difference interval's lower end
  lies below 0).

Same seeds, same games: as in a real tournament, where round ``r``'s block ``k`` of a pair
plays the instances of its own seed whichever schedule asked for it, the games of pair
``(i, j)`` in round ``r``, block ``k`` are drawn from ``SeedSequence([seed, 28, i, j, r, k])``
in both schedules (common random numbers). Prints per seed the games played at the stop,
whether the stop was a separation and the ranking the planted order, the ratio adaptive /
uniform per seed and of the totals (the issue's target: at most 0.5).

Usage::

    python benchmarks/bench_tournament.py             # 20 seeds (about a minute)
    python benchmarks/bench_tournament.py --quick     # 5 seeds
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from distbench.engine.tournament import (  # noqa: E402
    allocate_round,
    separation,
    stop_reason,
)


def play(seed: int, round_index: int, theta: np.ndarray, pairs: list[tuple[int, int]],
         instances: int) -> tuple[list[int], list[int], list[float]]:
    """Every block of ``pairs`` (a pair may repeat: one block each time) plays ``instances``
    instances in both seat orders, drawn from the block's own stream."""
    a, b, o = [], [], []
    blocks: dict[tuple[int, int], int] = {}
    for i, j in pairs:
        k = blocks.get((i, j), 0)
        blocks[(i, j)] = k + 1
        rng = np.random.default_rng([seed, 28, i, j, round_index, k])
        p = 1.0 / (1.0 + math.exp(-(theta[i] - theta[j])))
        draws = rng.random((instances, 2))
        for inst in range(instances):
            for order, (first, second) in enumerate(((i, j), (j, i))):
                win_i = draws[inst, order] < p
                a.append(first)
                b.append(second)
                o.append(float(win_i if first == i else not win_i))
    return a, b, o


def run(theta: np.ndarray, seed: int, adaptive: bool, instances: int, confidence: float,
        max_matches: int, resamples: int) -> tuple[int, bool, bool, int]:
    """(games at the stop, separated, ranking == planted order, rounds)."""
    n = theta.size
    every = [(i, j) for i in range(n) for j in range(i + 1, n)]
    a: list[int] = []
    b: list[int] = []
    o: list[float] = []
    pairs = every
    rounds = 0
    labels = tuple(f"p{k}" for k in range(n))
    while True:
        da, db, do = play(seed, rounds, theta, pairs, instances)
        a += da
        b += db
        o += do
        rounds += 1
        state = separation(n, np.array(a), np.array(b), np.array(o), seed=seed,
                           confidence=confidence, resamples=resamples)
        if stop_reason(state, len(a), max_matches, labels, confidence):
            planted = list(np.argsort(-theta))
            return len(a), state.separated, state.order == planted, rounds
        pairs = allocate_round(state) if adaptive else every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strengths", default="1.5,0.9,0.3,-0.3,-0.9,-1.5")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--round-instances", type=int, default=2)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--max-matches", type=int, default=20_000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="5 seeds")
    args = parser.parse_args()
    theta = np.array([float(x) for x in args.strengths.split(",")])
    seeds = range(5 if args.quick else args.seeds)
    print(f"date: {datetime.datetime.now(datetime.UTC):%a %b %d %H:%M:%S UTC %Y}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; python {platform.python_version()}")
    print(f"strengths {theta.tolist()}, {args.round_instances} instances x 2 seat orders per "
          f"pair and round, confidence {args.confidence}, {args.resamples} resamples, "
          f"max {args.max_matches:,} games")
    print(f"{'seed':>4} {'uniform':>8} {'rounds':>6} {'adaptive':>8} {'rounds':>6} "
          f"{'ratio':>6}  separated(u/a) planted order(u/a)")
    ratios, u_all, a_all = [], [], []
    start = time.perf_counter()
    for seed in seeds:
        u = run(theta, seed, False, args.round_instances, args.confidence, args.max_matches,
                args.resamples)
        ad = run(theta, seed, True, args.round_instances, args.confidence, args.max_matches,
                 args.resamples)
        ratio = ad[0] / u[0]
        ratios.append(ratio)
        u_all.append(u)
        a_all.append(ad)
        print(f"{seed:>4} {u[0]:>8,} {u[3]:>6} {ad[0]:>8,} {ad[3]:>6} {ratio:>6.2f}  "
              f"{u[1]!s:>5}/{ad[1]!s:<5}      {u[2]!s:>5}/{ad[2]!s:<5}")
    u_total = sum(u[0] for u in u_all)
    a_total = sum(x[0] for x in a_all)
    over = [s for s, r in zip(seeds, ratios, strict=True) if r > 0.5]
    print(f"total games: uniform {u_total:,}, adaptive {a_total:,}; ratio of the totals "
          f"{a_total / u_total:.2f}")
    print(f"per seed: median ratio {np.median(ratios):.2f} (mean {np.mean(ratios):.2f}, worst "
          f"{max(ratios):.2f}); seeds above 0.5: {len(over)}/{len(ratios)}"
          + (f" ({', '.join(map(str, over))})" if over else ""))
    print(f"median games: uniform {np.median([u[0] for u in u_all]):,.0f}, adaptive "
          f"{np.median([x[0] for x in a_all]):,.0f}; separated ranking = planted order: "
          f"uniform {sum(u[1] and u[2] for u in u_all)}/{len(u_all)}, adaptive "
          f"{sum(x[1] and x[2] for x in a_all)}/{len(a_all)}")
    print(f"target (ratio of the totals <= 0.5): "
          f"{'met' if a_total <= 0.5 * u_total else 'NOT met'}; "
          f"{time.perf_counter() - start:.1f} s")

if __name__ == "__main__":
    main()
