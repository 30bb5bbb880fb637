"""Hostile and damaged run folders: hand-placed markers and symlinks, glob characters in folder
names beside sibling runs, truncated, missing and corrupt files. No read outside the run, no
row from another run, every damage named, and a resume repairs it with rows exactly once."""

from __future__ import annotations

import json
import os
import shutil

import pyarrow.parquet as pq
import pytest

from distbench.cli.errors import UserError
from distbench.cli.query import run_sql
from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.store.catalog import escape_glob, open_run, open_runs
from distbench.store.integrity import RunDamaged, verify
from distbench.store.writer import COMMITS


def _config(num_games: int = 6, seed: int = 1) -> MatrixRunConfig:
    # 2 trials per game and 4 games per shard: a few shards, so one can be damaged alone
    return MatrixRunConfig(buckets=("2x2_lowVar_mixed",), seeds=(seed,), num_games=num_games,
                           num_trials=2, modes=("pure",), llm=make_spec("dummy"),
                           shard_trials=8)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A finished run, copied by each test that damages it."""
    out = tmp_path_factory.mktemp("pristine") / "r"
    run_config(_config(), out, parallel=False)
    return out


@pytest.fixture
def run(pristine, tmp_path):
    out = tmp_path / "results" / "r"
    shutil.copytree(pristine, out, symlinks=True)
    (out / ".lock").unlink(missing_ok=True)
    return out


def _rows(run_dir) -> list[tuple]:
    return run_sql(run_dir, "select shard_id, game_id, trial_id, raw_text from trials "
                            "order by all")[1]


def _marker(run_dir, table: str = "trials") -> tuple[str, str]:
    """(marker path, file rel) of the first committed shard's ``table`` file."""
    path = sorted((run_dir / COMMITS).glob("*.json"))[0]
    return str(path), json.loads(path.read_text())["files"][table]["file"]


def _secret(tmp_path):
    secret = tmp_path / "secret.parquet"
    pq.write_table(pq.read_table(next((tmp_path / "results" / "r" / "trials").iterdir())),
                   secret)
    return secret


# --- 1. the run folder is a trust boundary ----------------------------------------------------

@pytest.mark.parametrize("listed", [
    "../../../../proc/self/environ",
    "/proc/self/environ",
    "trials/../../../../proc/self/environ",
    "x/../../secret.parquet",
    "trials/sub/x.parquet",
])
def test_a_hand_placed_marker_pointing_outside_is_refused_and_named(run, listed):
    (run / COMMITS / "evil.json").write_text(json.dumps(
        {"shard_id": "evil", "files": {"trials": {"file": listed, "rows": 1}}}))
    with pytest.raises(UserError, match=r"_commits/evil\.json") as err:
        run_sql(run, "select content from read_text('/proc/self/environ')")
    assert "environ" not in str(err.value).split("lists")[0]  # named, not read
    assert "\n" not in str(err.value)


def test_the_environment_is_never_read_through_a_marker(run, monkeypatch):
    monkeypatch.setenv("DISTBENCH_CANARY", "canary-value-123")
    (run / COMMITS / "evil.json").write_text(json.dumps(
        {"shard_id": "evil", "files": {"x": {"file": "../../../../proc/self/environ"}}}))
    for sql in ("select content from read_text('/proc/self/environ')",
                "select * from read_text('/proc/self/environ')"):
        with pytest.raises(UserError) as err:
            run_sql(run, sql)
        assert "canary-value" not in str(err.value)


def test_a_marker_listing_a_symlink_to_another_runs_file_is_refused(run, tmp_path):
    secret = _secret(tmp_path)
    (run / "trials" / "link.parquet").symlink_to(secret)
    (run / COMMITS / "evil.json").write_text(json.dumps(
        {"shard_id": "evil", "files": {"trials": {"file": "trials/link.parquet", "rows": 4}}}))
    with pytest.raises(RunDamaged, match=r"trials/link\.parquet: is a symlink"):
        open_run(run)


def test_a_committed_file_swapped_for_a_symlink_is_refused(run, tmp_path):
    _, rel = _marker(run)
    target = run / rel
    shutil.copy(target, tmp_path / "copy.parquet")  # same bytes: only the symlink is wrong
    target.unlink()
    target.symlink_to(tmp_path / "copy.parquet")
    with pytest.raises(UserError, match=f"{rel}: is a symlink"):
        run_sql(run, "select count(*) from trials")


