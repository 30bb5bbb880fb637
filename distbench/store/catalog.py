"""DuckDB views over a run's committed Parquet files.

``open_run(run_dir)`` returns an in-memory DuckDB connection with one view per table
(``games``, ``trials``, ...), each reading only the files listed by commit markers. A table
with no committed file is an empty view with the table's schema, so queries never fail because
a run has not produced a table yet.

``open_runs(run_dirs)`` does the same over several runs: each view is the union of the runs'
committed files (by column name, so runs of different versions mix), and every table has a
``run_id`` column that tells the runs apart. A table that one run lacks (another family) is
simply absent from its part of the union. :func:`find_runs` turns the folders a person names
(runs, or folders of runs such as ``results/``) into the list of runs.

With ``safe=True`` (what ``distbench query`` uses) the connection can read the committed
Parquet files of the run(s) and nothing else: external access is off except for exactly those
files (``allowed_paths``), extensions can be neither installed nor loaded, and the
configuration is locked, so SQL cannot read other files, write any (``COPY ... TO``), attach
databases, or undo the settings.

Only what distbench wrote is read (:mod:`distbench.store.integrity`): a marker that lists a
path outside ``<table>/<name>.parquet``, a file replaced by a symlink or of another size than
its marker records, or a corrupt marker stops the connection with one line naming the file
(:class:`~distbench.store.integrity.RunDamaged`). File paths reach DuckDB escaped
(:func:`escape_glob`), so a folder named ``run*`` or ``br[1]`` reads its own files only. DuckDB
runs with a memory limit, a thread count and a temporary folder of ours
(:func:`resource_settings`).
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from distbench.store.fields import derived_expression
from distbench.store.schema import MACROS, SCHEMAS, VIEWS, schema_for
from distbench.store.writer import COMMITS, committed_tables, strict_json


class NotARunError(ValueError):
    """The folder is not a distbench run directory."""


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def escape_glob(path: str) -> str:
    """``path`` as a DuckDB file pattern that matches exactly that file: DuckDB globs every
    path it reads (``*``, ``?``, ``[...]``), so a run folder named ``run*`` would also read
    ``runX``; each of those characters becomes a one-character class (``[*]``)."""
    return _GLOB_CHARS.sub(r"[\g<0>]", path)


_GLOB_CHARS = re.compile(r"[*?\[]")
_CONNECTIONS = itertools.count()

MEMORY_ENV = "DISTBENCH_DUCKDB_MEMORY"
"""Environment variable: DuckDB's memory limit for reading runs (e.g. ``4GB``; default: half
the machine's memory)."""


def resource_settings(threads: int | None = None) -> dict[str, Any]:
    """DuckDB's memory, thread and temporary-folder settings for reading runs.

    Memory: ``$DISTBENCH_DUCKDB_MEMORY``, else half the physical memory (DuckDB's own default
    is 80 %, next to Ray's workers); threads: ``threads``, else the CPUs this process may use
    (not the machine's); temporary files (a query larger than memory spills) go to
    ``<system temp>/distbench-duckdb-<uid>-<pid>-<n>``, never to a ``.tmp`` in the current
    folder.
    """
    memory = os.environ.get(MEMORY_ENV)
    if not memory:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            memory = f"{max(256, total // 2 // (1 << 20))}MiB"
        except (ValueError, OSError, AttributeError):
            memory = None
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    # one folder per connection: DuckDB's temporary file names are not unique across
    # processes, and it removes the folder it created when the connection closes
    temp = (Path(tempfile.gettempdir())
            / f"distbench-duckdb-{os.getuid()}-{os.getpid()}-{next(_CONNECTIONS)}")
    out: dict[str, Any] = {"threads": int(threads) if threads else max(1, cpus),
                           "temp_directory": str(temp)}
    if memory:
        out["memory_limit"] = memory
    return out


def is_run_dir(path: Path) -> bool:
    """The folder holds a run (a manifest or commit markers)."""
    return path.is_dir() and ((path / COMMITS).is_dir() or (path / "manifest.json").exists())


def check_run_dir(run_dir: Path | str) -> Path:
    """Returns the run folder as a Path, or raises NotARunError with a useful message."""
    path = Path(run_dir)
    if not path.is_dir():
        raise NotARunError(f"no such run directory: {path}")
    if not is_run_dir(path):
        raise NotARunError(
            f"{path} is not a distbench run directory (no manifest.json or {COMMITS}/); "
            "pass a folder such as results/<run-id>"
        )
    return path


def _run_in(path: Path) -> Path | None:
    """The run a subfolder of a folder of runs holds: the subfolder itself, or the run folder
    of the same name inside it (the layout of ``--output-format seed``:
    ``results/run_X/run_X/``); None when it holds neither."""
    if is_run_dir(path):
        return path
    inner = path / path.name
    return inner if is_run_dir(inner) else None


def find_runs(paths: Sequence[Path | str]) -> list[Path]:
    """The runs named by ``paths``: each is a run folder, or a folder whose direct subfolders
    include runs (such as ``results/``, runs written with ``--output-format seed`` included;
    its other entries are ignored).

    Returns:
        The run folders in the order given (a folder's runs sorted by name), each once.

    Raises:
        NotARunError: a path does not exist, or is neither a run nor a folder of runs.
    """
    if not paths:
        raise NotARunError("no run directory given")
    out: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            raise NotARunError(f"no such run directory: {path}")
        if is_run_dir(path):
            found = [path]
        else:
            found = sorted(run for p in path.iterdir() if p.is_dir()
                           and (run := _run_in(p)) is not None)
            if not found:
                raise NotARunError(
                    f"{path} is neither a distbench run directory nor a folder of runs (no "
                    f"manifest.json or {COMMITS}/ in it or its subfolders); pass results/<run-id> "
                    "or a folder that holds runs"
                )
        for run in found:
            key = run.resolve()
            if key not in seen:
                seen.add(key)
                out.append(run)
    return out


