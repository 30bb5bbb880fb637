"""Several samples per request and batched local decoding, side by side in one run.

1. Against the mock server, a matrix run of ``--games`` games x 20 trials per game (pure mode,
   chat style), three ways: one request per trial (``max_n`` 1, today's path), requests of
   several samples against a server that takes ``n``, and the same against servers that do
   not (one that ignores ``n``, one that rejects it). Printed: requests per trial (counted at
   the server) and prompt tokens billed per trial (the ``calls`` table), and whether every
   trial got its row.
2. The bundled SmolLM2 in process, 16-token answers (pure mode, completion style), 20 trials
   per game: trials per second one request per trial against the trials of a game decoded in
   one llama.cpp batch, alternating the two ``--repeats`` times on the same games.

Usage: python benchmarks/bench_samples.py [--games 10] [--local-games 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

TRIALS = 20


def _config(spec, games: int) -> MatrixRunConfig:
    return MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=games,
                           num_trials=TRIALS, modes=("pure",), llm=spec, shard_trials=10_000)


def mock_side_by_side(games: int, root: Path) -> list[dict]:
    rows = []
    for label, n_mode, max_n in (("one request per trial", "serve", 1),
                                 ("n, server takes n", "serve", 128),
                                 ("n, server ignores n", "ignore", 128),
                                 ("n, server rejects n", "reject", 128)):
        with start_server(ServerConfig(n_mode=n_mode)) as server:
            spec = make_spec("llamacpp", "mock", "chat", base_url=server.url, rpm=None,
                             max_concurrency=8, cache=False, max_n=max_n)
            t0 = time.perf_counter()
            out = run_config(_config(spec, games), root / label.replace(" ", "_").replace(",", ""),
                             parallel=False)
            elapsed = time.perf_counter() - t0
            posts = sum(v for k, v in server.stats()["by_path"].items() if k.startswith("/v1/c"))
        con = open_run(out.run_dir)
        trials, ok = con.execute("select count(*), count(*) filter (where parse_status='ok') "
                                 "from trials").fetchone()
        billed = con.execute("select sum(prompt_tokens) from calls").fetchone()[0]
        rows.append({"path": label, "trials": trials, "valid": ok, "requests": posts,
                     "requests_per_trial": posts / trials, "prompt_tokens_per_trial": billed / trials,
                     "elapsed_s": elapsed})
    return rows


def local_side_by_side(games: int, repeats: int, root: Path) -> list[dict] | None:
    from distbench.llm.local import local_available, shared_model

    if not local_available():
        return None
    shared_model().warm_up()
    totals = {1: [0, 0.0], 32: [0, 0.0]}
    for r in range(repeats):
        for max_n in (1, 32):
            spec = make_spec("local", cache=False, max_n=max_n)
            t0 = time.perf_counter()
            out = run_config(_config(spec, games), root / f"local_{max_n}_{r}", parallel=False)
            elapsed = time.perf_counter() - t0
            trials = open_run(out.run_dir).execute("select count(*) from trials").fetchone()[0]
            totals[max_n][0] += trials
            totals[max_n][1] += elapsed
    return [{"path": "one request per trial" if n == 1 else "batched (max_n 32)",
             "trials": t, "elapsed_s": e, "calls_per_s": t / e} for n, (t, e) in totals.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--local-games", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}, load average {load:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"\n1. mock server, {args.games} games x {TRIALS} trials (pure, chat)")
        base = None
        for row in mock_side_by_side(args.games, root):
            base = base or row["prompt_tokens_per_trial"]
            print(f"  {row['path']:<24} trials {row['trials']:>4} (valid {row['valid']:>4})  "
                  f"requests/trial {row['requests_per_trial']:.3f}  prompt tokens/trial "
                  f"{row['prompt_tokens_per_trial']:7.1f} ({row['prompt_tokens_per_trial'] / base:.3f} "
                  f"of one per trial)  {row['elapsed_s']:.2f} s")
        print(f"\n2. bundled SmolLM2 in process, {args.local_games} games x {TRIALS} trials, "
              f"16-token answers, {args.repeats} alternating repeats")
        rows = local_side_by_side(args.local_games, args.repeats, root)
        if rows is None:
            print("  (the bundled model is not installed)")
        else:
            for row in rows:
                print(f"  {row['path']:<24} {row['trials']:>4} trials in {row['elapsed_s']:6.1f} s"
                      f"  {row['calls_per_s']:.2f} calls/s")
            print(f"  speed-up: {rows[1]['calls_per_s'] / rows[0]['calls_per_s']:.2f}x")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} at the end")


if __name__ == "__main__":
    main()