def test_a_table_folder_swapped_for_a_symlink_is_refused(run, tmp_path):
    shutil.move(run / "trials", tmp_path / "elsewhere")
    (run / "trials").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UserError, match=r"folder trials/ is not a real folder"):
        run_sql(run, "select count(*) from trials")


def test_a_commits_folder_swapped_for_a_symlink_is_refused_and_set_aside_on_resume(run,
                                                                                   pristine,
                                                                                   tmp_path):
    shutil.move(run / COMMITS, tmp_path / "markers")
    (run / COMMITS).symlink_to(tmp_path / "markers")
    with pytest.raises(UserError, match=r"_commits/: is a symlink"):
        run_sql(run, "select count(*) from trials")
    outcome = run_config(_config(), run, parallel=False)
    assert outcome.executed == outcome.shards and _rows(run) == _rows(pristine)
    assert (run / f"{COMMITS}.damaged").is_symlink() and not (run / COMMITS).is_symlink()


def test_a_run_folder_reached_through_a_symlink_is_read(run, tmp_path):
    (tmp_path / "latest").symlink_to(run)
    assert _rows(tmp_path / "latest") == _rows(run)


# --- 2. glob characters never mix runs --------------------------------------------------------

@pytest.mark.parametrize("name,sibling", [
    ("run*", "runX"), ("br[1]", "br1"), ("q?x", "qax"), ("it's", "its"), ("a]b", "a]c"),
])
def test_a_folder_name_with_glob_characters_reads_its_own_files_only(tmp_path, name, sibling):
    results = tmp_path / "results"
    run_config(_config(num_games=4, seed=1), results / name, parallel=False)
    run_config(_config(num_games=6, seed=2), results / sibling, parallel=False)
    assert run_sql(results / name, "select count(*), min(seed), max(seed) from trials")[1] \
        == [(8, 1, 1)]
    assert run_sql(results / sibling, "select count(*), min(seed) from trials")[1] == [(12, 2)]
    both = run_sql([results], "select run_id, count(*) from trials group by 1 order by 1")[1]
    assert sorted(both) == sorted([(name, 8), (sibling, 12)])
    con = open_runs([results / name], tables=("trials",))  # not sandboxed: the same
    assert con.execute("select count(*) from trials").fetchone() == (8,)


def test_escape_glob_turns_every_glob_character_into_a_class():
    assert escape_glob("/r/run*/t/a.parquet") == "/r/run[*]/t/a.parquet"
    assert escape_glob("/r/b[1]?/a.parquet") == "/r/b[[]1][?]/a.parquet"
    assert escape_glob("/plain/a.parquet") == "/plain/a.parquet"


# --- 3. damaged shards: named, and repaired by a resume ---------------------------------------

