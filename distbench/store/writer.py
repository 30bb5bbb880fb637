"""The run directory and its only writer.

Layout of ``<output_dir>/<run_id>/``::

    manifest.json            what was asked (command, config, versions, seeds), state, counts
    summary.json             the summary, written at the end
    games/<chunk_id>.parquet one file per generated chunk of games
    trials/<shard_id>.parquet one file per shard
    _commits/<shard_id>.json  commit marker: the files the shard owns, with row counts, sizes
                             and content hashes (:mod:`distbench.store.integrity`)
    .lock                    held by the driver writing the run (:func:`exclusive`)

Every file is written to a hidden temporary name in its final folder and moved into place with
an atomic rename. A shard's rows become visible only when its commit marker exists; readers
(:mod:`distbench.store.catalog`) list files from the markers, never by globbing, and take a
file only when it is a regular file of the run with the size its marker records. A shard that is
redone writes the same names again, so it overwrites and never duplicates.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import math
import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from distbench.store.fields import derived_expression
from distbench.store.integrity import (
    COMMITS,
    DAMAGED_SUFFIX,
    HASH_NAME,
    TMP_PREFIX,
    RunDirectoryError,
    content_hash,
    damage_error,
    marker_paths,
    read_marker,
    scan,
)
from distbench.store.schema import HARNESS_COLUMN, schema_for, stored_columns_id

log = logging.getLogger(__name__)

LOCK = ".lock"


class RunDirBusy(RunDirectoryError):
    """Another process is writing to the run directory."""


class RunWriteError(RunDirectoryError):
    """A file of the run could not be written (a full disk, no permission): the message names
    the file and the cause, and nothing committed before it is lost."""


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}-{path.name}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise RunWriteError(f"cannot write {path}: {exc.strerror or exc}"
                            + ("; committed shards are kept: free some space and run the "
                               "same command again to resume" if exc.errno == errno.ENOSPC
                               else "")) from None
    finally:
        try:
            if tmp.exists():
                tmp.unlink()
        except OSError:
            pass


def strict_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None: strict JSON (RFC 8259 has
    no NaN), which every parser reads."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """Writes ``payload`` as indented strict JSON (non-finite numbers as null), atomically."""
    text = json.dumps(strict_json(payload), indent=2, sort_keys=False, allow_nan=False)
    _atomic_write_bytes(path, (text + "\n").encode())


def read_json(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly the stored columns of ``schema``, in its order and types.

    Derived columns (computed by the catalog's views) are dropped when present; a column the
    schema does not know raises. A dictionary-encoded column whose values have the field's
    type is kept encoded (producers encode columns that repeat a few values, such as ids and
    labels: cheaper to build, send and write; the Parquet type is the same). Other columns are
    cast; a missing column or an impossible cast raises. Fields carry no metadata: the
    descriptions live in the schema modules, and writing them into every file's Arrow schema
    costs about a quarter of a trials shard's encoding.
    """
    if HARNESS_COLUMN in schema.names and HARNESS_COLUMN not in table.column_names:
        table = with_harness(table, None)
    elif HARNESS_COLUMN in table.column_names and HARNESS_COLUMN not in schema.names:
        table = table.drop_columns([HARNESS_COLUMN])  # a schema set without it: not stored
    target, casts = _conform_plan(table.schema, schema)
    arrays = [table[name].cast(cast) if cast is not None else table[name]
              for name, cast in casts]
    return pa.Table.from_arrays(arrays, schema=target)


@lru_cache(maxsize=256)
def _conform_plan(source: pa.Schema, schema: pa.Schema):
    """The output schema and, per stored column, the type to cast to (None: keep)."""
    unknown = set(source.names) - set(schema.names)
    if unknown:
        raise ValueError(f"columns not in the schema: {', '.join(sorted(unknown))}")
    fields, casts = [], []
    for field in schema:
        if derived_expression(field) is not None:
            continue
        if field.name not in source.names:
            raise ValueError(f"table has no column {field.name!r}")
        kind = source.field(field.name).type
        stored = field.remove_metadata()
        if pa.types.is_dictionary(kind) and kind.value_type == field.type:
            fields.append(stored.with_type(kind))
            casts.append((field.name, None))
        else:
            fields.append(stored)
            casts.append((field.name, field.type if kind != field.type else None))
    return pa.schema(fields, metadata=schema.metadata), tuple(casts)


@dataclass(frozen=True, slots=True)
class EncodedTable:
    """A table already encoded as a Parquet file's bytes (encoded where the shard ran, so the
    driver only moves bytes to disk).

    Attributes:
        data: The Parquet file.
        rows: Its number of rows.
    """

    data: bytes
    rows: int


_WRITE_BATCH = 1 << 16  # rows per internal write step (Arrow's default 1024: 12 % slower)


