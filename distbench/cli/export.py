"""``distbench export``: a run's results as JSON files (the family's own records or every
table), the seed tool's files for users with old tooling, or a family's own format."""

from __future__ import annotations

import json
from pathlib import Path

import click

from distbench.cli.errors import UserError
from distbench.store.catalog import fetch_records


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


def export_format(run_dir: Path, out_dir: Path, fmt: str) -> list[Path]:
    """A family's own export format (``Presentation.formats``, e.g. clembench's results
    tree) of a run; one line saying which families' runs it applies to otherwise."""
    from distbench.games.registry import families
    from distbench.store.catalog import NotARunError, open_run

    family = _family(run_dir)
    having = [f for f in families().values() if fmt in f.presentation.formats]
    fam = next((f for f in having if f.name == family), None)
    if fam is None:
        what = f"{family} runs" if family else f"{run_dir} (no run manifest there)"
        runs = " or ".join(f.name for f in having) or "no"
        raise UserError(f"export --format {fmt} applies to {runs} runs only, not to {what}")
    try:
        con = open_run(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    try:
        return fam.export_format(fmt, con, out_dir)
    except ValueError as exc:  # a family's format refusing its target (e.g. a tree conflict)
        raise UserError(str(exc)) from None
    finally:
        con.close()


def export_dataset(run_dir: Path, out_dir: Path) -> list[Path]:
    """``--format hf``: the run as a Hugging Face dataset folder
    (:func:`distbench.report.hf.export_hf`), the family's main table its default config."""
    from distbench.games.registry import UnknownFamilyError, get_family
    from distbench.report.hf import export_hf
    from distbench.store.catalog import NotARunError, check_run_dir

    try:
        check_run_dir(run_dir)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    try:
        main_table = get_family(_family(run_dir) or "").main_table
    except (UnknownFamilyError, KeyError, ValueError):
        main_table = None
    return export_hf(run_dir, out_dir, main_table)


def export_run(run_dir: Path, out_dir: Path) -> list[Path]:
    """The export of any run: what its family's ``export`` hook writes, or else each of its
    tables as JSON records (``<table>.json``) with the run's summary (``summary.json``). A
    sweep (or a run whose manifest names no family) is exported as the default family's."""
    from distbench.games.registry import UnknownFamilyError, default_family, get_family
    from distbench.store.catalog import NotARunError, open_run

    family = _family(run_dir)
    if family in (None, "sweep"):
        family = default_family()
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


class _ExportCommand(click.Command):
    """``--format`` lists, in ``--help``, every family's own formats (``Presentation.formats``)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        own = _own_formats()
        for param in self.params:
            if param.name == "fmt" and isinstance(param, click.Option) and own \
                    and param.help and "Families' formats:" not in param.help:
                param.help += " Families' formats: " + "; ".join(
                    f"{fmt} ({', '.join(names)} runs)" for fmt, names in own.items()) + "."
        super().format_options(ctx, formatter)


def _own_formats() -> dict[str, list[str]]:
    """Each family's own export format -> the families that have it."""
    from distbench.games.registry import families

    out: dict[str, list[str]] = {}
    for name, family in families().items():
        for fmt in family.presentation.formats:
            out.setdefault(fmt, []).append(name)
    return out


@click.command(cls=_ExportCommand)
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", default="json", show_default=True, metavar="FORMAT",
              help="json: distbench's records (the family's own export, else every table "
                   "and the summary); seed: the seed tool's files and keys exactly (runs and "
                   "sweeps of the default family); hf: a Hugging Face dataset folder (Parquet "
                   "per table and a dataset card); or one of a family's own formats.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder.  [default: RUN_DIR/export]")
def export(run_dir: Path, fmt: str, out_dir: Path | None) -> None:
    """Write RUN_DIR's results as JSON files: distbench's keys (``json``: the family's own
    records, e.g. one per game or episode, and the summary), the seed tool's (``seed``), or a
    family's own format."""
    known = ["json", "seed", "hf", *_own_formats()]
    if fmt not in known:
        raise click.BadParameter(f"{fmt!r} is not one of {', '.join(map(repr, known))}.",
                                 param_hint="'--format'")
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
    elif fmt == "hf":
        paths = export_dataset(run_dir, out_dir or run_dir / "export" / "hf")
    elif fmt != "json":
        paths = export_format(run_dir, out_dir or run_dir / "export" / fmt, fmt)
    else:
        paths = export_run(run_dir, out_dir or run_dir / "export")
    for path in paths:
        click.echo(str(path))