def _truncate(run, rel):
    data = (run / rel).read_bytes()
    (run / rel).write_bytes(data[: len(data) // 2])


def _flip(run, rel):
    data = bytearray((run / rel).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (run / rel).write_bytes(bytes(data))


@pytest.mark.parametrize("damage,reason", [
    (_truncate, "truncated or replaced"),
    (lambda run, rel: (run / rel).unlink(), "missing"),
])
def test_a_damaged_file_is_named_by_query(run, damage, reason):
    _, rel = _marker(run)
    damage(run, rel)
    with pytest.raises(UserError, match=f"{rel}: .*{reason}") as err:
        run_sql(run, "select count(*) from trials")
    assert "ermission" not in str(err.value)


@pytest.mark.parametrize("text", ['{"shard', "[]", '{"files": 3}', "\xff\xfe",
                                  '{"files": {"trials": {"file": "trials/x.parquet", '
                                  '"rows": -1}}}'])
def test_a_corrupt_marker_is_named(run, text):
    path = run / COMMITS / "m-0.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(UserError, match=r"_commits/m-0\.json: corrupt commit marker"):
        run_sql(run, "select count(*) from trials")


def test_verify_finds_a_same_size_change_by_its_hash(run):
    _, rel = _marker(run)
    _flip(run, rel)
    damages = verify(run)
    assert [d.what for d in damages] == [rel]
    assert "hash" in damages[0].reason


@pytest.mark.parametrize("damage", ["truncate", "missing", "flip", "marker", "games",
                                    "symlink", "evil", "folder"])
def test_a_resume_replays_damaged_shards_and_rows_come_exactly_once(run, pristine, damage,
                                                                     tmp_path):
    marker, rel = _marker(run)
    if damage == "truncate":
        _truncate(run, rel)
    elif damage == "missing":
        (run / rel).unlink()
    elif damage == "flip":
        _flip(run, rel)
    elif damage == "marker":
        with open(marker, "w") as fh:
            fh.write('{"shard_id": ')
    elif damage == "games":
        _truncate(run, _marker(run, "games")[1])
    elif damage == "symlink":
        shutil.copy(run / rel, tmp_path / "copy.parquet")
        (run / rel).unlink()
        (run / rel).symlink_to(tmp_path / "copy.parquet")
    elif damage == "folder":
        shutil.copytree(run / "trials", tmp_path / "elsewhere")
        shutil.rmtree(run / "trials")
        (run / "trials").symlink_to(tmp_path / "elsewhere")
    elif damage == "evil":
        (run / COMMITS / "evil.json").write_text(json.dumps(
            {"files": {"x": {"file": "../../../../proc/self/environ"}}}))
    said: list[str] = []
    outcome = run_config(_config(), run, parallel=False, on_stage=said.append)
    assert outcome.executed == {"evil": 0, "folder": outcome.shards}.get(damage, 1)
    assert all(line.startswith("damaged: ") for line in said)
    assert len(said) == (outcome.shards if damage == "folder" else 1)  # one line per shard
    assert verify(run) == []
    assert _rows(run) == _rows(pristine)
    assert run_sql(run, "select count(*), count(distinct trial_id) from trials")[1] == [(12, 12)]
    assert json.loads((run / "manifest.json").read_text())["state"] == "complete"


def test_old_markers_without_sizes_or_hashes_are_still_read_and_checked(run, pristine):
    for path in (run / COMMITS).glob("*.json"):
        marker = json.loads(path.read_text())
        for entry in marker["files"].values():
            del entry["bytes"], entry["blake2b"]
        path.write_text(json.dumps(marker))
    assert _rows(run) == _rows(pristine)
    assert verify(run) == []
    _, rel = _marker(run)
    _truncate(run, rel)
    assert [d.what for d in verify(run)] == [rel]


def test_markers_record_size_and_hash(pristine):
    for path in (pristine / COMMITS).glob("*.json"):
        for entry in json.loads(path.read_text())["files"].values():
            assert entry["bytes"] == os.path.getsize(pristine / entry["file"])
            assert len(entry["blake2b"]) == 32


# --- 4. DuckDB's resources ---------------------------------------------------------------------

def test_duckdb_gets_a_memory_limit_threads_and_a_temp_folder_of_ours(pristine, monkeypatch):
    monkeypatch.setenv("DISTBENCH_DUCKDB_MEMORY", "300MB")
    for safe in (False, True):
        con = open_run(pristine, safe=safe, threads=1)
        memory, threads, temp = con.execute(
            "select current_setting('memory_limit'), current_setting('threads'), "
            "current_setting('temp_directory')").fetchone()
        assert threads == 1 and memory.endswith("MiB") and float(memory.split()[0]) < 300
        assert os.path.isabs(temp) and "distbench-duckdb" in temp


def test_an_overlong_answer_is_clipped_with_a_mark_where_tables_are_encoded(tmp_path):
    import pyarrow as pa

    from distbench.store.writer import MAX_TEXT_CHARS, RunWriter, clip_text

    long = "x" * (10 * MAX_TEXT_CHARS)
    table = pa.table({"raw_text": [long, "short", None],
                      "response_text": pa.array([long, "a", "b"]).dictionary_encode()})
    clipped = clip_text(table).to_pydict()
    assert clipped["raw_text"][1:] == ["short", None]
    assert clipped["raw_text"][0] == ("x" * MAX_TEXT_CHARS
                                      + f" [distbench: clipped at 65,536 of {len(long)} "
                                        "characters]")
    assert clipped["response_text"][0] == clipped["raw_text"][0]
    assert clip_text(table.slice(1)) is not None and clip_text(table.slice(1)).equals(
        table.slice(1))
    # through the writer: the stored file holds the clipped answer
    from table_rows import trials_rows as _trials

    rows = _trials("s1", 2)
    rows = rows.set_column(rows.column_names.index("raw_text"), "raw_text",
                           pa.array([long, "ok"]))
    RunWriter(tmp_path).commit_shard("s1", {"trials": ("s1", rows)})
    con = open_run(tmp_path)
    assert con.execute("select max(length(raw_text)) from trials").fetchone()[0] < 70_000
