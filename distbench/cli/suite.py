"""``distbench suite gama``: GAMA-Bench's leaderboard protocol for a list of models, and its
table (:mod:`distbench.games.gama.board`)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.cli.options import check_run_id, make_output_dir, output_dir_option


@click.group(name="suite")
def suite() -> None:
    """Published benchmarks' protocols, played and tabled as they publish them."""


@suite.command(name="gama")
@click.option("--players", required=True, metavar="M1,M2,...",
              help="The models, each as PROVIDER[:MODEL]; each plays every game at a table of "
                   "ten seats of itself (GAMA-Bench's leaderboard setting).")
@click.option("--runs", type=click.IntRange(1, 100), default=5, show_default=True,
              help="Games per game and model (GAMA: five).")
@click.option("--reask", type=click.IntRange(0, 20), default=0, show_default=True,
              help="Re-asks of an invalid answer before it forfeits the game.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True)
@click.option("--llm-seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0), default=1.0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None)
@click.option("--base-url", default=None,
              help="Base URL of the OpenAI-compatible server answering every model.")
@click.option("--run-id", default=None, help="Run folder name (re-running it resumes).")
@output_dir_option
@click.option("--parallel/--no-parallel", default=None,
              help="Run shards as Ray tasks, or one by one in this process.  [default: auto]")
@click.option("--num-workers", type=click.IntRange(min=1), default=None,
              help="Concurrent shards (Ray CPUs).  [default: every shard at once, at least "
                   "the CPUs]")
def gama(players: str, runs: int, reask: int, seed: int, llm_seed: int, temperature: float,
         max_tokens: int | None, base_url: str | None, run_id: str | None, output_dir: Path,
         parallel: bool | None, num_workers: int | None) -> None:
    """Play GAMA-Bench's eight games, RUNS each, ten seats of each model, and print GAMA's
    table (per-game cells and Overall, 0-100) with 95% intervals."""
    from distbench.cli.progress import run_with_progress
    from distbench.engine.driver import preflight
    from distbench.games.gama.board import board, format_board, suite_configs, suite_plan
    from distbench.llm.base import BackendUnavailable
    from distbench.llm.registry import UnknownProviderError, make_spec, resolve_spec
    from distbench.store.catalog import open_run

    try:
        options = {"base_url": base_url} if base_url else {}
        models = []
        for text in (t.strip() for t in players.split(",") if t.strip()):
            provider, _, model = text.partition(":")
            models.append(resolve_spec(make_spec(provider, model or None, **options)))
        configs = suite_configs(models, runs=runs, seeds=(seed,), reask=reask,
                                llm_seed=llm_seed, temperature=temperature,
                                max_tokens=max_tokens)
        for model in dict.fromkeys(models):
            preflight(model, ())
    except (UnknownProviderError, BackendUnavailable, ValueError) as exc:
        raise UserError(str(exc)) from None
    run_id = check_run_id(run_id or f"suite-gama-{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir = make_output_dir(output_dir) / run_id
    plan = suite_plan(configs, run_dir.name)
    workers = num_workers or max(os.cpu_count() or 1, len(plan.shards))
    outcome = run_with_progress(plan, run_dir, parallel=parallel, num_workers=workers,
                                address=None, keep_warm=0.0,
                                command=["distbench", *sys.argv[1:]])
    con = open_run(outcome.run_dir, threads=1)
    try:
        click.echo(format_board(board(con)))
    finally:
        con.close()
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
