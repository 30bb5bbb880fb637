"""The repeated family's section of ``distbench report``."""

from __future__ import annotations

from typing import Any

from distbench.games.repeated.summary import summarize
from distbench.report.document import Table

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
