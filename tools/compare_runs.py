"""Compares two run folders table by table, row for row (timing columns and run_id aside).

Used to check that a refactor changes no result: run the same command with the code before and
after, then ``python tools/compare_runs.py results/before results/after``. Exit status 0 when
every table holds the same rows, 1 otherwise (the differing tables are named).
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from distbench.games.registry import load_families
from distbench.store.catalog import committed_files
from distbench.store.schema import TIMING_COLUMNS


def table_rows(run_dir: Path, table: str, files: list[str]) -> list[tuple]:
    con = duckdb.connect()
    rel = con.read_parquet(files)
    columns = [c for c in rel.columns if c not in TIMING_COLUMNS and c != "run_id"]
    quoted = ", ".join(f'"{c}"' for c in columns)
    return con.execute(f"select {quoted} from rel order by all").fetchall()


def main(before: Path, after: Path) -> int:
    load_families()
    a, b = committed_files(before), committed_files(after)
    differing = []
    for table in sorted(set(a) | set(b)):
        rows_a = table_rows(before, table, a.get(table, [])) if a.get(table) else []
        rows_b = table_rows(after, table, b.get(table, [])) if b.get(table) else []
        same = rows_a == rows_b
        print(f"{table:14} {len(rows_a):7} rows before, {len(rows_b):7} after: "
              f"{'identical' if same else 'DIFFERENT'}")
        if not same:
            differing.append(table)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