_SQL_TYPES = {pa.bool_(): "BOOLEAN", pa.int32(): "INTEGER", pa.int64(): "BIGINT",
              pa.float64(): "DOUBLE", pa.string(): "VARCHAR"}


def sql_type(kind: pa.DataType) -> str:
    """DuckDB's SQL name of an Arrow type of the schemas (lists of them included)."""
    if pa.types.is_list(kind):
        return sql_type(kind.value_type) + "[]"
    try:
        return _SQL_TYPES[kind]
    except KeyError:
        raise TypeError(f"no SQL type for Arrow type {kind}") from None


def _empty_table_sql(table: str) -> str:
    """DDL of an empty table with ``table``'s columns (what a view of a table that has no
    files yet reads; cheaper to create than registering an empty Arrow table)."""
    columns = ", ".join(f'"{f.name}" {sql_type(f.type)}' for f in SCHEMAS[table])
    return f"CREATE TABLE _empty_{table} ({columns})"


def _select_list(table: str) -> str:
    """The view's columns in schema order: ``*`` unless some are derived (computed here)."""
    schema = SCHEMAS[table]
    if all(derived_expression(f) is None for f in schema):
        return "*"
    parts = []
    for f in schema:
        expr = derived_expression(f)
        parts.append(f'{expr} AS "{f.name}"' if expr else f'"{f.name}"')
    return ", ".join(parts)


def open_run(
    run_dir: Path | str,
    *,
    threads: int | None = None,
    safe: bool = False,
    tables: Iterable[str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Opens a DuckDB connection with a view per table over the committed files.

    Args:
        run_dir: The run folder.
        threads: DuckDB threads (default: the CPUs this process may use).
        safe: Lock the connection to the run's committed files (see the module docstring).
        tables: Make views of these tables only (default: all; each view costs a few
            milliseconds to create).
    """
    return open_runs([check_run_dir(run_dir)], threads=threads, safe=safe, tables=tables)


def open_runs(
    run_dirs: Sequence[Path | str],
    *,
    threads: int | None = None,
    safe: bool = False,
    tables: Iterable[str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Opens a DuckDB connection whose views are the union of several runs' committed files.

    Args:
        run_dirs: The run folders (each checked with :func:`check_run_dir`; expand folders of
            runs with :func:`find_runs` first).
        threads: DuckDB threads (default: the CPUs this process may use).
        safe: Lock the connection to the runs' committed files (see the module docstring).
        tables: Make views of these tables only (default: all).
    """
    if not run_dirs:
        raise NotARunError("no run directory given")
    files: dict[str, list[str]] = {}
    mixed: set[str] = set()  # tables with a file of other columns (an older version's)
    for run_dir in run_dirs:
        for name, (paths, uniform) in committed_tables(check_run_dir(run_dir)).items():
            files.setdefault(name, []).extend(paths)
            if not uniform:
                mixed.add(name)
    files = {name: sorted(set(paths)) for name, paths in files.items()}
    config: dict[str, Any] = resource_settings(threads)
    if safe:
        config.update(autoinstall_known_extensions=False, autoload_known_extensions=False)
    con = duckdb.connect(":memory:", config=config)
    if safe:
        # DuckDB checks both the path it is given (a pattern when escaped) and the files the
        # pattern matches: exactly the committed files.
        allowed = sorted({q for paths in files.values() for p in paths
                          for q in (p, escape_glob(p))})
        con.execute("SET allowed_paths = ?", [allowed])
        con.execute("SET allowed_directories = ?", [[]])
        con.execute("SET enable_external_access = false")
    statements = [f"CREATE MACRO {name} AS {body}" for name, body in MACROS.items()]
    made = list(SCHEMAS if tables is None else tables)
    for name in made:
        schema_for(name)  # an unknown table name raises here
        paths = files.get(name)
        if paths:
            listing = ", ".join(_sql_str(escape_glob(p)) for p in paths)
            # Reconciling columns by name opens every file at once (about 60 KB each: 300 MB
            # for 5,000 shards); files that all store today's columns need none of it.
            by_name = "true" if name in mixed else "false"
            statements.append(f"CREATE VIEW {name} AS SELECT {_select_list(name)} "
                              f"FROM read_parquet([{listing}], union_by_name={by_name})")
        else:
            statements.append(_empty_table_sql(name))
            statements.append(f"CREATE VIEW {name} AS SELECT * FROM _empty_{name}")
    for name, (sql, needs) in VIEWS.items():  # the families' views over these tables
        if all(t in made for t in needs):
            statements.append(f"CREATE VIEW {name} AS {sql}")
    con.execute(";\n".join(statements))
    if safe:
        con.execute("SET lock_configuration = true")
    return con


def cursor_records(cursor: Any) -> list[dict[str, Any]]:
    """The rows of an executed DuckDB statement (``con.execute(...)``) as dicts, column name
    -> value, values as DuckDB returns them."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def cursor_groups(cursor: Any, key: int = 1) -> dict[Any, list[tuple]]:
    """The rows of an executed DuckDB statement grouped by their first ``key`` columns (the
    value itself for one, a tuple for more), each row's other values kept in order."""
    out: dict[Any, list[tuple]] = {}
    for row in cursor.fetchall():
        out.setdefault(row[0] if key == 1 else row[:key], []).append(row[key:])
    return out


def fetch_records(con: Any, sql: str) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dicts, strict-JSON clean (a NaN or infinity is None): what
    every export writes."""
    return [strict_json(row) for row in cursor_records(con.execute(sql))]
