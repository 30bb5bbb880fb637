"""``distbench export`` on a family without an export hook: each of its tables as JSON records
and the run's summary, read back equal to the tables (fog and bimatrix runs, through the CLI)."""

from __future__ import annotations

import json

import pytest
from cli_server import distbench

from distbench.games.registry import get_family
from distbench.store.catalog import open_run

RUNS = {
    "fog": ("run", "--family", "fog", "--agent", "tier3", "--opponent", "tier1",
            "--num-games", "2"),
    "bimatrix": ("run", "--family", "bimatrix", "--class", "stag_hunt", "--llm-type", "dummy",
                 "--num-games", "3", "--num-trials", "2"),
}


@pytest.mark.parametrize("family", sorted(RUNS))
def test_export_writes_every_table_of_the_family_and_the_summary(tmp_path, family):
    out = distbench(*RUNS[family], "--run-id", "r", "--no-parallel", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = tmp_path / "results" / "r"
    out = distbench("export", str(run), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folder = run / "export"
    con = open_run(run)

    tables = [t for t in get_family(family).tables
              if con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                             [t]).fetchone()[0]]
    assert tables, "the run has none of its family's tables"
    for table in tables:
        records = json.loads((folder / f"{table}.json").read_text())
        assert len(records) == con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    con.close()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["run_id"] == "r" and summary["summary"]
