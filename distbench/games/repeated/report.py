"""The repeated family's section of ``distbench report``."""

from __future__ import annotations

from typing import Any

from distbench.games.repeated.summary import summarize
from distbench.report.document import Figure, Table

COLUMNS = ("stage", "opponent", "model", "matches", "missing", "quality", "quality_lo",
           "quality_hi", "valid_rate", "quality_of_valid", "complete_rate", "mean_total",
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
             "quality (the headline): a complete match's total between the worst and the best "
             "achievable against the machine (against a model: the share of the stage payoffs' "
             "range), a forfeit 0; matches ended by a failed call are left out (missing). "
             "Intervals: 95%, bootstrap over matches.")
    if not rows:
        sec.text("No repeated matches in this run.")
        return
    sec.table(Table.of_records("repeated_summary", "Per stage, opponent and model", COLUMNS, rows))
    from distbench.report import figures

    labels = [f"{r['stage']}\nvs {r['opponent']}" for r in rows]
    drawing = figures.record_bars(
        rows, labels, "cooperation", n="matches", title="Cooperation rate per opponent",
        ylabel="share of the model's moves that cooperate", ylim=(0.0, 1.0))
    if drawing is not None:
        sec.figure(Figure("repeated_cooperation", "Cooperation rate (95% intervals)", drawing))
