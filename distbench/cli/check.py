"""``distbench check``: verify a run's committed shards against their commit markers."""

from __future__ import annotations

import json
from pathlib import Path

import click

from distbench.cli.errors import UserError


class RunDamagedExit(UserError):
    """Damaged shards were found and listed: exit status 1 (bad input is 2)."""

    exit_code = 1


_NEXT = {"failed": "resume it with the same --run-id to play the rest",
         "interrupted": "resume it with the same --run-id to play the rest",
         "running": "still running, or stopped without a word (a killed process): resume it "
                    "with the same --run-id"}


def run_state(run: Path, committed: int) -> str:
    """One line: the run's state as its manifest records it (complete, failed, interrupted,
    running), what of it is committed and verified, and what to do next."""
    try:
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    state = str(manifest.get("state") or "unknown state (no readable manifest)")
    planned = (manifest.get("shards") or {}).get("planned") if state == "complete" else None
    shards = f"{committed} of {planned}" if planned is not None else f"{committed}"
    reason = str(manifest.get("error") or "").splitlines()[:1]
    why = f" ({reason[0]})" if reason and state == "failed" else ""
    line = f"{state}{why}: {shards} committed shard(s) verified"
    return f"{line}; {_NEXT[state]}" if state in _NEXT else line


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
            click.echo(f"{run}: {run_state(run, len(marker_paths(run)))}")
    if damaged:
        raise RunDamagedExit(f"{damaged} damaged shard(s); resume the run (same --run-id) to "
                             "play them again")
