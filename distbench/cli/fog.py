"""``distbench fog``: commands of the fog-of-war family (``tournament``: round robin of tiers)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from distbench.cli.errors import UserError


def format_gradient(gradient: list[dict], holds: bool) -> str:
    """The tier-gradient table and verdict as text."""
    lines = [f"{'pairing':<18} {'games':>6} {'higher-tier score':>18} {'95% CI':>16}"]
    for g in gradient:
        pair = f"{g['higher']} vs {g['lower']}"
        ci = "[{:.3f}, {:.3f}]".format(g["ci_low"], g["ci_high"])
        lines.append(f"{pair:<18} {g['games']:>6} {g['score_rate']:>18.3f} {ci:>16}")
    lines.append("tier gradient: " + ("HOLDS (each tier beats the one below)" if holds
                                      else "does NOT hold"))
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
@click.option("--run-id", required=True, help="Run folder name (re-running it resumes).")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder of run folders.")
@click.option("--parallel/--no-parallel", default=True, show_default=True,
              help="Run shards as Ray tasks, or one by one in this process.")
def tournament(games_per_pairing: int, seed: int, scout_accuracy: float, no_scouting: bool,
               run_id: str, output_dir: Path, parallel: bool) -> None:
    """Round robin of the four scripted tiers (both seat orders) with the tier gradient."""
    from distbench.engine.driver import RunConfigMismatch, run_plan
    from distbench.games.fog.metrics import gradient_holds, tier_gradient
    from distbench.games.fog.plan import plan_fog, tournament_config
    from distbench.store.catalog import open_run

    if games_per_pairing < 1:
        raise UserError(f"--games-per-pairing must be at least 1, got {games_per_pairing}")
    if seed < 0:
        raise UserError(f"--seed must be non-negative, got {seed}")
    if not 0.0 <= scout_accuracy <= 1.0:
        raise UserError(f"--scout-accuracy must be in [0, 1], got {scout_accuracy}")
    if not run_id or "/" in run_id or run_id in (".", ".."):
        raise UserError(f"--run-id must be a plain folder name, got {run_id!r}")
    try:
        config = tournament_config(games_per_pairing, seed=seed, scout_accuracy=scout_accuracy,
                                   scouting=not no_scouting)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    run_dir = output_dir / run_id
    try:
        outcome = run_plan(plan_fog(config, run_id), run_dir, parallel=parallel,
                           command=["distbench", *sys.argv[1:]])
    except RunConfigMismatch as exc:
        raise UserError(str(exc)) from None
    con = open_run(run_dir)
    try:
        rows = [dict(zip(("agent_a", "agent_b", "winner"), r, strict=True)) for r in
                con.execute("select agent_a, agent_b, winner from fog_games").fetchall()]
    finally:
        con.close()
    gradient = tier_gradient(rows)
    click.echo(format_gradient(gradient, gradient_holds(gradient)))
    click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
               f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True)
