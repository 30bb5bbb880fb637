"""``distbench check``: verify a run's committed shards against their commit markers."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError


class RunDamagedExit(UserError):
    """Damaged shards were found and listed: exit status 1 (bad input is 2)."""

    exit_code = 1


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path),
                metavar="RUN_DIR...")
def check(run_dirs: tuple[Path, ...]) -> None:
    """Verify every committed shard of RUN_DIR (runs, or folders of runs): each file a
    regular file of the run with the size and content hash its commit marker records.
    Lists the damaged shards, one line each (exit status 1); resuming the run plays them
    again."""
    from distbench.store.catalog import NotARunError, find_runs
    from distbench.store.integrity import marker_paths, verify

    try:
        runs = find_runs(list(run_dirs))
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    damaged = 0
    for run in runs:
        damages = verify(run)
        damaged += len(damages)
        for damage in damages:
            click.echo(f"{run}: {damage.line()}")
        if not damages:
            click.echo(f"{run}: ok ({len(marker_paths(run))} committed shard(s) verified)")
    if damaged:
        raise RunDamagedExit(f"{damaged} damaged shard(s); resume the run (same --run-id) to "
                             "play them again")
