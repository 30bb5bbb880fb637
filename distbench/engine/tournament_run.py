"""Playing a tournament: plain (every pairing once) or adaptive (rounds until the adjacent ranks
are separated), with budget stops, then rating it.

The caller hands in how a plan is played (``play(plan, run_dir) -> outcome``, e.g. with a
progress line; the outcome has ``executed``, ``skipped`` and ``budget_reached``) and where the
round lines go (``note``), so the CLI parses and prints while the orchestration lives here,
the same for every family and for every command that plays a tournament.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.engine.tournament import (
    SEPARATION_TOL,
    Tournament,
    TournamentRatings,
    allocate_round,
    plan_schedule,
    plan_tournament,
    rate,
    rate_matches,
    read_matches,
    separation,
    stop_reason,
    write_ratings,
)
from distbench.games.base import RunPlan

Play = Callable[[RunPlan, Path], Any]
"""Plays (or resumes) a plan into a run folder and returns its outcome."""


def play_tournament(tournament: Tournament, run_dir: Path, play: Play
                    ) -> tuple[Any, TournamentRatings]:
    """Plays (or resumes) a tournament into ``run_dir``, then commits its ratings (of the games
    committed: all of them, or those played before the budget stopped the run).

    Returns:
        (the run outcome, the ratings); the outcome's ``budget_reached`` says whether the
        budget stopped it.

    Raises:
        ValueError: the tournament cannot be planned (one line).
    """
    run_id = run_dir.name
    outcome = play(plan_tournament(tournament, run_id), run_dir)
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


@dataclass(frozen=True)
class AdaptiveResult:
    """How an adaptive tournament ended.

    Attributes:
        executed: Shards executed over every round.
        skipped: Shards of the last round already committed.
        ratings: The ratings of the games played (None: none was).
        reason: Why it stopped, in words.
        rounds: Rounds played.
        budget: The budget figures when the budget stopped it, else None.
    """

    executed: int
    skipped: int
    ratings: TournamentRatings | None
    reason: str
    rounds: int
    budget: dict[str, Any] | None


def play_adaptive(tournament: Tournament, run_dir: Path, play: Play, *, max_matches: int,
                  note: Callable[[str], None] = lambda line: None) -> AdaptiveResult:
    """Plays an adaptive tournament: round 0 every pair, then rounds whose blocks go to the
    adjacent ranks not separated yet, more to those further from it
    (:func:`~distbench.engine.tournament.allocate_round`), until the adjacent ranks are
    separated, ``max_matches`` games were played (the round that crosses it is played whole),
    or the budget (``play``'s: the whole tournament's, every round's spend counted) admits no
    more shards: the shards in flight finish and are rated. Deterministic by seed: the
    schedule is a function of the results, so a resume replays it, skipping committed shards
    (a larger budget continues where the budget stopped it). ``note`` gets one line per
    round."""
    if tournament.family.tournaments.table is not None:
        raise ValueError(f"--adaptive: the {tournament.family.name} family plays n-seat tables "
                         "(adaptive rounds pick pairs); play it without --adaptive")
    run_id = run_dir.name
    adaptive = {"round_instances": tournament.settings.num_instances,
                "max_matches": max_matches}
    schedule = [tournament.pairs()]
    executed = 0
    budget = None
    while True:
        plan = plan_schedule(tournament, schedule, run_id, adaptive)
        outcome = play(plan, run_dir)
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
            reason = _budget_reason(tournament, state, budget, len(schedule) - 1, len(a))
        pairs = allocate_round(state) if reason is None else []
        note(f"round {len(schedule) - 1}: {len(schedule[-1])} block(s) played, "
             f"{len(a):,} games in all; "
             + ("stop" if reason else f"next: {len(pairs)} block(s) for "
                f"{len(set(pairs))} adjacent pair(s) of ranks not separated"))
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
    return AdaptiveResult(executed, outcome.skipped, ratings, reason, len(schedule), budget)


def _budget_reason(tournament: Tournament, state: Any, budget: dict[str, Any], round_index: int,
                   games: int) -> str:
    left = budget.get("shards_left", 0)
    open_gaps = "; ".join(
        f"{tournament.labels[h]} vs {tournament.labels[lo]} [{low:+.2f}, {high:+.2f}]"
        for h, lo, low, high in state.gaps if not low > SEPARATION_TOL)
    return (f"budget: {budget_line(budget)} in round {round_index} ({left} shard(s) of it not "
            f"sent), {games:,} games, with adjacent ranks not separated at "
            f"{round(100 * tournament.confidence)}%: {open_gaps}")
