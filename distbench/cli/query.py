"""``distbench query``: SQL over a run's tables through DuckDB."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.report.sql import QUERIES_DIR, render, resolve_query_file, run_sql

__all__ = ["QUERIES_DIR", "query", "render", "resolve_query_file", "run_sql"]


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.argument("sql", required=False)
@click.option("--file", "sql_file", default=None, metavar="PATH|NAME",
              help="Read the SQL from a file, or a shipped query by name (e.g. summary).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]),
              default="table", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300.0,
              show_default=True, help="Stop a query that runs longer than this (seconds).")
def query(run_dir: Path, sql: str | None, sql_file: str | None, fmt: str, timeout: float) -> None:
    """Run SQL over RUN_DIR's tables (views: games, trials, calls, episodes, turns, fog_games,
    fog_reports, fog_events), committed shards only."""
    if (sql is None) == (sql_file is None):
        raise UserError("give either SQL or --file, not both and not neither")
    if sql_file is not None:
        sql = resolve_query_file(sql_file).read_text(encoding="utf-8")
    columns, rows = run_sql(run_dir, sql or "", timeout=timeout)
    if columns:
        click.echo(render(columns, rows, fmt))
