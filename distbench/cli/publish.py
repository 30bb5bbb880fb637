"""``distbench publish``: a static leaderboard site over runs (``--site DIR``)."""

from __future__ import annotations

from pathlib import Path

import click

from distbench.cli.errors import UserError


def site_families() -> list:
    """Each registered family's hooks the site reads (its comparison units, its tournaments'
    seat outcomes), from the registry."""
    from distbench.games.registry import families
    from distbench.llm.registry import providers
    from distbench.report.site import SiteFamily

    models = set(providers())

    def scripted(label: str) -> bool:  # a model's label is <provider>:<model>
        provider, colon, _ = label.partition(":")
        return not colon or provider not in models

    out = []
    for name, family in families().items():
        units = family.compare_units() if family.comparing else None
        outcomes = family.seat_outcomes if family.tournaments else None
        out.append(SiteFamily(name, units, outcomes, scripted))
    return out


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--site", "site_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the static site into (created if missing).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the leaderboard's bootstrap band and of the replays' sample.")
@click.option("--resamples", default=200, show_default=True, type=click.IntRange(min=0),
              help="Bootstrap resamples of the leaderboard's band.")
@click.option("--replays", "per_game", default=3, show_default=True,
              type=click.IntRange(min=0), help="Replays sampled per game.")
def publish(runs: tuple[Path, ...], site_dir: Path, seed: int, resamples: int,
            per_game: int) -> None:
    """Write a static leaderboard site over RUNS (runs or folders of runs) into --site DIR:
    leaderboard, a page per model and per game, every table as CSV and Parquet. The files open
    from disk and serve unchanged from any static host."""
    from distbench.engine.replays import write_replays
    from distbench.report.site import build_site
    from distbench.store.catalog import NotARunError, find_runs, is_run_dir

    try:
        run_dirs = find_runs(list(runs))
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    target = site_dir.resolve()
    for folder in (target, *target.parents):
        if is_run_dir(folder):
            raise UserError(f"--site {site_dir} is inside the run {folder}: publish never "
                            "writes into a run; choose a folder outside it")
    _, note = build_site(run_dirs, site_dir, site_families(), seed=seed, resamples=resamples,
                         replays_per_game=per_game, replay_writer=write_replays)
    if note:
        click.echo(f"warning: {note}", err=True)
    click.echo(str(site_dir / "index.html"))
