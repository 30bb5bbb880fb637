"""``distbench fog``: commands of the fog-of-war family (``tournament``: round robin of tiers
and users' agent classes; ``study``: the benchmark metrics)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from distbench.cli.errors import UserError, interrupted
from distbench.cli.options import check_run_id, make_output_dir, output_dir_option


def format_gradient(gradient: list[dict], verdict: str) -> str:
    """The tier-gradient table and its verdict (``gradient_verdict``: read from the 95%
    Wilson intervals of the adjacent tiers, never from the point estimates) as text."""
    from distbench.games.fog.metrics import adjacent_pairs

    width = max([18] + [len(f"{g['higher']} vs {g['lower']}") for g in gradient])
    lines = [f"{'pairing':<{width}} {'games':>6} {'higher-tier score':>18} {'95% CI':>16}"]
    for g in gradient:
        pair = f"{g['higher']} vs {g['lower']}"
        ci = "[{:.3f}, {:.3f}]".format(g["ci_low"], g["ci_high"])
        lines.append(f"{pair:<{width}} {g['games']:>6} {g['score_rate']:>18.3f} {ci:>16}")

    def pairs(keep) -> str:
        return "; ".join(f"{g['higher']} vs {g['lower']} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]"
                         for g in adjacent_pairs(gradient) if keep(g))

    if verdict == "holds":
        line = "HOLDS (every adjacent tier's 95% interval lies above 0.5)"
    elif verdict == "fails":
        line = "FAILS (interval below 0.5: " + pairs(lambda g: g["ci_high"] < 0.5) + ")"
    elif adjacent_pairs(gradient):
        line = ("NOT SHOWN (inconclusive, interval contains 0.5: "
                + pairs(lambda g: not g["ci_low"] > 0.5) + ")")
    else:
        line = "NOT SHOWN (no pair of adjacent tiers)"
    lines.append("tier gradient: " + line)
    return "\n".join(lines)


@click.group()
def fog() -> None:
    """Fog-of-war skirmish: hidden powers, noisy scouting, belief telemetry."""


@fog.command()
@click.option("--games-per-pairing", type=int, required=True,
              help="Games per pair of tiers (half in each seat order).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the games.")
@click.option("--scout-accuracy", type=float, default=0.7, show_default=True,
              help="Probability that a scout reveals the exact power.")
@click.option("--no-scouting", is_flag=True, help="Play without Scout orders.")
@click.option("--run-id", default=None,
              help="Run folder name (re-running it resumes).  [default: "
                   "fog-tournament-<timestamp>]")
@output_dir_option
@click.option("--parallel/--no-parallel", default=None,
              help="Run shards as Ray tasks, or one by one in this process.")
@click.option("--agents", default="tier1,tier2,tier3,tier4", show_default=True,
              help="Who plays the round robin (comma list): tiers, mock:TIER (a tier "
                   "through the text interface), and agent classes as module:Class.")
@click.option("--agent", "extra", multiple=True, metavar="MODULE:CLASS",
              help="Your agent class, added to --agents (repeatable); its module must be "
                   "importable (on PYTHONPATH), here and on every worker.")
def tournament(games_per_pairing: int, seed: int, scout_accuracy: float, no_scouting: bool,
               run_id: str | None, output_dir: Path, parallel: bool | None, agents: str,
               extra: tuple[str, ...]) -> None:
    """Round robin (both seat orders) of the four scripted tiers, or of the agents given
    (tiers and your own agent classes), with the tier gradient."""
    import math

    from distbench.cli.tournament import run_tournament
    from distbench.engine.tournament import Tournament, format_ranking
    from distbench.games.base import PairingSettings
    from distbench.games.fog.metrics import gradient_verdict, tier_gradient
    from distbench.games.registry import get_family
    from distbench.store.catalog import open_run

    if games_per_pairing < 1:
        raise UserError(f"--games-per-pairing must be at least 1, got {games_per_pairing}")
    if seed < 0:
        raise UserError(f"--seed must be non-negative, got {seed}")
    if not 0.0 <= scout_accuracy <= 1.0:
        raise UserError(f"--scout-accuracy must be in [0, 1], got {scout_accuracy}")
    run_id = check_run_id(run_id or f"fog-tournament-{time.strftime('%Y%m%d-%H%M%S')}")
    players = tuple(dict.fromkeys([a.strip() for a in agents.split(",") if a.strip()]
                                  + [a.strip() for a in extra]))
    if len(players) < 2:
        raise UserError(f"a round robin needs at least two agents, got {', '.join(players) or 'none'}")
    # the same machinery as `distbench tournament --family fog`: every pair in both seat
    # orders on the same games, half of --games-per-pairing (rounded up) in each
    settings = PairingSettings(num_instances=math.ceil(games_per_pairing / 2), seed=seed,
                               options={"scout_accuracy": scout_accuracy,
                                        "scouting": not no_scouting})
    try:
        tour = Tournament.build(get_family("fog"), list(players), settings)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    run_dir = make_output_dir(output_dir) / run_id
    outcome, result = run_tournament(tour, run_dir, parallel=parallel)
    con = open_run(run_dir)
    try:
        rows = [dict(zip(("agent_a", "agent_b", "winner"), r, strict=True)) for r in
                con.execute("select agent_a, agent_b, winner from fog_games").fetchall()]
    finally:
        con.close()
    gradient = tier_gradient(rows)
    click.echo(format_gradient(gradient, gradient_verdict(gradient)))
    click.echo("\n" + format_ranking(result.ratings))
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)


@fog.command()
@click.option("--games-per-pairing", type=click.IntRange(min=2), default=100, show_default=True,
              help="Games per pair of tiers and condition (half in each seat order).")
@click.option("--accuracies", default="0.4,0.7,1.0", show_default=True,
              help="Scout accuracies to compare (comma list); scouting off is added.")
@click.option("--reference-accuracy", type=click.FloatRange(0, 1), default=None,
              help="Accuracy whose games measure the scouting value.  [default: the middle one]")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--run-id", required=True, help="Run folder name (re-running it resumes).")
@output_dir_option
@click.option("--parallel/--no-parallel", default=None,
              help="Run shards as Ray tasks, or here.  [default: auto, by the work]")
def study(games_per_pairing: int, accuracies: str, reference_accuracy: float | None, seed: int,
          run_id: str, output_dir: Path, parallel: bool | None) -> None:
    """Round robins of the tiers under several scouting conditions, then the benchmark metrics:
    tier gradient per condition, scouting value, belief quality vs winning, anti-calculability."""
    import json

    from distbench.cli.progress import run_with_progress
    from distbench.engine.driver import RunDirectoryError
    from distbench.games.fog.study import STUDY_SQL, plan_study, study_metrics
    from distbench.store.catalog import open_run

    try:
        accs = tuple(dict.fromkeys(float(a) for a in accuracies.split(",") if a.strip()))
    except ValueError:
        raise UserError(f"--accuracies: expected numbers such as 0.4,0.7,1.0, got {accuracies!r}") from None
    if not accs or any(not 0 <= a <= 1 for a in accs):
        raise UserError(f"--accuracies: give numbers from 0 to 1, got {accuracies!r}")
    reference = reference_accuracy if reference_accuracy is not None else sorted(accs)[len(accs) // 2]
    if reference not in accs:
        raise UserError(f"--reference-accuracy {reference:g} is not one of --accuracies")
    check_run_id(run_id)
    run_dir = make_output_dir(output_dir) / run_id
    try:
        outcome = run_with_progress(plan_study(games_per_pairing, seed, accs, run_id), run_dir,
                                    parallel=parallel, command=["distbench", *sys.argv[1:]])
    except RunDirectoryError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(["distbench", *sys.argv[1:]]) from None
    con = open_run(run_dir, threads=1)
    try:
        result = con.execute(STUDY_SQL)
        columns = [d[0] for d in result.description]
        rows = [dict(zip(columns, r, strict=True)) for r in result.fetchall()]
    finally:
        con.close()
    metrics = study_metrics(rows, reference)
    for key, g in metrics["tier_gradient"].items():
        click.echo(f"== {key}")
        click.echo(format_gradient(g["pairs"], g["verdict"]))
    click.echo(f"\nscouting value (score with scouting at accuracy {reference:g} minus without):")
    for tier, value in metrics["scouting_value"].items():
        click.echo(f"  {tier}: {value:+.3f}")
    click.echo(f"belief quality vs winning (corr of -Brier and score, tiers 3-4): "
               f"{metrics['belief_quality_vs_winning']:+.3f}")
    anti = metrics["anti_calculability"]
    edges = ", ".join(f"{a:g}: {e:+.3f}" for a, e in zip(anti["accuracies"], anti["tier4_edge_over_tier3"], strict=True))
    click.echo(f"anti-calculability: tier4 edge over tier3 by accuracy ({edges}); slope {anti['slope']:+.3f}")
    (run_dir / "study.json").write_text(json.dumps(metrics, indent=2, default=float) + "\n")
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Metrics: {run_dir / 'study.json'}", err=True)
