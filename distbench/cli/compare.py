"""``distbench compare``: a leaderboard and paired comparisons across runs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from distbench.report.compare import FAMILIES, Comparison, compare_runs, summary_lines
from distbench.report.sql import render

_TITLES = {
    "leaderboard": "{family}: leaderboard (mean over each player's own {unit}; "
                   "95% bootstrap CI over {unit})",
    "shared": "{family}: {unit} shared by each pair of players",
    "paired": "{family}: paired comparisons, a - b over the shared {unit} "
              "(paired bootstrap 95% CI)",
}


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR...",
                type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]),
              default="table", show_default=True,
              help="csv: the tables one after another, a blank line between them; json: one "
                   "object with a list per table.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also write runs.csv, leaderboard.csv, shared.csv and paired.csv here.")
def compare(run_dirs: tuple[Path, ...], fmt: str, out_dir: Path | None) -> None:
    """Compare runs: RUN_DIRs are runs, or folders of runs such as results/.

    For each family (matrix, negotiation, fog) a leaderboard of the players of every run, the
    number of instances each pair of players shares (same games: bucket, seed and game; same
    negotiation instances; same fog games and condition; against the same opponent), and
    paired differences with bootstrap 95% CIs over those shared instances.
    """
    result = compare_runs(run_dirs)
    tables = result.tables()
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, (columns, rows) in tables.items():
            (out_dir / f"{name}.csv").write_text(render(columns, rows, "csv") + "\n",
                                                 encoding="utf-8")
    if fmt == "json":
        doc = {name: json.loads(render(columns, rows, "json"))
               for name, (columns, rows) in tables.items()}
        click.echo(json.dumps(doc, indent=2))
    elif fmt == "csv":
        click.echo("\n\n".join(render(columns, rows, "csv") for columns, rows in tables.values()))
    else:
        click.echo(_readable(result, fmt))
    if out_dir is not None and fmt in ("table", "markdown"):
        click.echo(f"\nTables written to {out_dir}/ (runs, leaderboard, shared, paired .csv)")


def _readable(result: Comparison, fmt: str) -> str:
    """The tables per family, each under a title, with sentences about the shared instances."""
    heading = "### " if fmt == "markdown" else ""
    parts = [heading + "runs", render(*result.tables()["runs"], fmt)]
    if not result.families:
        parts.append("No results to compare: the runs hold no rows of "
                     + ", ".join(f.family for f in FAMILIES) + ".")
    units = {f.family: f.unit for f in FAMILIES}
    lines = summary_lines(result)
    for family in result.families:
        for name in ("leaderboard", "shared", "paired"):
            columns, rows = result.tables()[name]
            rows = [r[1:] for r in rows if r[0] == family]
            title = heading + _TITLES[name].format(family=family, unit=units[family])
            if name == "shared" and not rows:
                parts += [title, f"Only one run has {family} results: no pair to compare."]
                continue
            if name == "paired" and not rows:
                parts += [title, f"No two players share {units[family]}: no paired comparison."]
                continue
            parts += [title, render(columns[1:], rows, fmt)]
            if name == "shared":
                mine = [line for line in lines if line.startswith(f"{family}: ")]
                if mine:
                    parts.append("\n".join(mine))
    return "\n\n".join(parts)
