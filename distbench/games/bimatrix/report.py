"""The bimatrix family's section of ``distbench report``."""

from __future__ import annotations

from typing import Any

from distbench.games.bimatrix.summary import summarize
from distbench.report.document import Figure, Table

MAX_BARS = 40

COLUMNS = ("game_set", "seat", "opponent", "model", "mode", "games", "trials", "missing",
           "quality", "quality_lo", "quality_hi", "valid_rate", "quality_of_valid",
           "mean_regret", "mean_regret_lo", "mean_regret_hi", "eq_rate",
           "dominated_rate", "welfare_ratio", "cooperation", "coordination")


def section(doc: Any, con: Any) -> None:
    """Per (set, seat, opponent, model, mode): valid rate, regret with its interval, quality,
    equilibrium and dominated play, welfare, cooperation, coordination."""
    rows = summarize(con)
    sec = doc.section("General-sum games (bimatrix)")
    sec.text("The model plays the row or column seat of a general-sum game against each "
             "equilibrium's strategy of the other seat (eq1, eq2, ...), a uniform opponent, a "
             "class rule, another model or itself. regret = best payoff against the opponent "
             "faced minus the model's; quality = 1 - regret / (best - worst payoff against that "
             "opponent), 0 for an invalid answer (the headline: quality = valid rate x quality "
             "of valid answers); trials whose call failed are left out and counted as missing. "
             "Intervals: 95%, cluster bootstrap over games.")
    if not rows:
        sec.text("No bimatrix trials in this run.")
        return
    sec.table(Table.of_records("bimatrix_summary", "Per game set, seat, opponent and mode",
                               COLUMNS, rows))
    from distbench.report import figures

    shown = rows[:MAX_BARS]
    labels = [f"{r['game_set']}\n{r['seat']} vs {r['opponent']}\n{r['mode']}" for r in shown]
    drawing = figures.record_bars(
        shown, labels, "quality", n="trials", title="Mean quality per seat and opponent",
        ylabel="quality (1 - regret / max regret; invalid = 0)", ylim=(0.0, 1.0))
    if drawing is not None:
        sec.figure(Figure("bimatrix_quality", "Mean quality (95% intervals)"
                          + (f", the first {MAX_BARS} rows" if len(rows) > MAX_BARS else ""),
                          drawing))
