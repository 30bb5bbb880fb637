"""``distbench tournament``: every pair of a population plays both seats of a family on the
same instances; the players are rated (Bradley–Terry with intervals, Elo display, Nash
averaging) and the ranking printed."""

from __future__ import annotations

import json
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
                   num_workers: int | None = None, address: str | None = None,
                   max_cost: float | None = None, max_tokens_total: int | None = None,
                   retry_failed: bool = False) -> Any:
    """Plays (or resumes) a tournament into ``run_dir``, then commits its ratings (of the games
    committed: all of them, or those played before the budget stopped the run).

    Returns:
        (the run outcome, the :class:`~distbench.engine.tournament.TournamentRatings`); the
        outcome's ``budget_reached`` says whether the budget stopped it.
    """
    from distbench.engine.tournament import plan_tournament, rate, write_ratings

    run_id = run_dir.name
    try:
        plan = plan_tournament(tournament, run_id)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    outcome = _play(plan, run_dir, parallel=parallel, num_workers=num_workers, address=address,
                    max_cost=max_cost, max_tokens_total=max_tokens_total,
                    retry_failed=retry_failed)
    result = rate(tournament, run_dir, run_id)
    if result.ratings:
        write_ratings(run_dir, result)
    return outcome, result


def budget_line(figures: dict[str, Any]) -> str:
    """Which budget limit stopped a tournament and how much of it was spent, in words."""
    parts = []
    if figures.get("max_cost_usd") is not None:
        limit = figures["max_cost_usd"]
        shown = f"{limit:,.2f}" if limit >= 0.01 else f"{limit:g}"
        parts.append(f"--max-cost: spent ${figures.get('spent_usd') or 0:,.4f} of ${shown}")
    if figures.get("max_tokens_total") is not None:
        parts.append(f"--max-tokens-total: spent {figures.get('spent_tokens', 0):,} of "
                     f"{figures['max_tokens_total']:,} tokens")
    return "; ".join(parts)