def encode_parquet(table: pa.Table) -> bytes:
    """``table`` as Parquet bytes.

    Dictionary encoding is tried on string and boolean columns only (numbers are mostly
    distinct), and min/max statistics are kept for the integer columns only, which is where a
    filter can skip row groups; both choices about halve the encoding time of a trials shard.
    """
    dict_cols, stat_cols = [], []
    for field in table.schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_string(kind) or pa.types.is_boolean(kind):
            dict_cols.append(field.name)
        elif pa.types.is_integer(kind):
            stat_cols.append(field.name)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy", use_dictionary=dict_cols,
                   write_statistics=stat_cols, write_batch_size=_WRITE_BATCH)
    return sink.getvalue().to_pybytes()


MAX_TEXT_CHARS = 65_536
"""Longest model answer stored: a longer one in a :data:`TEXT_COLUMNS` column keeps its first
``MAX_TEXT_CHARS`` characters followed by :data:`CLIP_MARK` and its full length (a 10 MB answer
would otherwise be stored whole, in every row that quotes it)."""

TEXT_COLUMNS = ("raw_text", "response_text")
"""Columns holding a model's answer verbatim (every family's ``raw_text``, the calls table's
``response_text``): the ones :func:`clip_text` bounds."""

CLIP_MARK = " [distbench: clipped at "
"""What follows a clipped answer's kept part: ``... [distbench: clipped at 65,536 of N
characters]``; ``raw_text LIKE '%[distbench: clipped at%'`` finds them."""


def clip_text(table: pa.Table, limit: int = MAX_TEXT_CHARS) -> pa.Table:
    """``table`` with every :data:`TEXT_COLUMNS` value longer than ``limit`` characters
    clipped (see :data:`MAX_TEXT_CHARS`); unchanged, at the cost of one length pass per
    column, when none is."""
    import pyarrow.compute as pc

    for name in TEXT_COLUMNS:
        if name not in table.column_names:
            continue
        col = table[name]
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if not pa.types.is_string(col.type):
            continue
        lengths = pc.utf8_length(col)
        if not pc.any(pc.greater(lengths, limit)).as_py():
            continue
        mark = pa.scalar(f"{CLIP_MARK}{limit:,} of ")
        clipped = pc.binary_join_element_wise(
            pc.utf8_slice_codeunits(col, 0, limit), mark,
            pc.cast(lengths, pa.string()), pa.scalar(" characters]"), "")
        col = pc.if_else(pc.greater(lengths, limit), clipped, col)
        table = table.set_column(table.column_names.index(name), name, col)
    return table


def with_harness(table: pa.Table, harness: str | None) -> pa.Table:
    """``table`` with its :data:`~distbench.store.schema.HARNESS_COLUMN` set to ``harness`` in
    every row (added, or replaced: a rescored table carries its source's), dictionary-encoded
    (one value); None: NULL (a table written outside a shard of a family's harness)."""
    import numpy as np

    values = pa.nulls(table.num_rows, pa.string()) if harness is None else \
        pa.DictionaryArray.from_arrays(pa.array(np.zeros(table.num_rows, dtype=np.int32)),
                                       pa.array([harness], pa.string()))
    if HARNESS_COLUMN in table.column_names:
        return table.set_column(table.column_names.index(HARNESS_COLUMN), HARNESS_COLUMN, values)
    return table.append_column(HARNESS_COLUMN, values)


def encode_table(name: str, table: pa.Table | EncodedTable,
                 harness: str | None = None) -> EncodedTable:
    """Table ``name``'s rows conformed to its schema, long answers clipped
    (:func:`clip_text`), and encoded (idempotent). ``harness``: the shard's harness hash, set
    in every row (None: the table's own, or NULL)."""
    if isinstance(table, EncodedTable):
        return table
    if harness is not None:
        table = with_harness(table, harness)
    table = clip_text(conform(table, schema_for(name)))
    return EncodedTable(encode_parquet(table), table.num_rows)


@contextmanager
def exclusive(run_dir: Path | str) -> Iterator[None]:
    """Holds ``run_dir`` for one driver while the block runs: another process that tries at
    the same time gets :class:`RunDirBusy` at once. The lock (``flock`` on ``.lock``) goes
    with the process, so a killed driver leaves none behind, only its temporary files; they
    were never part of the run (readers skip them) and are removed here."""
    path = Path(run_dir)
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    locked = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise RunDirBusy(
                f"{path} is being written by another distbench process (pid {holder}); "
                "wait for it to finish, or choose another --run-id"
            ) from None
        except OSError as exc:  # a filesystem without flock: run, but say so
            log.warning("cannot lock %s (%s): make sure no other driver writes this run",
                        path, exc.strerror or exc)
        else:
            locked = True
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            # Only a holder of the lock may delete temporary files: they could be another
            # live driver's.
            for pattern in (f"{TMP_PREFIX}*", f"*/{TMP_PREFIX}*"):
                for tmp in path.glob(pattern):
                    tmp.unlink(missing_ok=True)
        yield
    finally:
        if created and locked and [p.name for p in path.iterdir()] == [LOCK]:
            # nothing was written (e.g. a model was unreachable): leave no empty run behind
            (path / LOCK).unlink()
            path.rmdir()
        os.close(fd)  # releases the lock


