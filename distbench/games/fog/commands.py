"""``distbench fog``: the fog family's own commands (``Play.commands``).

``tournament`` is ``distbench tournament --family fog`` under the fog names of its settings (a
round robin of tiers and users' agent classes, the tier gradient before the ranking): the
same code plays it (``CommandServices.tournament``). ``study``: round robins of the tiers
under several scouting conditions, then the benchmark metrics.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import click

from distbench.errors import UserError
from distbench.games.base import PairingSettings
from distbench.games.family import CommandServices
from distbench.store.catalog import cursor_records

_OUTPUT_DIR = click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
                           default=Path("results"), show_default=True,
                           help="Folder of run folders.")


def commands(services: CommandServices) -> click.Group:
    """The ``fog`` group, its commands playing through ``services``."""

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
                       "fog-tournament-<date>-<time>]")
    @_OUTPUT_DIR
    @click.option("--parallel/--no-parallel", default=None,
                  help="Run shards as Ray tasks, or one by one in this process.")
    @click.option("--agents", default="tier1,tier2,tier3,tier4", show_default=True,
                  help="Who plays the round robin (comma list): tiers, mock:TIER (a tier "
                       "through the text interface), and agent classes as module:Class.")
    @click.option("--agent", "extra", multiple=True, metavar="MODULE:CLASS",
                  help="Your agent class, added to --agents (repeatable); its module must be "
                       "importable (on PYTHONPATH), here and on every worker.")
    def tournament(games_per_pairing: int, seed: int, scout_accuracy: float,
                   no_scouting: bool, run_id: str | None, output_dir: Path,
                   parallel: bool | None,
                   agents: str, extra: tuple[str, ...]) -> None:
        """Round robin (both seat orders) of the four scripted tiers, or of the agents given
        (tiers and your own agent classes), with the tier gradient: ``distbench tournament
        --family fog`` with half of --games-per-pairing (rounded up) in each seat order."""
        run_id = run_id or f"fog-tournament-{time.strftime('%Y%m%d-%H%M%S')}"
        if games_per_pairing < 1:
            raise UserError(f"--games-per-pairing must be at least 1, got {games_per_pairing}")
        if seed < 0:
            raise UserError(f"--seed must be non-negative, got {seed}")
        if not 0.0 <= scout_accuracy <= 1.0:
            raise UserError(f"--scout-accuracy must be in [0, 1], got {scout_accuracy}")
        players = list(dict.fromkeys([a.strip() for a in agents.split(",") if a.strip()]
                                     + [a.strip() for a in extra]))
        if len(players) < 2:
            raise UserError("a round robin needs at least two agents, got "
                            f"{', '.join(players) or 'none'}")
        settings = PairingSettings(num_instances=math.ceil(games_per_pairing / 2), seed=seed,
                                   options={"scout_accuracy": scout_accuracy,
                                            "scouting": not no_scouting})
        services.tournament("fog", players, settings, output_dir, run_id, parallel=parallel)

    @fog.command()
    @click.option("--games-per-pairing", type=click.IntRange(min=2), default=100,
                  show_default=True,
                  help="Games per pair of tiers and condition (half in each seat order).")
    @click.option("--accuracies", default="0.4,0.7,1.0", show_default=True,
                  help="Scout accuracies to compare (comma list); scouting off is added.")
    @click.option("--reference-accuracy", type=click.FloatRange(0, 1), default=None,
                  help="Accuracy whose games measure the scouting value.  [default: the "
                       "middle one]")
    @click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
    @click.option("--run-id", required=True, help="Run folder name (re-running it resumes).")
    @_OUTPUT_DIR
    @click.option("--parallel/--no-parallel", default=None,
                  help="Run shards as Ray tasks, or here.  [default: auto, by the work]")
    def study(games_per_pairing: int, accuracies: str, reference_accuracy: float | None,
              seed: int, run_id: str, output_dir: Path, parallel: bool | None) -> None:
        """Round robins of the tiers under several scouting conditions, then the benchmark
        metrics: tier gradient per condition, scouting value, belief quality vs winning,
        anti-calculability."""
        from distbench.games.fog.study import plan_study

        accs, reference = _accuracies(accuracies, reference_accuracy)
        run_dir = services.run_folder(output_dir, run_id)
        outcome = services.play(plan_study(games_per_pairing, seed, accs, run_id), run_dir,
                                parallel=parallel)
        click.echo(_study_report(run_dir, reference))
        click.echo(f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
                   f"{outcome.elapsed_s:.1f} s. Metrics: {run_dir / 'study.json'}", err=True)

    return fog


def _accuracies(text: str, reference: float | None) -> tuple[tuple[float, ...], float]:
    """--accuracies and --reference-accuracy checked (UserError: one line)."""
    try:
        accs = tuple(dict.fromkeys(float(a) for a in text.split(",") if a.strip()))
    except ValueError:
        raise UserError(f"--accuracies: expected numbers such as 0.4,0.7,1.0, got {text!r}"
                        ) from None
    if not accs or any(not 0 <= a <= 1 for a in accs):
        raise UserError(f"--accuracies: give numbers from 0 to 1, got {text!r}")
    chosen = reference if reference is not None else sorted(accs)[len(accs) // 2]
    if chosen not in accs:
        raise UserError(f"--reference-accuracy {chosen:g} is not one of --accuracies")
    return accs, chosen


def _study_report(run_dir: Path, reference: float) -> str:
    """The study's metrics as text; writes them to ``study.json`` in the run folder."""
    from distbench.games.fog.metrics import format_gradient
    from distbench.games.fog.study import STUDY_SQL, study_metrics
    from distbench.store.catalog import open_run

    con = open_run(run_dir, threads=1)
    try:
        rows = cursor_records(con.execute(STUDY_SQL))
    finally:
        con.close()
    metrics = study_metrics(rows, reference)
    lines = []
    for key, g in metrics["tier_gradient"].items():
        lines += [f"== {key}", format_gradient(g["pairs"], g["verdict"])]
    lines.append(f"\nscouting value (score with scouting at accuracy {reference:g} minus "
                 "without):")
    lines += [f"  {tier}: {value:+.3f}" for tier, value in metrics["scouting_value"].items()]
    lines.append("belief quality vs winning (corr of -Brier and score, tiers 3-4): "
                 f"{metrics['belief_quality_vs_winning']:+.3f}")
    anti = metrics["anti_calculability"]
    edges = ", ".join(f"{a:g}: {e:+.3f}" for a, e in zip(
        anti["accuracies"], anti["tier4_edge_over_tier3"], strict=True))
    lines.append(f"anti-calculability: tier4 edge over tier3 by accuracy ({edges}); slope "
                 f"{anti['slope']:+.3f}")
    (run_dir / "study.json").write_text(json.dumps(metrics, indent=2, default=float) + "\n")
    return "\n".join(lines)
