"""``distbench import``: other benchmarks' published records brought into a distbench run
(``gama``: GAMA-Bench's ``raw_results`` folder)."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.cli.options import check_run_id, make_output_dir, output_dir_option


@click.group(name="import")
def import_group() -> None:
    """Bring another benchmark's published records into a distbench run."""


@import_group.command(name="gama")
@click.argument("raw_results", type=click.Path(path_type=Path))
@click.option("--run-id", required=True, help="Run folder name (re-running it resumes).")
@output_dir_option
def gama(raw_results: Path, run_id: str, output_dir: Path) -> None:
    """GAMA-Bench's RAW_RESULTS folder (its JSON records, read unchanged) as a run of the
    gama family, every game scored by distbench's code (query gama_games, gama_rounds,
    gama_moves, gama_players)."""
    from distbench.games.gama.importer import RunExistsError, import_folder
    from distbench.games.gama.records import RecordError

    check_run_id(run_id)
    make_output_dir(output_dir)
    try:
        result = import_folder(raw_results, output_dir, run_id)
    except (RecordError, RunExistsError) as exc:
        raise UserError(f"import gama: {exc}") from None
    click.echo(f"imported {result.records} GAMA-Bench records ({result.games} games, "
               f"{result.scored} scored) from {result.shards} folders "
               f"({result.imported} written now) into {result.run_dir}")
