"""GAMA-Bench's published leaderboard reproduced from its records.

Imports a GAMA-Bench checkout's ``raw_results`` with ``distbench import gama`` (the records
read unchanged, every game scored by ``distbench.games.gama.scoring``), then computes the 13
models x 8 games cells and Overall with DuckDB over the imported run, as GAMA's ``board.py``
does: five runs ``<model>_<game>_v1_1`` .. ``_5`` per cell, Bar from the implicit records,
Auction from the first-price ones; a cell is the mean of its five run scores, Overall the mean
of the eight unrounded cells; both rounded to one decimal half to even (numpy). Compares them
with the checkout's ``leadboard.md`` and prints the cells that differ, ``cells matching /104``
and ``Overall matching /13``.

The board is the named query ``gama_board`` (``distbench/queries/gama_board.sql``), so
``distbench query RUN --file gama_board`` prints the same table.

Usage::

    python benchmarks/bench_gama_board.py /path/to/GAMABench [--output-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from distbench.games.gama.importer import import_folder
from distbench.games.gama.rules import GAMA_LABELS, GAME_NAMES
from distbench.store.catalog import open_run

QUERY = Path(__file__).resolve().parent.parent / "distbench" / "queries" / "gama_board.sql"
"""The named query (``distbench query RUN --file gama_board``) that computes the board."""


def read_board(path: Path) -> dict[str, list[float]]:
    """``leadboard.md`` as model -> [Overall, the eight games in GAMA's order]."""
    board = {}
    for line in path.read_text(encoding="utf-8").splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 10:
            continue
        name = cells[0].replace("👑", "").replace("**", "").strip()
        board[name] = [float(c) for c in cells[1:10]]
    return board


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a GAMA-Bench checkout (commit 41ebccf)")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="where the imported run goes (default: a temporary folder)")
    args = parser.parse_args(argv)
    board = read_board(args.checkout / "leadboard.md")
    with tempfile.TemporaryDirectory() as tmp:
        out = args.output_dir or Path(tmp)
        t0 = time.perf_counter()
        result = import_folder(args.checkout / "raw_results", out, "gama-board",
                               command=["bench_gama_board.py"])
        elapsed = time.perf_counter() - t0
        con = open_run(result.run_dir)
        try:
            rows = con.execute(QUERY.read_text(encoding="utf-8")).fetchall()
        finally:
            con.close()
    print(f"imported {result.records} records ({result.games} games, {result.scored} scored) "
          f"in {elapsed:.1f} s")
    ours = {row[0]: (list(row[1:10]), row[10]) for row in rows}
    matches = overall_matches = 0
    for model, published in board.items():
        values, runs = ours.get(model, ([None] * 9, 0))
        for i, game in enumerate(GAME_NAMES):
            if values[i + 1] == published[i + 1]:
                matches += 1
            else:
                print(f"differs: {model} {GAMA_LABELS[game]}: {values[i + 1]}, published "
                      f"{published[i + 1]}")
        if values[0] == published[0] and runs == 40:
            overall_matches += 1
        else:
            print(f"differs: {model} Overall: {values[0]} ({runs} runs), published {published[0]}")
    print(f"cells matching: {matches}/{8 * len(board)}")
    print(f"Overall matching: {overall_matches}/{len(board)}")
    return 0 if matches == 8 * len(board) and overall_matches == len(board) else 1


if __name__ == "__main__":
    sys.exit(main())
