"""The beauty family's section of ``distbench report``."""

from __future__ import annotations

from typing import Any

from distbench.report.document import Figure, Table
from distbench_beauty.summary import summarize


def section(doc: Any, con: Any) -> None:
    from distbench.report import figures

    rows = summarize(con)
    sec = doc.section("p-beauty contest")
    sec.text("Each game: the model and scripted level-k opponents pick 0-100; the target is "
             "p times the mean pick. Distance and regret (against the best response to the "
             "opponents' picks) are over valid answers.")
    if not rows:
        sec.text("No beauty games in this run.")
        return
    sec.table(Table("beauty_summary", "Per model", list(rows[0]),
                    [tuple(r.values()) for r in rows]))
    labels = [f"{r['player']}\nn={r['num_players']}, p={r['fraction']:g}" for r in rows]
    if any(r["mean_regret"] is not None for r in rows):
        sec.figure(Figure("beauty_regret", "Mean regret", figures.bars(
            labels, [r["mean_regret"] for r in rows], title="Mean regret per model",
            ylabel="regret (distance above the best response)", ns=[r["games"] for r in rows])))
    else:
        sec.text("No valid answer: no regret to draw.")
