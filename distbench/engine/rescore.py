"""``distbench rescore``: a finished run's stored answers read again with today's parsers and
scored again with today's metrics, into a new run, with no model call.

The engine names no family: per committed shard of the source run it reads the shard's files,
hands them to the family's ``rescore`` hook (:class:`~distbench.games.base.StoredShard` in,
:class:`~distbench.games.base.Rescored` out) and commits the new tables under the same shard id
and file names in the new run. The new run's ``manifest.json`` copies the source's and records
where it came from (``rescored_from``); its ``summary.json`` is the family's summary of the new
rows. What changed is reported as transitions (unit, old status -> new status, count) and as
the headline metrics of the two runs paired unit by unit (:func:`headline_change`).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from distbench.engine.tournament import (
    RATINGS_MARKER,
    games_harness,
    ratings_tables,
    refit,
    tournament_of,
)
from distbench.engine.worker import versions
from distbench.errors import UserError
from distbench.games.base import StoredShard
from distbench.games.family import Family
from distbench.games.registry import get_family, load_families
from distbench.llm.base import redact
from distbench.store.catalog import check_run_dir, is_run_dir, open_run
from distbench.store.harness import rescored_parts, summary_harness
from distbench.store.integrity import damage_error, marker_paths, read_marker, scan
from distbench.store.writer import RunWriter, exclusive, read_json, write_json


@dataclass(frozen=True)
class RescoreOutcome:
    """What a rescore reports.

    Attributes:
        run_dir: The new run's folder.
        source: The source run's folder.
        shards: Shards rescored.
        transitions: (unit, old status, new status) -> count over the whole run.
        diverged: Units (episodes, games) kept as stored because their re-read moves changed
            the rest of the game.
        summary: The new run's summary records.
        headline: Paired before/after rows (:func:`headline_change`).
        elapsed_s: Wall time.
    """

    run_dir: Path
    source: Path
    shards: int
    transitions: dict[tuple[str, str, str], int]
    diverged: int
    summary: list[dict[str, Any]]
    headline: list[dict[str, Any]]
    elapsed_s: float


def headline_change(source: Path, target: Path) -> list[dict[str, Any]]:
    """The headline metrics before (source) and after (target), paired unit by unit: the
    rows of ``distbench compare`` (:func:`distbench.report.compare.compare_runs`) that pair a
    player of the source with the same player of the new run (diff = before - after, with its
    paired bootstrap 95% CI). The one place that says which comparison rescore prints."""
    from distbench.games.registry import compare_units
    from distbench.report.compare import PAIRED_COLUMNS, compare_runs

    source_id = _manifest(source).get("run_id") or source.name
    target_id = _manifest(target).get("run_id") or target.name
    rows = []
    for row in compare_runs([source, target], compare_units()).paired:
        record = dict(zip(PAIRED_COLUMNS, row, strict=True))
        a_run, _, a_player = str(record["a"]).partition("/")
        b_run, _, b_player = str(record["b"]).partition("/")
        if a_player != b_player or {a_run, b_run} != {source_id, target_id}:
            continue
        flip = a_run == source_id  # compare gives a - b; rescore prints after - before
        low, high, diff = record["ci95_low"], record["ci95_high"], record["diff"]
        if flip:  # (+ 0.0: a zero difference prints as 0, not -0)
            low, high = (None if high is None else -high + 0.0), (None if low is None else -low + 0.0)
            diff = None if diff is None else -diff + 0.0
        before, after = ((record["mean_a"], record["mean_b"]) if flip
                         else (record["mean_b"], record["mean_a"]))
        rows.append({"family": record["family"], "group": record["group"],
                     "metric": record["metric"], "player": a_player, "units": record["shared"],
                     "before": before, "after": after, "after_minus_before": diff,
                     "ci95_low": low, "ci95_high": high})
    return rows


def _manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    return read_json(path) if path.exists() else {}


def rescore_run(
    source: Path,
    target: Path,
    *,
    families: Mapping[str, Family] | None = None,
    command: Iterable[str] | None = None,
) -> RescoreOutcome:
    """Rescores the run in ``source`` into the new run folder ``target``.

    Args:
        source: A finished run (its committed shards are read; nothing in it is written).
        target: The new run's folder; must not exist yet (its name is the new run id).
        families: Families to use instead of the registered ones of the same name (a test
            installs a corrected parser this way, through the family contract).
        command: The command line, recorded in the manifest.

    Raises:
        UserError: the source is not a run, is damaged, is a sweep of several families, or a
            family cannot rescore; the target exists.
    """
    t0 = time.perf_counter()
    load_families()
    try:
        source = check_run_dir(source)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _check_target(source, target)
    manifest = _manifest(source)
    _, damages = scan(source, full=True)  # every file is read: check each against its hash
    if damages:
        raise damage_error(source, damages)
    root = source.resolve()
    # a tournament's ratings are not a family's shard: they are fitted again (below)
    markers = [m for m in marker_paths(root) if m.stem != RATINGS_MARKER]
    if not markers:
        raise UserError(f"{source} has no committed shard: nothing to rescore")
    described = tournament_of(root)
    overrides = dict(families or {})
    run_id = target.name
    source_id = str(manifest.get("run_id") or source.name)
    used: dict[str, Family] = {}
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    shards = []  # (marker path, its files, its shard record, its family): checked before writing
    for marker_path in markers:
        listed, damage = read_marker(marker_path, root)
        if damage is not None:  # scan said sound; a marker changed under us
            raise damage_error(source, [damage])
        marker = json.loads(marker_path.read_text(encoding="utf-8"))
        shard = marker.get("shard") or {}
        name = str(shard.get("family") or manifest.get("family") or "")
        family = overrides.get(name) or _family(name)
        if family.rescoring is None:
            raise UserError(f"the {name} family cannot rescore a run (its Family has no "
                            "rescore hook)")
        used[name] = family
        shards.append((marker_path, listed, shard, family))
    created = not target.exists()
    try:
        with exclusive(target):
            transitions, diverged, summary = _write(target, shards, run_id, source_id,
                                                    manifest, list(used.values()), described)
            write_json(target / "manifest.json", redact({
                **manifest,
                "run_id": run_id,
                "command": list(command) if command is not None else sys.argv,
                "versions": dict(versions()),
                "rescored_from": {"run_id": source_id, "path": str(source),
                                  "state": manifest.get("state"),
                                  "versions": manifest.get("versions")},
                "state": "complete",
                "shards": {"planned": len(markers), "committed": len(markers)},
                "started_at": started,
                "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }))
    except BaseException:
        if created and target.is_dir():  # no half-rescored run is left behind
            shutil.rmtree(target, ignore_errors=True)
        raise
    headline = headline_change(source, target)
    return RescoreOutcome(target, source, len(markers), transitions, diverged, summary,
                          headline, time.perf_counter() - t0)


def _check_target(source: Path, target: Path) -> None:
    """Refuses (one line) a target that would write into a run: the source itself, a folder
    inside it, or any existing run or folder with something in it (rescore only creates)."""
    src, dst = source.resolve(), target.resolve()
    if dst == src or src in dst.parents or dst in src.parents:
        raise UserError(f"--run-id {target.name}: the new run would be written into the source "
                        f"run {source}; choose another --run-id (rescore never changes a run)")
    inside = next((p for p in dst.parents if is_run_dir(p)), None)
    if inside is not None:
        raise UserError(f"--run-id {target.name}: {target} is inside the run {inside}; "
                        "choose another --output-dir (rescore never changes a run)")
    if target.exists() and (not target.is_dir() or is_run_dir(target) or any(target.iterdir())):
        raise UserError(f"{target} already exists: choose another --run-id")


def _read(path: Path) -> Any:
    """A committed Parquet file (UserError: one line when it cannot be read)."""
    try:
        return pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot read {path.name} of the source run ({reason[:120]}): the file "
                        "is damaged; `distbench check` lists what is damaged") from None


def _without_harness(table: Any) -> Any:
    """A stored table as its family wrote it: the writer's ``harness_hash`` column left out
    (the family's hook rebuilds rows with its own schema; the writer adds the hash again)."""
    names = table.column_names
    return table.drop_columns(["harness_hash"]) if "harness_hash" in names else table


def _write(target: Path, shards: list[tuple[Path, list, dict, Family]], run_id: str,
           source_id: str, manifest: Mapping[str, Any], used: list[Family],
           described: dict[str, Any] | None = None
           ) -> tuple[dict[tuple[str, str, str], int], int, list[dict[str, Any]]]:
    """Rescores every shard into ``target`` (held by the caller), fits the ratings of a
    tournament (``described``, :func:`~distbench.engine.tournament.tournament_of`) again over
    the rescored games and writes its ``summary.json``: (transitions, diverged units,
    summary records)."""
    transitions: Counter[tuple[str, str, str]] = Counter()
    diverged = 0
    writer = RunWriter(target)
    for marker_path, listed, shard, family in shards:
        tables = {f.table: (Path(f.rel).stem, _without_harness(_read(f.path))) for f in listed}
        stored = StoredShard(run_id=run_id, source_run_id=source_id, shard_id=marker_path.stem,
                             shard=shard, tables=tables, manifest=manifest)
        try:
            rescored = family.rescore_shard(stored)
        except ValueError as exc:  # the family says why it cannot (one line)
            raise UserError(f"cannot rescore shard {marker_path.stem}: {exc}") from None
        transitions.update(rescored.transitions)
        diverged += rescored.diverged
        stats = {**rescored.result.stats, "diverged": rescored.diverged}
        harness = rescored_parts(_stored_harness(marker_path), family)
        writer.commit_shard(marker_path.stem, rescored.result.tables,
                            {"stats": stats, "shard": shard, "rescored_from": source_id,
                             "harness": harness}, harness=harness["hash"])
    if described is not None:
        family = next((f for f in used if f.name == described["family"]), None)
        ratings = refit(target, described, run_id, family)
        if ratings is not None:
            writer.commit_shard(RATINGS_MARKER, ratings_tables(ratings),
                                harness=games_harness(target))
    summary: list[dict[str, Any]] = []
    con = open_run(target)
    try:
        for family in used:
            summary += family.summary(con, None)
    finally:
        con.close()
    write_json(target / "summary.json", redact({
        "run_id": run_id, "family": manifest.get("family") or ",".join(f.name for f in used),
        "rescored_from": source_id, "groups": summary,
        "harness_hash": summary_harness(target)}))
    return dict(transitions), diverged, summary


def _stored_harness(marker_path: Path) -> dict[str, str] | None:
    """The harness parts a source shard's marker records (None before harness hashes)."""
    try:
        harness = json.loads(marker_path.read_text(encoding="utf-8")).get("harness")
    except (OSError, ValueError, AttributeError):
        return None
    return harness if isinstance(harness, dict) else None


def _family(name: str) -> Family:
    try:
        return get_family(name)
    except ValueError as exc:
        raise UserError(f"cannot rescore: {exc}") from None
