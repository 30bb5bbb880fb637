"""Run folders of the old tournament layout stay resumable and queryable.

The fixtures under ``tests/fixtures/old_duels`` are bimatrix and repeated tournaments written by
the code before their tournament hooks moved to ``tournament.py`` and their pairings' shards to
``runner.py`` (the ``*_duels`` shards, their commit markers and ratings, and what the command
printed). Today's code resumes them: a whole folder plays nothing and prints the same ranking;
a folder missing a shard plays that shard alone and finishes with the same ratings; queries
and ``rescore`` read the stored ``*_duels`` rows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_server import distbench

from distbench.engine.rescore import rescore_run
from distbench.store.catalog import open_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "old_duels"
CASES = {
    "bm": ("bimatrix_duels", ["--family", "bimatrix", "--players", "eq,uniform,dummy",
                              "--num-instances", "4"], 3 * 4 * 2),
    "rp": ("repeated_duels", ["--family", "repeated", "--players", "TitForTat,Defector,dummy",
                              "--num-instances", "3"], 3 * 3 * 2),
}


def _copy(tmp_path: Path, run: str) -> Path:
    shutil.copytree(FIXTURES / run, tmp_path / "results" / run)
    return tmp_path / "results" / run


def _ratings(run_dir: Path) -> list[tuple]:
    con = open_run(run_dir)
    try:
        return con.execute("select player, matches, wins, bt_strength, nash_rating from ratings "
                           "order by player").fetchall()
    finally:
        con.close()


def _resume(tmp_path: Path, run: str):
    _, args, _ = CASES[run]
    return distbench("tournament", *args, "--run-id", run, "--resamples", "100",
                     "--no-parallel", cwd=tmp_path)


@pytest.mark.parametrize("run", sorted(CASES))
def test_an_old_folder_resumes_with_nothing_to_play_and_the_same_ranking(tmp_path, run):
    run_dir = _copy(tmp_path, run)
    before = _ratings(run_dir)
    out = _resume(tmp_path, run)
    assert out.returncode == 0, out.stderr
    assert "0 shard(s) run, 3 already committed" in out.stderr
    assert out.stdout == (FIXTURES / f"{run}.out").read_text()
    assert _ratings(run_dir) == before


@pytest.mark.parametrize("run", sorted(CASES))
def test_an_old_folder_missing_a_shard_plays_it_and_rates_as_before(tmp_path, run):
    table, _, rows = CASES[run]
    run_dir = _copy(tmp_path, run)
    before = _ratings(run_dir)
    lost = sorted((run_dir / table).glob("*.parquet"))[0]
    (run_dir / "_commits" / f"{lost.stem}.json").unlink()
    lost.unlink()
    out = _resume(tmp_path, run)
    assert out.returncode == 0, out.stderr
    assert "1 shard(s) run, 2 already committed" in out.stderr
    assert out.stdout == (FIXTURES / f"{run}.out").read_text()
    assert _ratings(run_dir) == before
    con = open_run(run_dir)
    assert con.execute(f"select count(*), count(distinct shard_id) from {table}"
                       ).fetchone() == (rows, 3)
    con.close()


@pytest.mark.parametrize("run", sorted(CASES))
def test_an_old_folder_is_queried_and_rescored(tmp_path, run):
    table, _, rows = CASES[run]
    _copy(tmp_path, run)
    out = distbench("query", f"results/{run}", f"select count(*) as n from {table}",
                    cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert str(rows) in out.stdout
    rescored = rescore_run(tmp_path / "results" / run, tmp_path / "results" / "again")
    assert rescored is not None
    old, new = (open_run(tmp_path / "results" / r) for r in (run, "again"))
    key = "duel_id" if run == "bm" else "match_id"
    query = f"select {key}, status, score_row, score_col from {table} order by {key}"
    assert new.execute(query).fetchall() == old.execute(query).fetchall()
    old.close()
    new.close()
