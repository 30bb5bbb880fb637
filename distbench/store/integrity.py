"""What a run folder may hand to a reader: committed files that distbench wrote, checked.

A run folder is a trust boundary: its files may have been damaged (a disk filled up, a copy was
cut short) or placed by hand. A reader (``query``, the summary, ``export``, the report, a
resume) takes a file only when all of these hold:

- its commit marker is a JSON object whose ``files`` entries name ``<table>/<name>.parquet``
  (a relative path of exactly two parts, the first the table's name: no ``..``, no absolute
  path, no other folder);
- the table's folder is a real folder of the run (not a symlink) and the file a regular file
  (not a symlink), so the path cannot leave the run folder;
- its size is the one its marker records (markers written since size and hash were added;
  a size is a ``stat``, so every reader checks it).

:func:`verify` (a resume, ``distbench check``) checks more: the content's BLAKE2b hash, or,
for markers written before hashes, that the file is Parquet with the marker's row count.
A marker that fails any of these is a :class:`Damage`, one line naming the file and what is
wrong with it; a resume sets such markers aside and plays their shards again.
"""

from __future__ import annotations

import hashlib
import json
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from distbench.errors import UserError

COMMITS = "_commits"
"""The folder of commit markers in a run folder."""

TMP_PREFIX = ".tmp-"
"""Name prefix of a file being written (moved into place by a rename; never read)."""


class RunDirectoryError(ValueError):
    """The run directory cannot be used for this run (the message says why and what to do)."""

HASH_NAME = "blake2b"
"""The marker key of a file's content hash: BLAKE2b with a 16-byte digest, in hex."""

DAMAGED_SUFFIX = ".damaged"
"""A marker set aside by a resume: ``_commits/<shard_id>.json.damaged`` (no longer a marker,
kept for a person to look at)."""


def content_hash(data: bytes) -> str:
    """The content hash recorded in commit markers (BLAKE2b, 16 bytes, hex)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_hash(path: Path) -> str:
    """:func:`content_hash` of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class RunDamaged(RunDirectoryError, UserError):
    """A run folder holds a damaged or foreign commit marker or committed file (the message
    names the file, what is wrong, and what to do)."""


@dataclass(frozen=True, slots=True)
class CommittedFile:
    """A file a commit marker lists.

    Attributes:
        table: The table it belongs to.
        path: Its path: the run folder's resolved path joined with ``rel``.
        rel: Its path inside the run folder (``<table>/<name>.parquet``).
        rows: Rows, as the marker records them.
        size: Bytes, as the marker records them (None: a marker older than sizes).
        digest: Content hash (:func:`content_hash`), or None for an old marker.
        columns: The stored columns' id when it was written
            (:func:`distbench.store.schema.stored_columns_id`), or None for an old marker.
    """

    table: str
    path: Path
    rel: str
    rows: int | None
    size: int | None
    digest: str | None
    columns: str | None = None


@dataclass(frozen=True, slots=True)
class Damage:
    """A marker that cannot be trusted, and why.

    Attributes:
        marker: The marker's path.
        shard_id: The shard it commits (its file name).
        what: The file at fault (the marker itself, or a file it lists), relative to the run.
        reason: What is wrong, a few words.
    """

    marker: Path
    shard_id: str
    what: str
    reason: str

    def line(self) -> str:
        shard = f" (shard {self.shard_id})" if self.shard_id != COMMITS else ""
        return f"{self.what}: {self.reason}{shard}"


def marker_paths(run_dir: Path) -> list[Path]:
    """The commit markers of a run, sorted (a killed driver's temporary marker is none)."""
    folder = run_dir / COMMITS
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith(TMP_PREFIX))


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def read_marker(path: Path, root: Path) -> tuple[list[CommittedFile], Damage | None]:
    """The files a marker lists, or the damage that makes it unusable (its JSON or shape, or
    an entry that names a path other than ``<table>/<name>.parquet``). Nothing is read from
    the files here."""
    what = _rel(path, root)

    def bad(reason: str) -> tuple[list[CommittedFile], Damage]:
        return [], Damage(path, path.stem, what, reason)

    if path.is_symlink() or not path.is_file():
        return bad("commit marker is not a regular file (a symlink?)")
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return bad(f"corrupt commit marker ({first})")
    files = marker.get("files") if isinstance(marker, dict) else None
    if not isinstance(files, dict):
        return bad("corrupt commit marker (no 'files' object)")
    out = []
    for table, entry in files.items():
        rel = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(rel, str):
            return bad(f"corrupt commit marker (entry {table!r} names no file)")
        parts = PurePosixPath(rel).parts
        if (len(parts) != 2 or parts[0] != table or "\\" in rel or "\x00" in rel
                or not parts[1].endswith(".parquet") or parts[1].startswith(".")):
            return bad(f"lists {rel!r}, not a file of the run (only <table>/<name>.parquet "
                       "inside the run folder is read)")
        numbers = [entry.get(k) for k in ("rows", "bytes")]
        if any(n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0)
               for n in numbers):
            return bad(f"corrupt commit marker (entry {table!r} has a bad row or byte count)")
        digest, columns = entry.get(HASH_NAME), entry.get("columns")
        if any(v is not None and not isinstance(v, str) for v in (digest, columns)):
            return bad(f"corrupt commit marker (entry {table!r} has a bad hash or columns id)")
        out.append(CommittedFile(table, root / table / parts[1], rel, numbers[0], numbers[1],
                                 digest, columns))
    return out, None


