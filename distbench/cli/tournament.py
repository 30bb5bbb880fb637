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


def _play(plan: Any, run_dir: Path, **kwargs: Any) -> Any:
    from distbench.cli.progress import run_with_progress
    from distbench.engine.driver import RunDirectoryError

    try:
        return run_with_progress(plan, run_dir, command=["distbench", *sys.argv[1:]], **kwargs)
    except RunDirectoryError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(["distbench", *sys.argv[1:]]) from None


def run_tournament(tournament: Any, run_dir: Path, *, parallel: bool | None,
                   num_workers: int | None = None, address: str | None = None) -> Any:
    """Plays (or resumes) a tournament into ``run_dir``, then commits its ratings.

    Returns:
        (the run outcome, the :class:`~distbench.engine.tournament.TournamentRatings`).
    """
    from distbench.engine.tournament import plan_tournament, rate, write_ratings

    run_id = run_dir.name
    try:
        plan = plan_tournament(tournament, run_id)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    outcome = _play(plan, run_dir, parallel=parallel, num_workers=num_workers, address=address)
    result = rate(tournament, run_dir, run_id)
    write_ratings(run_dir, result)
    return outcome, result


def run_adaptive(tournament: Any, run_dir: Path, *, max_matches: int, parallel: bool | None,
                 num_workers: int | None = None, address: str | None = None) -> Any:
    """Plays an adaptive tournament: round 0 every pair, then rounds whose blocks go to the
    adjacent ranks not separated yet, more to those further from it
    (:func:`~distbench.engine.tournament.allocate_round`), until the adjacent ranks are
    separated or ``max_matches`` games were played (the round that crosses it is played
    whole). Deterministic by seed: the schedule
    is a function of the results, so a resume replays it, skipping committed shards.

    Returns:
        (the last round's outcome, the ratings, the stop line, rounds played).
    """
    from distbench.engine.tournament import (
        allocate_round,
        plan_schedule,
        rate_matches,
        read_matches,
        separation,
        stop_reason,
        write_ratings,
    )

    run_id = run_dir.name
    adaptive = {"round_instances": tournament.settings.num_instances,
                "max_matches": max_matches}
    schedule = [tournament.pairs()]
    executed = skipped = 0
    while True:
        plan = plan_schedule(tournament, schedule, run_id, adaptive)
        outcome = _play(plan, run_dir, parallel=parallel, num_workers=num_workers,
                        address=address)
        executed += outcome.executed
        a, b, result, margin = read_matches(tournament, run_dir,
                                            {shard.shard_id for shard in plan.shards})
        state = separation(len(tournament.labels), a, b, result,
                           seed=tournament.settings.seed, confidence=tournament.confidence,
                           resamples=tournament.resamples)
        reason = stop_reason(state, len(a), max_matches, tournament.labels,
                             tournament.confidence)
        pairs = allocate_round(state)
        click.echo(f"round {len(schedule) - 1}: {len(schedule[-1])} block(s) played, "
                   f"{len(a):,} games in all; "
                   + ("stop" if reason else f"next: {len(pairs)} block(s) for "
                      f"{len(set(pairs))} adjacent pair(s) of ranks not separated"), err=True)
        if reason:
            break
        schedule.append(pairs)
    skipped = outcome.skipped
    ratings = rate_matches(tournament.labels, tournament.family.name, run_id, a, b, result,
                           margin, seed=tournament.settings.seed,
                           resamples=tournament.resamples, confidence=tournament.confidence)
    write_ratings(run_dir, ratings)
    return executed, skipped, ratings, reason, len(schedule)


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
@click.option("--adaptive", is_flag=True,
              help="Schedule in rounds of --num-instances instances: first every pair, then "
                   "only the adjacent ranks whose intervals overlap (the interval of their "
                   "difference contains 0), until every adjacent pair of ranks is separated "
                   "at --confidence or --max-matches games were played.")
@click.option("--max-matches", type=click.IntRange(min=1), default=2000, show_default=True,
              help="With --adaptive: stop after the round that reaches this many games.")
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
               adaptive: bool, max_matches: int, run_id: str | None, output_dir: Path, parallel: bool | None,
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
    if adaptive:
        executed, skipped, result, reason, rounds = run_adaptive(
            tour, run_dir, max_matches=max_matches, parallel=parallel,
            num_workers=num_workers, address=address)
        click.echo(format_ranking(result.ratings))
        click.echo(f"\nstopped after {rounds} round(s): {reason}")
        click.echo(f"{executed} shard(s) run. Results: {run_dir}", err=True)
        return
    outcome, result = run_tournament(tour, run_dir, parallel=parallel,
                                     num_workers=num_workers, address=address)
    click.echo(format_ranking(result.ratings))
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
