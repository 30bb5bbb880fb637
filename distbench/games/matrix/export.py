"""``distbench export`` of a matrix run (the family's ``Presentation.export`` hook): the
games, the trials and the summary as JSON, with the seed tool's names for the game fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from distbench.store.catalog import fetch_records


def export_json(con: Any, out_dir: Path, run_id: str) -> list[Path]:
    """Writes ``games.json``, ``trials.json`` and ``summary.json`` into ``out_dir``.

    ``games.json``: one object per game (``game_id``, ``payoff_matrix``, ``row_strategy``,
    ``col_strategy``, ``value``, ...). ``trials.json``: one object per trial, with the game's
    id, the mode, the parsed ``action`` (1-based, as the model wrote it) or ``strategy``, the
    scores and the raw answer. ``summary.json``: the run summary (as the run wrote it).
    """
    from distbench.games.matrix.summary import matrix_summary

    games = fetch_records(
        con,
        """SELECT game_id, bucket, seed, rows AS num_rows, cols AS num_cols,
                  payoff AS payoff_matrix, nash_row AS row_strategy,
                  nash_col AS col_strategy, value, gap_degenerate
           FROM games ORDER BY bucket, seed, game_index""",
    )
    trials = fetch_records(
        con,
        """SELECT game_id, mode, trial, provider, model,
                  decision + 1 AS action, strategy, parse_status, raw_text,
                  llm_value, br_value, nash_gap, exploitability
           FROM trials ORDER BY bucket, seed, game_index, mode, trial""",
    )
    summary = matrix_summary(con)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, payload in (
        ("games.json", games),
        ("trials.json", trials),
        ("summary.json", {"run_id": run_id, "groups": summary}),
    ):
        path = out_dir / name
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written
