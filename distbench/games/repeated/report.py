"""The repeated family's section of ``distbench report``."""

from __future__ import annotations

from typing import Any

from distbench.games.repeated.summary import summarize
from distbench.report.document import Figure, Table

COLUMNS = ("stage", "opponent", "model", "matches", "complete_rate", "mean_total",
           "mean_regret", "mean_regret_lo", "mean_regret_hi", "cooperation", "retaliation",
           "forgiveness", "exploitation", "brier", "log_loss")


def section(doc: Any, con: Any) -> None:
    """Per (stage, opponent, model): completion, totals, regret against the exact optimum,
    cooperation, retaliation, forgiveness, exploitation, prediction scores."""
    rows = summarize(con)
    sec = doc.section("Repeated games")
    sec.text("The model repeats a 2x2 stage game against a classic strategy (axelrod's names, "
             "played by finite-state machines) or itself. regret = the best total achievable "
             "against the opponent's machine (dynamic programming) minus the model's. "
             "Intervals: 95%, bootstrap over matches.")
    if not rows:
        sec.text("No repeated matches in this run.")
        return
    sec.table(Table("repeated_summary", "Per stage, opponent and model", list(COLUMNS),
                    [tuple(r.get(c) for c in COLUMNS) for r in rows]))
    from distbench.report import figures

    labels = [f"{r['stage']}\nvs {r['opponent']}" for r in rows]
    drawing = figures.bars(
        labels, [r["cooperation"] for r in rows], title="Cooperation rate per opponent",
        ylabel="share of the model's moves that cooperate", ns=[r["matches"] for r in rows],
        errors=[(r["cooperation_lo"], r["cooperation_hi"]) for r in rows], ylim=(0.0, 1.0))
    if drawing is not None:
        sec.figure(Figure("repeated_cooperation", "Cooperation rate (95% intervals)", drawing))
