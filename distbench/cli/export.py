"""``distbench export``: the seed tool's JSON files, for users with old tooling."""

from __future__ import annotations

import json
from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.store.catalog import fetch_records


def export_json(run_dir: Path, out_dir: Path) -> list[Path]:
    """Writes ``games.json``, ``trials.json`` and ``summary.json`` into ``out_dir``.

    ``games.json``: one object per game (``game_id``, ``payoff_matrix``, ``row_strategy``,
    ``col_strategy``, ``value``, ...). ``trials.json``: one object per trial, with the game's
    id, the mode, the parsed ``action`` (1-based, as the model wrote it) or ``strategy``, the
    scores and the raw answer. ``summary.json``: the run summary (as the run wrote it).
    """
    from distbench.games.matrix.summary import matrix_summary
    from distbench.store.catalog import NotARunError, open_run

    try:
        con = open_run(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    try:
        games = fetch_records(
            con,
            """SELECT game_id, bucket, seed, rows AS num_rows, cols AS num_cols,
                      payoff AS payoff_matrix, nash_row AS row_strategy,
                      nash_col AS col_strategy, value, gap_degenerate
               FROM games ORDER BY bucket, seed, game_index""",
        )
        trials = fetch_records(
            con,
            """SELECT game_id, mode, trial, provider, model,
                      decision + 1 AS action, strategy, parse_status, raw_text,
                      llm_value, br_value, nash_gap, exploitability
               FROM trials ORDER BY bucket, seed, game_index, mode, trial""",
        )
        summary = matrix_summary(con)
    finally:
        con.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, payload in (
        ("games.json", games),
        ("trials.json", trials),
        ("summary.json", {"run_id": run_dir.name, "groups": summary}),
    ):
        path = out_dir / name
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


def check_out(run_dir: Path, out_dir: Path) -> None:
    """Refuses (one line) an output folder inside a run, its own ``export/`` folder aside: no
    command but a resume changes a committed run."""
    from distbench.store.catalog import is_run_dir

    own = (run_dir.resolve() / "export")
    target = out_dir.resolve()
    if target == own or own in target.parents:
        return
    for folder in (target, *target.parents):
        if is_run_dir(folder):
            raise UserError(f"--out {out_dir} is inside the run {folder}: export never writes "
                            "into a run (its own export/ folder aside); choose a folder outside "
                            "it, or leave --out out for RUN_DIR/export")


def _family(run_dir: Path) -> str | None:
    from distbench.store.writer import read_json

    path = run_dir / "manifest.json"
    return read_json(path).get("family") if path.is_file() else None


def export_clembench_tree(run_dir: Path, out_dir: Path) -> list[Path]:
    """A negotiation run as clembench's results tree (``clemeval`` reads it); one line saying
    it does not apply to other runs."""
    from distbench.games.negotiation.export import TreeConflict, export_clembench
    from distbench.store.catalog import NotARunError, open_run

    family = _family(run_dir)
    if family != "negotiation":
        what = f"{family} runs" if family else f"{run_dir} (no run manifest there)"
        raise UserError(f"export --format clembench applies to negotiation runs only, not to "
                        f"{what}")
    try:
        con = open_run(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    try:
        return export_clembench(con, out_dir)
    except TreeConflict as exc:
        raise UserError(str(exc)) from None
    finally:
        con.close()


def export_run(run_dir: Path, out_dir: Path) -> list[Path]:
    """The export of any run: the seed tool's files for matrix and sweep runs; for another
    family, what its ``export`` hook writes (negotiation: per-episode records, see
    ``distbench.games.negotiation.export``), or else each of its tables as JSON records
    (``<table>.json``) with the run's summary (``summary.json``)."""
    family = _family(run_dir)
    if family in (None, "matrix", "sweep"):
        return export_json(run_dir, out_dir)
    from distbench.games.registry import UnknownFamilyError, get_family
    from distbench.store.catalog import NotARunError, open_run

    try:
        fam = get_family(family)
        con = open_run(run_dir)
    except (UnknownFamilyError, NotARunError) as exc:
        raise UserError(str(exc)) from None
    try:
        written = fam.export_files(con, out_dir, run_dir.name)
        if written is None:
            written = _export_tables(con, fam, run_dir, out_dir)
    finally:
        con.close()
    return written


def _export_tables(con, fam, run_dir: Path, out_dir: Path) -> list[Path]:
    """Each table of ``fam`` the run has, as a JSON list of records, and the run's summary."""
    from distbench.store.writer import read_json

    have = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() UNION ALL "
                                      "SELECT table_name FROM duckdb_tables()").fetchall()}
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in fam.tables:
        if table not in have:
            continue
        path = out_dir / f"{table}.json"
        records = fetch_records(con, f'SELECT * FROM "{table}"')
        path.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    summary = run_dir / "summary.json"
    if summary.is_file():
        path = out_dir / "summary.json"
        payload = {"run_id": run_dir.name, "summary": read_json(summary)}
        path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "seed", "clembench"]),
              default="json", show_default=True,
              help="json: distbench's records; seed: the seed tool's files and keys exactly "
                   "(matrix runs and sweeps); clembench: clembench's results tree, "
                   "MODEL_A--MODEL_B/dond/EXPERIMENT/EPISODE/{instance,interactions,scores}.json"
                   ", which clemcore's clemeval reads (negotiation runs).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder.  [default: RUN_DIR/export]")
def export(run_dir: Path, fmt: str, out_dir: Path | None) -> None:
    """Write RUN_DIR's games, trials and summary as JSON files: distbench's keys (``json``) or
    the seed tool's (``seed``); for a negotiation run, one record per episode (dialogue,
    proposals, scores) and the summary."""
    if out_dir is not None:
        check_out(run_dir, out_dir)
    if fmt == "seed":
        from distbench.cli.sweep import seed_context
        from distbench.report.seed_format import NotMatrixError, resolve_run, write_seed_files
        from distbench.store.catalog import NotARunError

        try:
            paths = write_seed_files(run_dir, out_dir or resolve_run(run_dir) / "export",
                                     **seed_context())
        except (NotARunError, NotMatrixError) as exc:
            raise UserError(str(exc)) from None
    elif fmt == "clembench":
        paths = export_clembench_tree(run_dir, out_dir or run_dir / "export" / "clembench")
    else:
        paths = export_run(run_dir, out_dir or run_dir / "export")
    for path in paths:
        click.echo(str(path))