def run_adaptive(tournament: Any, run_dir: Path, *, max_matches: int, parallel: bool | None,
                 num_workers: int | None = None, address: str | None = None,
                 max_cost: float | None = None, max_tokens_total: int | None = None,
                 retry_failed: bool = False) -> Any:
    """Plays an adaptive tournament: round 0 every pair, then rounds whose blocks go to the
    adjacent ranks not separated yet, more to those further from it
    (:func:`~distbench.engine.tournament.allocate_round`), until the adjacent ranks are
    separated, ``max_matches`` games were played (the round that crosses it is played whole),
    or the budget (``max_cost``, ``max_tokens_total``: the whole tournament's, every round's
    spend counted) admits no more shards: the shards in flight finish and are rated.
    Deterministic by seed: the schedule is a function of the results, so a resume replays it,
    skipping committed shards (a larger budget continues where the budget stopped it).

    Returns:
        (shards executed, shards skipped in the last round, the ratings, the stop line, rounds
        played, the budget figures when the budget stopped it, else None).
    """
    from distbench.engine.tournament import (
        SEPARATION_TOL,
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
    executed = 0
    budget = None
    while True:
        plan = plan_schedule(tournament, schedule, run_id, adaptive)
        outcome = _play(plan, run_dir, parallel=parallel, num_workers=num_workers,
                        address=address, max_cost=max_cost, max_tokens_total=max_tokens_total,
                        retry_failed=retry_failed)
        executed += outcome.executed
        a, b, result, margin = read_matches(tournament, run_dir,
                                            {shard.shard_id for shard in plan.shards})
        if outcome.budget_reached is not None and not len(a):
            budget = outcome.budget_reached
            reason = f"budget: {budget_line(budget)}; no game was played within it"
            break
        state = separation(len(tournament.labels), a, b, result,
                           seed=tournament.settings.seed, confidence=tournament.confidence,
                           resamples=tournament.resamples)
        reason = stop_reason(state, len(a), max_matches, tournament.labels,
                             tournament.confidence)
        if outcome.budget_reached is not None and (reason is None or not state.separated):
            budget = outcome.budget_reached
            left = budget.get("shards_left", 0)
            open_gaps = "; ".join(
                f"{tournament.labels[h]} vs {tournament.labels[lo]} [{low:+.2f}, {high:+.2f}]"
                for h, lo, low, high in state.gaps if not low > SEPARATION_TOL)
            reason = (f"budget: {budget_line(budget)} in round {len(schedule) - 1} "
                      f"({left} shard(s) of it not sent), {len(a):,} games, with adjacent "
                      f"ranks not separated at {round(100 * tournament.confidence)}%: "
                      f"{open_gaps}")
        pairs = allocate_round(state) if reason is None else []
        click.echo(f"round {len(schedule) - 1}: {len(schedule[-1])} block(s) played, "
                   f"{len(a):,} games in all; "
                   + ("stop" if reason else f"next: {len(pairs)} block(s) for "
                      f"{len(set(pairs))} adjacent pair(s) of ranks not separated"), err=True)
        if reason:
            break
        schedule.append(pairs)
    ratings = None
    if len(a):
        ratings = rate_matches(tournament.labels, tournament.family.name, run_id, a, b, result,
                               margin, seed=tournament.settings.seed,
                               resamples=tournament.resamples,
                               confidence=tournament.confidence)
        write_ratings(run_dir, ratings)
    return executed, outcome.skipped, ratings, reason, len(schedule), budget


def _family_options(items: tuple[str, ...]) -> dict[str, Any]:
    """``--option NAME=VALUE`` entries as a dict (VALUE as JSON when it parses, else text)."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"--option {item!r}: expected NAME=VALUE (e.g. game=tic_tac_toe)")
        if name in out:
            raise UserError(f"--option {name} is given twice")
        try:
            out[name] = json.loads(text)
        except ValueError:
            out[name] = text
    return out


@click.command()
@click.option("--family", required=True,
              help="The game family whose seats the players fill (negotiation, fog, "
                   "bimatrix, repeated, openspiel).")
@click.option("--players", required=True,
              help="The population (comma list): models as PROVIDER[:MODEL] "
                   "(local:smollm2-135m, openai:gpt-4o-mini, ...) and the family's scripted "
                   "players as anchors (negotiation: scripted:fair|greedy|random; fog: "
                   "tier1..tier4; bimatrix: eq|uniform|maxmin|class; repeated: axelrod "
                   "strategies such as TitForTat; openspiel: solver|random|mcts).")
@click.option("--option", "family_options", multiple=True, metavar="NAME=VALUE",
              help="A setting of the family's games, repeatable (VALUE read as JSON when it "
                   "parses, else as text): negotiation mode, lang; fog scout_accuracy, "
                   "scouting; bimatrix sets, mode; repeated stage, rounds, continuation, "
                   "max_rounds; openspiel game (e.g. game=tic_tac_toe), mcts_simulations.")
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
              help="Schedule in rounds of blocks of --num-instances instances: first every "
                   "pair, then one block per adjacent pair of ranks not separated yet (the "
                   "interval of their difference contains 0), handed out in proportion to how "
                   "far each is from separating, until every adjacent pair of ranks is "
                   "separated at --confidence, --max-matches games were played, or the budget "
                   "(--max-cost, --max-tokens-total) is reached.")
@click.option("--max-matches", type=click.IntRange(min=1), default=2000, show_default=True,
              help="With --adaptive: stop after the round that reaches this many games.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Stop sending games before the tournament's spend (the endpoints' token "
                   "counts at --price, every round and earlier attempts included) could cross "
                   "USD: games in flight finish, the games played are rated, exit status 4; the "
                   "same command with a larger budget continues it.")
@click.option("--max-tokens-total", type=click.IntRange(min=1), default=None, metavar="N",
              help="As --max-cost, in tokens (prompt + completion) as the endpoints reported "
                   "them.")
@click.option("--price", default=None, metavar="IN,OUT",
              help="Price in USD per million prompt and completion tokens of every model "
                   "player, e.g. 2.5,10 (needed by --max-cost; no price is assumed).")
@click.option("--base-url", default=None,
              help="Base URL of the OpenAI-compatible server answering every model player "
                   "(e.g. a llamacpp: or vllm: player; default: the provider's).")
@click.option("--retry-failed", is_flag=True,
              help="Resuming a tournament: also play again the shards whose model calls "
                   "failed (their games are not rated until then).")
@click.option("--allow-failed-calls", is_flag=True,
              help="Exit 0 even when some model calls failed (their games are left out of "
                   "the ratings either way).  [default: exit status 3 with the command that "
                   "plays them again]")
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
def tournament(family: str, players: str, family_options: tuple[str, ...], num_instances: int, seed: int, llm_seed: int,
               temperature: float, max_tokens: int | None, resamples: int, confidence: float,
               adaptive: bool, max_matches: int, max_cost: float | None,
               max_tokens_total: int | None, price: str | None, base_url: str | None,
               retry_failed: bool, allow_failed_calls: bool, run_id: str | None, output_dir: Path, parallel: bool | None,
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
                               temperature=temperature, max_tokens=max_tokens,
                               options=_family_options(family_options))
    try:
        tour = Tournament.build(fam, texts, settings, resamples=resamples,
                                confidence=confidence)
        tour = tour.with_model_options(**_price(price), base_url=base_url)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    run_id = check_run_id(run_id or f"tournament-{family}-{time.strftime('%Y%m%d-%H%M%S')}")
    run_dir = make_output_dir(output_dir) / run_id
    click.echo(f"run {run_id}: {family} tournament of {len(tour.labels)} players "
               f"({', '.join(tour.labels)})", err=True)
    budget = {"max_cost": max_cost, "max_tokens_total": max_tokens_total,
              "retry_failed": retry_failed}
    if adaptive:
        executed, _, result, reason, rounds, reached = run_adaptive(
            tour, run_dir, max_matches=max_matches, parallel=parallel,
            num_workers=num_workers, address=address, **budget)
        if result is not None:
            click.echo(format_ranking(result.ratings))
        click.echo(f"\nstopped after {rounds} round(s): {reason}")
        click.echo(f"{executed} shard(s) run. Results: {run_dir}", err=True)
        if reached is not None:
            raise _budget_stop(reached, executed, run_dir)
        _check_calls(run_dir, allow_failed_calls)
        return
    outcome, result = run_tournament(tour, run_dir, parallel=parallel,
                                     num_workers=num_workers, address=address, **budget)
    click.echo(format_ranking(result.ratings))
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
    click.echo(f'Query them: distbench query {outcome.run_dir} "select * from ratings"',
               err=True)
    if outcome.budget_reached is not None:
        raise _budget_stop(outcome.budget_reached, outcome.executed, run_dir)
    _check_calls(run_dir, allow_failed_calls)


def _check_calls(run_dir: Path, allow_failed: bool) -> None:
    """Failed model calls of the whole tournament (every round): their games are not rated;
    exit status 3 with the command that plays them again, as ``distbench run``."""
    from distbench.cli.run import check_calls, resume_command
    from distbench.engine.driver import call_health
    from distbench.store.catalog import open_run

    con = open_run(run_dir, threads=1, tables=["calls"])
    try:
        health = call_health(con)
    finally:
        con.close()
    retry = resume_command(sys.argv[1:], run_dir.name)
    check_calls(health, allow_failed=allow_failed,
                retry=retry if "--retry-failed" in retry else [*retry, "--retry-failed"])


def _price(text: str | None) -> dict[str, float]:
    from distbench.cli.run import _price as parse_price

    return parse_price(text)


def _budget_stop(figures: dict[str, Any], executed: int, run_dir: Path) -> Exception:
    """The budget stop of a tournament: one line (which limit, what was spent, the command
    that continues it with a budget covering the rest of the round), exit status 4."""
    from types import SimpleNamespace

    from distbench.cli.run import budget_stop, resume_command

    return budget_stop(SimpleNamespace(budget_reached=figures, executed=executed),
                       resume_command(sys.argv[1:], run_dir.name))
