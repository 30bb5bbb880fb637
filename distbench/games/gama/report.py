"""The ``gama`` family's section of ``distbench report``: GAMA's score per game and table
with its interval, the distance to equilibrium, the invalid answers, and a bar chart of the
scores."""

from __future__ import annotations

from typing import Any

from distbench.games.gama.summary import summarize
from distbench.report.document import Figure, Table

COLUMNS = ("game", "variant", "table_label", "games", "complete", "forfeit", "failed",
           "gama_score", "gama_score_lo", "gama_score_hi", "distance", "distance_lo",
           "distance_hi", "invalid", "moves", "invalid_rate", "reasks")
PLAYER_COLUMNS = ("game", "variant", "table_label", "player", "seats", "mean_rank",
                  "mean_payoff")


def section(doc: Any, con: Any) -> None:
    """Per game and table: GAMA's score (0-100) over the complete games with its 95%
    interval, the mean distance of the moves from the equilibrium, invalid answers and
    re-asks; per player of mixed tables, the mean rank and payoff."""
    rows = summarize(con)
    sec = doc.section("GAMA-Bench games")
    sec.text("GAMA-Bench's eight games of n players (ten by default). GAMA's score (0-100, its "
             "own formula per game) is the mean over the complete games, with a 95% bootstrap "
             "interval over games; a game ended by an invalid answer (forfeit) is counted, not "
             "scored. distance: the mean distance of the moves from the game's equilibrium, "
             "where it has one.")
    tables = [r for r in rows if r["kind"] == "table"]
    if not tables:
        sec.text("No gama games in this run.")
        return
    sec.table(Table.of_records("gama_summary", "Per game and table", COLUMNS, tables))
    players = [r for r in rows if r["kind"] == "player"]
    if players:
        sec.table(Table.of_records("gama_players_summary", "Players of mixed tables",
                                   PLAYER_COLUMNS, players))
    from distbench.report import figures

    drawing = figures.record_bars(
        tables, [f"{r['game']}\n{r['table_label']}" for r in tables], "gama_score",
        n="complete", title="GAMA's score per game", ylabel="GAMA score (0-100)",
        ylim=(0.0, 100.0))
    if drawing is not None:
        sec.figure(Figure("gama_scores", "GAMA's score per game (95% intervals)", drawing))
