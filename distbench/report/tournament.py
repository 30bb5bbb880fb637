"""The tournament section of ``distbench report``: the ranking by Bradley–Terry strength with
its intervals (a dot plot), the pairwise matrix of mean score differences (a heat map), the
Nash-averaging mass (bars), and the ``ratings`` and ``pairings`` tables (CSV and LaTeX as every
report table). Written for any run with ``ratings`` rows (``distbench tournament``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from distbench.report.document import Document, Figure, Table
from distbench.store.catalog import cursor_records

RATINGS_SQL = """
SELECT rank, player, matches, wins, mean_margin, bt_strength, bt_low, bt_high, elo, elo_low,
       elo_high, nash_mass, nash_rating, confidence
FROM ratings ORDER BY rank, player
"""
PAIRINGS_SQL = """
SELECT player_i, player_j, matches, wins_i, score_diff, diff_low, diff_high
FROM pairings ORDER BY player_i, player_j
"""


def _records(con: Any, sql: str) -> list[dict[str, Any]]:
    return cursor_records(con.execute(sql))


def has_tournament(con: Any) -> bool:
    """Whether the run holds a tournament's ratings."""
    return bool(con.execute("select count(*) from ratings").fetchone()[0])


def tournament_games(con: Any) -> int:
    """The games a tournament rated (each counted once: the ratings count both players')."""
    total = con.execute("select sum(matches) from ratings").fetchone()[0]
    return int(total or 0) // 2


def section(doc: Document, con: Any) -> None:
    """Adds the tournament section to ``doc``."""
    from distbench.report import figures

    ratings = _records(con, RATINGS_SQL)
    pairings = _records(con, PAIRINGS_SQL)
    if not ratings:
        return
    level = round(100 * ratings[0]["confidence"])
    family = con.execute("select any_value(family) from ratings").fetchone()[0]
    sec = doc.section("Tournament")
    sec.text(f"{len(ratings)} players of the {family} family, every pair in both seats on the "
             f"same instances. Bradley–Terry strengths (natural-log odds, mean 0; a tie counts "
             f"as half a win each) with {level}% simultaneous intervals (all players' hold at "
             "once: a max-|t| bootstrap band over games); Elo "
             "is the same fit on another scale (1500 + 400 / ln 10 x strength). Nash averaging "
             "(maximum-entropy equilibrium of the matrix of mean score differences) does not "
             "reward a player for beating many copies of one weak style: a player's rating is "
             "its mean score difference against the equilibrium mixture (0 on the support).")
    sec.table(Table.of_rows("tournament_ratings",
                            "Ranking (Bradley–Terry, Elo, Nash averaging)", ratings,
                            note=f"bt_low/bt_high: {level}% simultaneous interval; nash_mass: "
                                 "the player's weight in the equilibrium; mean_margin: mean "
                                 "seat-score difference."))
    sec.figure(Figure("tournament_ranking", "Ranking with intervals", figures.dot_intervals(
        [(r["player"], "Bradley–Terry", r["bt_strength"], r["bt_low"], r["bt_high"],
          r["matches"]) for r in ratings],
        title=f"Bradley–Terry strength with {level}% simultaneous intervals (best first)",
        xlabel="log-strength (natural-log odds, mean 0)")))
    labels = [r["player"] for r in ratings]
    index = {p: k for k, p in enumerate(labels)}
    k = len(labels)
    diff = np.full((k, k), np.nan)
    counts = np.zeros((k, k))
    for p in pairings:
        i, j = index[p["player_i"]], index[p["player_j"]]
        diff[i, j], diff[j, i] = p["score_diff"], -p["score_diff"]
        counts[i, j] = counts[j, i] = p["matches"]
    np.fill_diagonal(diff, 0.0)
    sec.figure(Figure("tournament_pairwise", "Pairwise mean score differences", figures.heatmap(
        labels, diff, counts=counts, title="Mean score difference, row player against column",
        colorbar="mean seat-score difference (family units)")))
    sec.figure(Figure("tournament_nash_mass", "Nash-averaging mass", figures.bars(
        labels, [r["nash_mass"] for r in ratings], title="Nash-averaging mass per player",
        ylabel="probability in the max-entropy equilibrium", ns=[r["matches"] for r in ratings],
        ylim=(0.0, 1.05))))
    sec.table(Table("tournament_pairings", "Pairs: games, wins, mean score difference",
                    list(pairings[0]) if pairings else [],
                    [tuple(p.values()) for p in pairings],
                    note=f"score_diff: player_i minus player_j, {level}% bootstrap interval "
                         "over the pair's games; wins_i counts a tie as half."))
