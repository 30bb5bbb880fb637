"""``distbench query``: SQL over the tables of one run or several, through DuckDB."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.report.sql import QUERIES_DIR, render, resolve_query_file, run_sql

__all__ = ["QUERIES_DIR", "query", "render", "resolve_query_file", "run_sql", "split_arguments"]

_EITHER = "give either SQL or --file, not both and not neither"


def split_arguments(args: tuple[str, ...], sql_file: str | None) -> tuple[list[Path], str | None]:
    """The run folders and the SQL of ``query RUN_DIR... [SQL]``: without ``--file`` the last
    argument is the SQL; with it, every argument is a folder (an argument that is no folder
    and reads like SQL, with a space in it, is SQL given beside ``--file``)."""
    if sql_file is None:
        if len(args) < 2:
            raise UserError(_EITHER if args else "give a run directory and SQL (or --file)")
        return [Path(a) for a in args[:-1]], args[-1]
    if not args:
        raise UserError("give a run directory")
    if len(args) > 1 and not Path(args[-1]).exists() and any(c.isspace() for c in args[-1]):
        raise UserError(_EITHER)
    return [Path(a) for a in args], None


@click.command()
@click.argument("args", nargs=-1, required=True, metavar="RUN_DIR... [SQL]")
@click.option("--file", "sql_file", default=None, metavar="PATH|NAME",
              help="Read the SQL from a file, or a shipped query by name (e.g. summary).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]),
              default="table", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300.0,
              show_default=True, help="Stop a query that runs longer than this (seconds).")
def query(args: tuple[str, ...], sql_file: str | None, fmt: str, timeout: float) -> None:
    """Run SQL over the tables of RUN_DIR (views: games, trials, calls, episodes, turns,
    fog_games, fog_reports, fog_events), committed shards only.

    Several RUN_DIRs, or a folder of runs such as results/, give views over the union of the
    runs; the run_id column tells them apart.
    """
    run_dirs, sql = split_arguments(args, sql_file)
    if sql_file is not None:
        sql = resolve_query_file(sql_file).read_text(encoding="utf-8")
    columns, rows = run_sql(run_dirs, sql or "", timeout=timeout)
    if columns:
        click.echo(render(columns, rows, fmt))

