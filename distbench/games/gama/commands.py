"""The gama family's subcommands of the CLI's shared groups (``Play.shared``):
``distbench import gama`` (GAMA-Bench's ``raw_results`` folder as a run, :mod:`.importer`) and
``distbench suite gama`` (GAMA-Bench's leaderboard protocol and its table, :mod:`.board`).
They parse and print; the CLI's :class:`~distbench.games.family.CommandServices` check the run
folder, preflight the models and play with the progress line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from distbench.errors import UserError
from distbench.games.family import CommandServices

_OUTPUT_DIR = click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
                           default=Path("results"), show_default=True,
                           help="Folder of run folders.")


def import_command(services: CommandServices) -> click.Command:
    """``distbench import gama``."""

    @click.command(name="gama")
    @click.argument("raw_results", type=click.Path(path_type=Path))
    @click.option("--run-id", required=True, help="Run folder name (re-running it resumes).")
    @_OUTPUT_DIR
    def gama(raw_results: Path, run_id: str, output_dir: Path) -> None:
        """GAMA-Bench's RAW_RESULTS folder (its JSON records, read unchanged) as a run of the
        gama family, every game scored by distbench's code (query gama_games, gama_rounds,
        gama_moves, gama_players)."""
        from distbench.games.gama.importer import RunExistsError, import_folder
        from distbench.games.gama.records import RecordError

        services.run_folder(output_dir, run_id)
        try:
            result = import_folder(raw_results, output_dir, run_id)
        except (RecordError, RunExistsError) as exc:
            raise UserError(f"import gama: {exc}") from None
        click.echo(f"imported {result.records} GAMA-Bench records ({result.games} games, "
                   f"{result.scored} scored) from {result.shards} folders "
                   f"({result.imported} written now) into {result.run_dir}")

    return gama


def suite_command(services: CommandServices) -> click.Command:
    """``distbench suite gama``."""

    @click.command(name="gama")
    @click.option("--players", required=True, metavar="M1,M2,...",
                  help="The models, each as PROVIDER[:MODEL]; each plays every game at a table "
                       "of ten seats of itself (GAMA-Bench's leaderboard setting).")
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
    @click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None,
                  help="Requests per minute allowed, each model (default: its provider's).")
    @click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None,
                  help="Tokens per minute allowed, each model (default: its provider's).")
    @click.option("--run-id", default=None, help="Run folder name (re-running it resumes).")
    @_OUTPUT_DIR
    @click.option("--parallel/--no-parallel", default=None,
                  help="Run shards as Ray tasks, or one by one in this process.  [default: "
                       "auto]")
    @click.option("--num-workers", type=click.IntRange(min=1), default=None,
                  help="Concurrent shards (Ray CPUs).  [default: every shard at once, at "
                       "least the CPUs]")
    def gama(players: str, runs: int, reask: int, seed: int, llm_seed: int,
             temperature: float, max_tokens: int | None, base_url: str | None,
             rpm: float | None, tpm: float | None,
             run_id: str | None, output_dir: Path, parallel: bool | None,
             num_workers: int | None) -> None:
        """Play GAMA-Bench's eight games, RUNS each, ten seats of each model, and print GAMA's
        table (per-game cells and Overall, 0-100) with 95% intervals."""
        from distbench.games.gama.board import board, format_board, suite_configs, suite_plan
        from distbench.llm.base import BackendUnavailable
        from distbench.llm.registry import UnknownProviderError, make_spec, resolve_spec
        from distbench.store.catalog import open_run

        try:
            options = {"base_url": base_url, "rpm": rpm, "tpm": tpm}
            models = []
            for text in (t.strip() for t in players.split(",") if t.strip()):
                provider, _, model = text.partition(":")
                models.append(resolve_spec(make_spec(provider, model or None, **options)))
            configs = suite_configs(models, runs=runs, seeds=(seed,), reask=reask,
                                    llm_seed=llm_seed, temperature=temperature,
                                    max_tokens=max_tokens)
            for model in dict.fromkeys(models):
                services.preflight(model)
        except (UnknownProviderError, BackendUnavailable, ValueError) as exc:
            raise UserError(str(exc)) from None
        run_dir = services.run_folder(
            output_dir, run_id or f"suite-gama-{time.strftime('%Y%m%d-%H%M%S')}")
        plan = suite_plan(configs, run_dir.name)
        workers = num_workers or max(os.cpu_count() or 1, len(plan.shards))
        outcome = services.play(plan, run_dir, parallel=parallel, num_workers=workers)
        con = open_run(outcome.run_dir, threads=1)
        try:
            click.echo(format_board(board(con)))
        finally:
            con.close()
        click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
                   f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)

    return gama
