"""SQL over a run: the shipped named queries, the sandboxed runner and result formatting.

Used by ``distbench query``, the report and the suite tables (the CLI only parses options).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from distbench.errors import UserError

# Shipped inside the package (package data), so installed copies have them too; the top-level
# ``queries/`` of the repository is a link to this folder.
QUERIES_DIR = Path(__file__).resolve().parents[1] / "queries"


def resolve_query_file(name: str) -> Path:
    """A query file by path, or by name among the shipped ``queries/`` (``summary`` or
    ``summary.sql``)."""
    path = Path(name)
    if path.is_file():
        return path
    for candidate in (QUERIES_DIR / name, QUERIES_DIR / f"{name}.sql"):
        if candidate.is_file():
            return candidate
    shipped = sorted(p.stem for p in QUERIES_DIR.glob("*.sql")) if QUERIES_DIR.is_dir() else []
    raise UserError(
        f"no such query file: {name}"
        + (f" (shipped queries: {', '.join(shipped)})" if shipped else "")
    )


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    return str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def render(columns: list[str], rows: list[tuple], fmt: str) -> str:
    """Formats a result as ``table``, ``csv``, ``json`` (list of objects) or ``markdown``."""
    if fmt == "json":
        return json.dumps([{c: _jsonable(v) for c, v in zip(columns, row, strict=True)}
                           for row in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else _cell(v) for v in row] for row in rows])
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    if fmt == "markdown":
        def line(parts: list[str]) -> str:
            return "| " + " | ".join(p.replace("|", "\\|").ljust(w)
                                     for p, w in zip(parts, widths, strict=True)) + " |"
        out = [line(columns), "| " + " | ".join("-" * w for w in widths) + " |"]
        return "\n".join(out + [line(r) for r in cells])
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(p.ljust(w) for p, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def run_sql(
    run_dir: Path | str | Sequence[Path | str], sql: str, *, timeout: float | None = None
) -> tuple[list[str], list[tuple]]:
    """Runs ``sql`` over the run's views, locked to the run's files; returns (columns, rows).

    Args:
        run_dir: The run folder, or several run folders and folders of runs (the views are
            then the union of the runs, told apart by their ``run_id`` column).
        sql: The query (several statements allowed; the last one's result is returned).
        timeout: Seconds after which the query is interrupted (None: no limit).
    """
    import threading

    import duckdb

    from distbench.store.catalog import NotARunError, find_runs, open_run, open_runs

    try:
        if isinstance(run_dir, (str, Path)):
            con = open_run(run_dir, safe=True)
        else:
            con = open_runs(find_runs(list(run_dir)), safe=True)
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    timer = threading.Timer(timeout, con.interrupt) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    failure = None
    try:
        result = con.execute(sql)
        if result.description is None:
            return [], []
        columns = [d[0] for d in result.description]
        return columns, result.fetchall()
    except duckdb.InterruptException:
        failure = f"query stopped after the --timeout of {timeout:g} s"
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        failure = f"query failed: {first}"
    finally:
        if timer:
            timer.cancel()
        con.close()
    # Raised outside the handler, so the error carries no reference to DuckDB's exception and
    # its frames (which kept DuckDB objects alive until shutdown, where its bindings warn).
    raise UserError(failure)
