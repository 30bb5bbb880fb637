"""``distbench view``: a self-contained HTML page to browse samples of what the models said."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_file", type=click.Path(path_type=Path), default=None,
              help="The HTML file to write.  [default: RUN_DIR/report/view.html]")
@click.option("--sample", type=click.IntRange(min=1), default=50, show_default=True,
              help="Items at most per stratum (model × group × parse status).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the sample (the same seed picks the same items).")
@click.option("--replays", type=click.IntRange(min=0), default=3, show_default=True,
              help="Games drawn step by step per game (bucket, mode...) of each family that "
                   "has replays, written beside the viewer in replays/; 0: none.")
def view(run_dir: Path, out_file: Path | None, sample: int, seed: int, replays: int) -> None:
    """Write a transcript viewer of RUN_DIR: one HTML file, no network needed.

    For every family in the run, a seeded sample of up to --sample items per stratum (model,
    bucket / mode / language, parse status), every parse status included, with the full
    counts of the run in the filter menus: matrix trials with prompt, raw answer, parsing and
    scores; negotiation dialogues with proposals and scores; fog-of-war games turn by turn
    (orders, beliefs, events). The file stays under 5 MB whatever the run's size. Open it at
    view.html#status=no_answer to start filtered. Beside it, replays/ holds pages that draw
    sampled games step by step (keys: left / right arrows, space to play; the link
    replays/PAGE.html#r=ID&s=STEP opens at a moment).
    """
    from distbench.store.catalog import NotARunError, check_run_dir

    try:
        check_run_dir(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    out = out_file or run_dir / "report" / "view.html"
    if out.exists() and out.is_dir():
        raise UserError(f"--out: {out} is a folder; pass a file path such as {out / 'view.html'}")
    from distbench.games.registry import view_sources
    from distbench.report.viewer import ViewOptions, build_view

    try:
        result = build_view(run_dir, out, view_sources(), ViewOptions(sample=sample, seed=seed))
    except OSError as exc:
        raise UserError(f"cannot write the viewer to {out}: {exc.strerror or exc}") from None
    click.echo(str(result.path))
    shown = ", ".join(f"{fam} {n:,} items ({result.strata[fam]:,} strata)"
                      for fam, n in result.items.items())
    click.echo(f"{shown}; {result.bytes / 1e6:.2f} MB in {result.seconds:.2f} s", err=True)
    if replays:
        from distbench.engine.replays import write_replays

        try:
            pages = write_replays(run_dir, out.parent, replays, seed)
        except OSError as exc:
            raise UserError(f"cannot write the replays under {out.parent}: "
                            f"{exc.strerror or exc}") from None
        if pages:
            click.echo(f"replays: {len(pages)} page(s) in {out.parent / 'replays'}", err=True)
