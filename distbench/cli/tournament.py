"""``distbench tournament``: every pair of a population plays both seats of a family on the
same instances; the players are rated (Bradley–Terry with intervals, Elo display, Nash
averaging) and the ranking printed."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from distbench.cli.errors import UserError, interrupted
from distbench.cli.options import check_run_id, make_output_dir, output_dir_option


def run_tournament(tournament: Any, run_dir: Path, *, parallel: bool | None,
                   num_workers: int | None = None, address: str | None = None) -> Any:
    """Plays (or resumes) a tournament into ``run_dir``, then commits its ratings.

    Returns:
        (the run outcome, the :class:`~distbench.engine.tournament.TournamentRatings`).
    """
    from distbench.cli.progress import run_with_progress
    from distbench.engine.driver import RunDirectoryError
    from distbench.engine.tournament import plan_tournament, rate, write_ratings

    run_id = run_dir.name
    try:
        plan = plan_tournament(tournament, run_id)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        outcome = run_with_progress(plan, run_dir, parallel=parallel, num_workers=num_workers,
                                    address=address, command=["distbench", *sys.argv[1:]])
    except RunDirectoryError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(["distbench", *sys.argv[1:]]) from None
    result = rate(tournament, run_dir, run_id)
    write_ratings(run_dir, result)
    return outcome, result


@click.command()
@click.option("--family", required=True,
              help="The game family whose seats the players fill (negotiation, fog).")
@click.option("--players", required=True,
              help="The population (comma list): models as PROVIDER[:MODEL] "
                   "(local:smollm2-135m, openai:gpt-4o-mini, ...) and the family's scripted "
                   "players as anchors (negotiation: scripted:fair|greedy|random; fog: "
                   "tier1..tier4).")
@click.option("--num-instances", type=click.IntRange(min=1), default=10, show_default=True,
              help="Instances every pair plays, each in both seat orders.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the instances (the same for every pair).")
@click.option("--llm-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the models' sampling.")
@click.option("--temperature", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Sampling temperature sent to the models.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Completion budget per answer.  [default: the family's]")
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples (over games) of the intervals; 0: none.")
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95,
              show_default=True, help="Confidence level of the intervals.")
@click.option("--run-id", default=None,
              help="Run folder name (re-running it resumes).  [default: "
                   "tournament-<family>-<timestamp>]")
@output_dir_option
@click.option("--parallel/--no-parallel", default=None,
              help="Run shards as Ray tasks, or one by one in this process.  [default: auto]")
@click.option("--num-workers", type=click.IntRange(min=1), default=None,
              help="CPUs of the local Ray instance.  [default: all]")
@click.option("--address", default=None,
              help="Existing Ray cluster to use ('auto', HOST:PORT or ray://HOST:PORT).")
def tournament(family: str, players: str, num_instances: int, seed: int, llm_seed: int,
               temperature: float, max_tokens: int | None, resamples: int, confidence: float,
               run_id: str | None, output_dir: Path, parallel: bool | None,
               num_workers: int | None, address: str | None) -> None:
    """Every pair of PLAYERS plays both seats of FAMILY on the same instances; prints the
    ranking by Bradley–Terry strength with its intervals, the Elo display and Nash averaging,
    and stores the ratings and pairings tables."""
    from distbench.engine.tournament import Tournament, format_ranking
    from distbench.games.base import PairingSettings
    from distbench.games.registry import get_family

    try:
        fam = get_family(family)
    except (KeyError, ValueError) as exc:
        raise UserError(str(exc).strip("'\"")) from None
    texts = [p.strip() for p in players.split(",") if p.strip()]
    settings = PairingSettings(num_instances=num_instances, seed=seed, llm_seed=llm_seed,
                               temperature=temperature, max_tokens=max_tokens)
    try:
        tour = Tournament.build(fam, texts, settings, resamples=resamples,
                                confidence=confidence)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    run_id = check_run_id(run_id or f"tournament-{family}-{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir = make_output_dir(output_dir) / run_id
    outcome, result = run_tournament(tour, run_dir, parallel=parallel,
                                     num_workers=num_workers, address=address)
    click.echo(format_ranking(result.ratings))
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