class RunWriter:
    """Writes a run directory; the driver process holds the only instance.

    Args:
        run_dir: The run folder, created if missing.
    """

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir)
        (self.run_dir / COMMITS).mkdir(parents=True, exist_ok=True)

    def is_committed(self, shard_id: str) -> bool:
        return (self.run_dir / COMMITS / f"{shard_id}.json").exists()

    def committed(self) -> set[str]:
        """Ids of the shards whose commit marker exists."""
        return {p.stem for p in _markers(self.run_dir)}

    def commit_shard(
        self,
        shard_id: str,
        tables: Mapping[str, tuple[str, pa.Table]],
        extra: Mapping[str, Any] | None = None,
        harness: str | None = None,
    ) -> dict[str, Any]:
        """Writes a shard's tables, then its commit marker.

        Args:
            shard_id: The shard's stable id.
            tables: table name -> (file stem, Arrow table or :class:`EncodedTable`). The file stem decides the file
                name, ``<table>/<stem>.parquet``; shards that produce the same rows (the same
                chunk of games) use the same stem, so the file is written once in effect.
            extra: More fields for the marker (e.g. counts of failures; ``harness``: the
                parts of the shard's harness and their hash, see :func:`harness_hashes`).
            harness: The harness hash set in every row of the tables not yet encoded.

        Returns:
            The marker that was written.
        """
        files: dict[str, dict[str, Any]] = {}
        for name, (stem, table) in tables.items():
            encoded = encode_table(name, table, harness)
            folder = self.run_dir / name
            if folder.is_symlink():  # readers refuse it: write a real folder of the run
                aside = folder.with_name(name + DAMAGED_SUFFIX)
                log.warning("%s is a symlink; moved aside as %s", folder, aside.name)
                folder.replace(aside)
            rel = f"{name}/{stem}.parquet"
            _atomic_write_bytes(self.run_dir / rel, encoded.data)
            files[name] = {"file": rel, "rows": encoded.rows, "bytes": len(encoded.data),
                           HASH_NAME: content_hash(encoded.data),
                           "columns": stored_columns_id(name)}
        marker = {"shard_id": shard_id, "files": files, **(extra or {})}
        write_json(self.run_dir / COMMITS / f"{shard_id}.json", marker)
        return marker


    def uncommit(self, shard_id: str) -> None:
        """Removes a shard's commit marker (its files stay until it is committed again, and
        are not read meanwhile): the next run of the plan plays the shard again."""
        (self.run_dir / COMMITS / f"{shard_id}.json").unlink(missing_ok=True)


def committed_ids(run_dir: Path | str) -> set[str]:
    """Ids of the committed shards of a run folder (none when it does not exist yet)."""
    return {p.stem for p in _markers(Path(run_dir))} if (Path(run_dir) / COMMITS).is_dir() else set()


def failed_call_shards(run_dir: Path | str) -> dict[str, int]:
    """Committed shards whose ``calls`` rows hold failed calls: shard id -> how many (sound
    markers only: a damaged one is a resume's to repair)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq


    root = Path(run_dir).resolve()
    out: dict[str, int] = {}
    for marker_path in marker_paths(root):
        listed, damage = read_marker(marker_path, root)
        entry = next((f for f in listed if f.table == "calls"), None)
        if damage is not None or entry is None:
            continue
        status = pq.read_table(entry.path, columns=["status"]).column("status")
        failed = int(pc.sum(pc.not_equal(status, "ok")).as_py() or 0)
        if failed:
            out[marker_path.stem] = failed
    return out


def _markers(run_dir: Path) -> list[Path]:
    """The commit markers (a half-written temporary marker of a killed driver is not one)."""
    return marker_paths(run_dir)


def committed_files(run_dir: Path | str) -> dict[str, list[str]]:
    """Table name -> sorted list of committed files (absolute paths, each once).

    Every marker and file is checked first (:func:`distbench.store.integrity.scan`: paths
    inside the run, regular files, recorded sizes).

    Raises:
        RunDamaged: a marker or a file it lists is damaged or foreign (one line naming it).
    """
    return {name: paths for name, (paths, _) in committed_tables(run_dir).items()}


def committed_tables(run_dir: Path | str) -> dict[str, tuple[list[str], bool]]:
    """Table name -> (sorted committed files, whether every one of them stores today's
    columns of the table, as its marker records), checked as in :func:`committed_files`."""
    files, damages = scan(run_dir)
    if damages:
        raise damage_error(run_dir, damages)
    out = {}
    for name, listed in files.items():
        try:
            current = stored_columns_id(name)
        except KeyError:  # a table no registered family knows
            current = None
        out[name] = ([str(f.path) for f in listed],
                     current is not None and all(f.columns == current for f in listed))
    return out
