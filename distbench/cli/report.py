"""``distbench report``: an HTML page and a Markdown twin with the run's plots and tables."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from distbench.cli.errors import UserError


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out: {out_dir} exists and is not a folder; pass a folder path")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out: cannot create {out_dir} ({exc.strerror}); pass a writable "
                        "folder") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise UserError(f"--out: {out_dir} is not writable; pass a writable folder")


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Output folder.  [default: RUN_DIR/report]")
def report(run_dir: Path, out_dir: Path | None) -> None:
    """Write RUN_DIR's report: report.html (self-contained), report.md, figures/*.svg|pdf,
    tables/*.csv|tex, and the transcript viewer view.html.

    Sections for each family in the run (matrix, negotiation, fog of war) plus cost and speed,
    with bootstrap confidence intervals and paired model comparisons; on a sweep run also the
    suite tables.
    """
    from distbench.store.catalog import NotARunError, check_run_dir

    try:
        check_run_dir(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    started = time.monotonic()

    def say(message: str) -> None:  # drawing takes seconds a figure: say what is being done
        click.echo(f"report: {message} ({time.monotonic() - started:.0f} s)", err=True)

    try:
        from distbench.report import figures  # noqa: F401 - matplotlib, or the install hint
        from distbench.report.build import build_report
    except ImportError as exc:
        raise UserError(f"{exc}") from None
    out = out_dir or run_dir / "report"
    _check_out_dir(out)
    try:
        from distbench.games.registry import report_parts, view_sources
        from distbench.report.viewer import ViewOptions, build_view

        out.mkdir(parents=True, exist_ok=True)
        say("writing the transcript viewer ...")
        viewer = build_view(run_dir, out / "view.html", view_sources(), ViewOptions())
        result = build_report(run_dir, out, report_parts(), links=[(
            "Transcripts: what the models said, sampled (distbench view)", viewer.path.name)],
            progress=say)
    except OSError as exc:
        raise UserError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    click.echo(str(result.html))
    click.echo(str(result.markdown))
    click.echo(str(viewer.path))
    for path in result.extra:
        click.echo(str(path))
    click.echo(f"{len(result.figures)} figures, {len(result.tables)} tables in "
               f"{time.monotonic() - started:.0f} s", err=True)
