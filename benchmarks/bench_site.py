"""``distbench publish --site`` over a synthetic 10^6-trial store: seconds and bytes.

Makes a matrix sweep of ``--trials`` trials (two dummy models, fast path, ``--games`` games per
model, the same games for both, so they meet on every game), then measures in the same process:

- baseline: one DuckDB pass over the store (``count(*)`` and ``avg(quality)`` of the scored
  trials), the least any SQL-built page over these rows costs;
- the site: ``distbench publish RUNS --site DIR`` as the CLI builds it (the joint fit with its
  default 200 bootstrap resamples), its seconds and the site's size on disk.

Usage: python benchmarks/bench_site.py [--trials 1000000] [--games 1000]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from distbench.cli.main import cli
from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.store.catalog import find_runs, open_runs


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args()
    per_model = args.trials // 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        start = time.perf_counter()
        for model in ("a", "b"):
            run_config(MatrixRunConfig(
                buckets=("3x3_midVar_any",), seeds=(42,), num_games=args.games,
                num_trials=per_model // args.games, modes=("pure",),
                llm=make_spec("dummy", model, fast=True), shard_trials=100_000),
                root / f"model-{model}", parallel=False)
        made = time.perf_counter() - start
        runs = find_runs([root])
        start = time.perf_counter()
        con = open_runs(runs, safe=True)
        count, mean = con.execute("SELECT count(*), avg(quality) FROM matrix_scored").fetchone()
        con.close()
        baseline = time.perf_counter() - start
        site = Path(tmp) / "site"
        start = time.perf_counter()
        result = CliRunner().invoke(cli, ["publish", str(root), "--site", str(site)])
        seconds = time.perf_counter() - start
        assert result.exit_code == 0, result.output
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load "
              f"{os.getloadavg()[0]:.2f}; store made in {made:.1f} s")
        print(f"trials: {count:,} (mean quality {mean:.3f})")
        print(f"baseline (one DuckDB pass over the scored trials): {baseline:.2f} s")
        print(f"publish --site: {seconds:.2f} s, site {_size(site) / 1e6:.2f} MB "
              f"(store {_size(root) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
