"""``distbench rescore RUN_DIR --run-id NEW``: re-read stored answers, no model call."""

from __future__ import annotations

import json
from pathlib import Path

import click

from distbench.cli.options import check_run_id
from distbench.report.sql import render

TRANSITION_COLUMNS = ["unit", "old_status", "new_status", "count"]
HEADLINE_COLUMNS = ["family", "group", "metric", "player", "units", "before", "after",
                    "after_minus_before", "ci95_low", "ci95_high"]


@click.command()
@click.argument("run_dir", metavar="RUN_DIR", type=click.Path(path_type=Path))
@click.option("--run-id", "run_id", required=True,
              help="Name of the new run folder (created beside RUN_DIR, or in --output-dir).")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the new run (default: the folder holding RUN_DIR).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True, help="How to print the tables.")
def rescore(run_dir: Path, run_id: str, output_dir: Path | None, fmt: str) -> None:
    """Re-read a finished run's stored answers with today's parsers and score them with
    today's metrics, into a new run; no model is called.

    Prints the status transitions (old -> new, counts; multi-turn families also count the
    episodes or games whose re-read moves changed the rest of the game, kept as stored) and the
    headline metrics before and after, paired unit by unit with bootstrap 95% CIs.
    """
    import sys

    from distbench.engine.rescore import rescore_run
    from distbench.errors import short_path

    check_run_id(run_id)
    target = (output_dir if output_dir is not None else run_dir.resolve().parent) / run_id
    target = Path(short_path(target))  # printed as other commands print: results/<run-id>
    outcome = rescore_run(run_dir, target, command=["distbench", *sys.argv[1:]])
    transitions = sorted(((u, o, n, c) for (u, o, n), c in outcome.transitions.items()),
                         key=lambda r: (r[0], r[1] == r[2], -r[3], r[1], r[2]))
    headline = [tuple(r[c] for c in HEADLINE_COLUMNS) for r in outcome.headline]
    if fmt == "json":
        click.echo(json.dumps({
            "run_dir": str(outcome.run_dir), "source": str(outcome.source),
            "shards": outcome.shards, "diverged": outcome.diverged,
            "transitions": json.loads(render(TRANSITION_COLUMNS, transitions, "json")),
            "headline": json.loads(render(HEADLINE_COLUMNS, headline, "json")),
        }, indent=2))
        return
    changed = sum(c for u, o, n, c in transitions if o != n)
    heading = "### " if fmt == "markdown" else ""
    click.echo(f"rescored {outcome.source} into {outcome.run_dir}: {outcome.shards} shard(s), "
               f"no model call, {changed} answer(s) read differently"
               + (f", {outcome.diverged} episode(s)/game(s) diverged (kept as stored)"
                  if outcome.diverged else "") + f" ({outcome.elapsed_s:.1f} s)")
    click.echo(f"\n{heading}transitions (old status -> new status)")
    click.echo(render(TRANSITION_COLUMNS, transitions, fmt))
    click.echo(f"\n{heading}headline before and after (after - before, paired over the "
               "shared units, bootstrap 95% CI)")
    click.echo(render(HEADLINE_COLUMNS, headline, fmt) if headline else
               "no paired metric (no unit with a value in both runs)")
