"""The run writer (temp file + rename + commit marker) and the DuckDB views."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from table_rows import trials_rows as _trials

from distbench.games.matrix.schema import TRIALS
from distbench.store.catalog import NotARunError, open_run
from distbench.store.schema import SCHEMAS, describe, empty_table
from distbench.store.writer import COMMITS, RunDirBusy, RunWriter, committed_files, exclusive


def test_committed_shards_are_visible_and_uncommitted_files_are_not(tmp_path):
    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    # A file without a marker (a crashed shard) and a leftover temp file stay invisible.
    pq.write_table(_trials("s2", 5), tmp_path / "trials" / "s2.parquet")
    pq.write_table(_trials("s3", 7), tmp_path / "trials" / ".tmp-abc-s3.parquet")
    con = open_run(tmp_path)
    assert con.execute("select count(*) from trials").fetchone()[0] == 3
    assert con.execute("select count(*) from games").fetchone()[0] == 0


def test_a_redone_shard_overwrites_and_never_duplicates(tmp_path):
    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    writer.commit_shard("s2", {"trials": ("s2", _trials("s2", 4))})
    con = open_run(tmp_path)
    assert con.execute("select count(*) from trials").fetchone()[0] == 7
    assert writer.committed() == {"s1", "s2"}
    assert not list(tmp_path.rglob(".tmp-*"))


def test_a_killed_drivers_half_written_files_are_ignored_then_removed(tmp_path):
    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    # what a driver killed in the middle of writing leaves: an empty temporary marker and a
    # temporary data file (pathlib's glob matches names starting with a dot)
    (tmp_path / COMMITS / ".tmp-0123-s2.json").write_bytes(b"")
    pq.write_table(_trials("s2", 4), tmp_path / "trials" / ".tmp-4567-s2.parquet")
    (tmp_path / ".tmp-89ab-manifest.json").write_bytes(b"{")
    assert writer.committed() == {"s1"}
    assert list(committed_files(tmp_path)) == ["trials"]
    assert open_run(tmp_path).execute("select count(*) from trials").fetchone()[0] == 3
    with exclusive(tmp_path):  # the next driver
        assert not list(tmp_path.rglob(".tmp-*"))
        assert RunWriter(tmp_path).committed() == {"s1"}


def test_one_driver_at_a_time_and_a_killed_one_leaves_no_lock(tmp_path):
    with exclusive(tmp_path):
        with pytest.raises(RunDirBusy, match=rf"another distbench process \(pid {os.getpid()}\)"):
            with exclusive(tmp_path):
                pass
    with exclusive(tmp_path):  # free again
        pass
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from distbench.store.writer import exclusive\n"
         f"with exclusive({str(tmp_path)!r}):\n"
         "    print('held', flush=True)\n"
         "    time.sleep(60)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunDirBusy, match=rf"pid {holder.pid}\)"):
            with exclusive(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    with exclusive(tmp_path):  # the killed holder's lock went with it
        pass


def test_shards_sharing_a_games_chunk_list_it_once(tmp_path):
    writer = RunWriter(tmp_path)
    games = empty_table("games")
    writer.commit_shard("a", {"games": ("chunk", games)})
    writer.commit_shard("b", {"games": ("chunk", games)})
    assert len(committed_files(tmp_path)["games"]) == 1


def test_empty_views_have_the_schema_columns(tmp_path):
    RunWriter(tmp_path)
    con = open_run(tmp_path)
    for name, schema in SCHEMAS.items():
        cols = [d[0] for d in con.execute(f"select * from {name}").description]
        assert cols == schema.names


def test_empty_views_have_the_types_duckdb_gives_the_arrow_schema(tmp_path):
    RunWriter(tmp_path)
    con = open_run(tmp_path)
    for name in SCHEMAS:
        arrow = empty_table(name)  # noqa: F841  (read by DuckDB below)
        expected = con.execute("describe select * from arrow").fetchall()
        assert con.execute(f"describe {name}").fetchall() == expected, name


def test_a_run_that_wrote_nothing_leaves_no_folder(tmp_path):
    run = tmp_path / "results" / "r"
    with pytest.raises(RuntimeError, match="unreachable"), exclusive(run):
        raise RuntimeError("unreachable model")
    assert not run.exists()
    with exclusive(run):
        RunWriter(run)
    assert (run / COMMITS).is_dir()  # something was written: kept
    with exclusive(run):
        pass
    assert run.exists()  # not created by this driver: kept


def test_a_filesystem_without_locks_runs_with_a_warning(tmp_path, monkeypatch, caplog):
    import errno
    import fcntl

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    (tmp_path / COMMITS).mkdir(parents=True)
    other = tmp_path / COMMITS / ".tmp-77-s9.json"  # perhaps another live driver's
    other.write_bytes(b"")
    with caplog.at_level("WARNING", logger="distbench.store.writer"), exclusive(tmp_path):
        RunWriter(tmp_path).commit_shard("s1", {"trials": ("s1", _trials("s1", 2))})
    assert "cannot lock" in caplog.text and "No locks available" in caplog.text
    assert other.exists()  # not deleted without the lock
    assert RunWriter(tmp_path).committed() == {"s1"}


def test_views_of_some_tables_only(tmp_path):
    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    con = open_run(tmp_path, tables=("trials", "calls"))
    views = {r[0] for r in con.execute("select view_name from duckdb_views() "
                                       "where not internal").fetchall()}
    assert views == {"trials", "calls"}
    assert con.execute("select count(*) from trials").fetchone()[0] == 3
    with pytest.raises(KeyError, match="unknown table 'nope'"):
        open_run(tmp_path, tables=("nope",))


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    with pytest.raises(NotARunError, match="not a distbench run directory"):
        open_run(tmp_path)
    with pytest.raises(NotARunError, match="no such run directory"):
        open_run(tmp_path / "missing")


def test_every_column_is_described():
    for name in SCHEMAS:
        for column, _type, description in describe(name):
            assert description, f"{name}.{column} has no description"


def test_dictionary_columns_are_written_as_plain_strings_and_unknown_columns_refused(tmp_path):
    from distbench.store.writer import conform

    table = _trials("s1", 4)
    encoded = table.set_column(table.column_names.index("bucket"), "bucket",
                               table["bucket"].dictionary_encode())
    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", encoded)})
    con = open_run(tmp_path)
    assert con.execute("select typeof(bucket), count(*) from trials group by all").fetchall() \
        == [("VARCHAR", 4)]
    with pytest.raises(ValueError, match="not in the schema: surprise"):
        conform(table.append_column("surprise", pa.array([1, 2, 3, 4])), TRIALS)
    with pytest.raises(ValueError, match="no column 'bucket'"):
        conform(table.drop(["bucket"]), TRIALS)


def _view_sql(con, name: str) -> str:
    return con.execute("select sql from duckdb_views() where view_name = ?", [name]).fetchone()[0]


def test_files_of_todays_columns_are_read_as_they_are_and_an_older_file_by_name(tmp_path):
    """Markers record each file's columns id: when every file of a table has today's columns
    the view reads them without reconciling schemas (cheap on many files); a file an older
    version wrote (a column missing, no id in its marker) is read by column name, its missing
    column NULL."""
    import json

    from distbench.store.integrity import HASH_NAME, content_hash

    writer = RunWriter(tmp_path)
    writer.commit_shard("s1", {"trials": ("s1", _trials("s1", 3))})
    writer.commit_shard("s2", {"trials": ("s2", _trials("s2", 4))})
    con = open_run(tmp_path)
    assert "union_by_name = false" in _view_sql(con, "trials")
    before = con.execute("select count(*), count(latency_ms) from trials").fetchone()
    assert before == (7, 7)
    # s2 as an older version wrote it: without latency_ms, its marker without a columns id
    path = tmp_path / "trials" / "s2.parquet"
    old = pq.read_table(path).drop_columns(["latency_ms"])
    pq.write_table(old, path)
    data = path.read_bytes()
    marker_path = tmp_path / COMMITS / "s2.json"
    marker = json.loads(marker_path.read_text())
    entry = marker["files"]["trials"]
    entry.update(bytes=len(data), **{HASH_NAME: content_hash(data)})
    del entry["columns"]
    marker_path.write_text(json.dumps(marker))
    con = open_run(tmp_path)
    assert "union_by_name = true" in _view_sql(con, "trials")
    assert con.execute("select count(*), count(latency_ms) from trials").fetchone() == (7, 3)