def check_file(file: CommittedFile, *, full: bool = False) -> str | None:
    """What is wrong with a committed file, or None. Always: it exists, is a regular file in
    a real folder of the run (no symlink on the way) and has the marker's size. With ``full``:
    its hash, or (an old marker without one) its Parquet footer's row count."""
    folder = file.path.parent
    try:
        if stat.S_ISLNK(folder.lstat().st_mode) or not folder.is_dir():
            return f"folder {folder.name}/ is not a real folder of the run (a symlink?)"
        info = file.path.lstat()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "is a symlink (only regular files inside the run folder are read)"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if file.size is not None and info.st_size != file.size:
        return (f"is {info.st_size:,} bytes, its commit marker says {file.size:,} "
                "(truncated or replaced)")
    if not full:
        return None
    try:
        if file.digest is not None:
            if file_hash(file.path) != file.digest:
                return "content does not match its commit marker's hash (damaged or replaced)"
            return None
        import pyarrow.parquet as pq

        rows = pq.read_metadata(file.path).num_rows
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a broken file vary
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"is not a readable Parquet file ({first})"
    if file.rows is not None and rows != file.rows:
        return f"holds {rows:,} rows, its commit marker says {file.rows:,}"
    return None


def scan(run_dir: Path | str, *, full: bool = False
         ) -> tuple[dict[str, list[CommittedFile]], list[Damage]]:
    """The committed files of a run by table (those of sound markers, each file once) and the
    damaged markers. ``full`` as in :func:`check_file`; a file listed by several markers is
    checked once per recorded (size, hash)."""
    root = Path(run_dir).resolve()
    files: dict[str, dict[str, CommittedFile]] = {}
    damages: list[Damage] = []
    if (root / COMMITS).is_symlink():
        return {}, [Damage(root / COMMITS, COMMITS, f"{COMMITS}/",
                           "is a symlink, not the run's own folder of commit markers")]
    checked: dict[tuple[str, int | None, str | None], str | None] = {}
    for marker in marker_paths(root):
        listed, damage = read_marker(marker, root)
        if damage is None:
            for file in listed:
                key = (file.rel, file.size, file.digest)
                if key not in checked:
                    checked[key] = check_file(file, full=full)
                if checked[key] is not None:
                    damage = Damage(marker, marker.stem, file.rel, checked[key])
                    break
        if damage is not None:
            damages.append(damage)
            continue
        for file in listed:
            files.setdefault(file.table, {}).setdefault(file.rel, file)
    return {t: [by_rel[r] for r in sorted(by_rel)] for t, by_rel in files.items()}, damages


def verify(run_dir: Path | str) -> list[Damage]:
    """Every damaged marker of a run, with the content hashes checked (reads every file)."""
    return scan(run_dir, full=True)[1]


def damage_error(run_dir: Path | str, damages: list[Damage]) -> RunDamaged:
    """One line for a reader that met damaged markers: the first, how many, what to do."""
    more = f" (and {len(damages) - 1} more)" if len(damages) > 1 else ""
    return RunDamaged(
        f"damaged run {run_dir}: {damages[0].line()}{more}; resume the run (same --run-id) "
        "to play the damaged shards again, or `distbench check` to list them")


def set_aside(damage: Damage) -> None:
    """Removes a damaged marker from the run's commits, keeping it beside them as
    ``<shard_id>.json.damaged``: its shard counts as not played."""
    damage.marker.replace(damage.marker.with_name(damage.marker.name + DAMAGED_SUFFIX))
