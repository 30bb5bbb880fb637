"""The openspiel family's section of ``distbench report``: outcomes, regret per move and
NashConv per game, player and opponent."""

from __future__ import annotations

from typing import Any

from distbench.report.document import Document, Table

_NOTE = ("regret/move: best action value - played action value under the exact reference "
         "(minimax for small perfect-information games; action values under an equilibrium "
         "from OpenSpiel's CFR+ for small imperfect-information games), over the player's legal "
         "moves. NashConv (OpenSpiel's exploitability module) of the player's policy: the "
         "matrix family's exploitability carried to sequential games. Intervals: 95%, Wilson "
         "for rates, bootstrap over matches otherwise.")


def _ci(r: dict[str, Any], key: str) -> tuple[Any, Any]:
    ci = r.get(f"{key}_ci95") or (None, None)
    return ci[0], ci[1]


def section(doc: Document, con: Any) -> None:
    """Adds the OpenSpiel section to ``doc``."""
    from distbench.games.openspiel.summary import openspiel_summary

    records = openspiel_summary(con)
    if not records:
        return
    sec = doc.section("OpenSpiel games")
    sec.text("Sequential games of OpenSpiel's registry played through text; an illegal or "
             "unparsable answer forfeits the match (quality 0), never replaced by a move.")
    rows = []
    for r in records:
        rows.append((r["game"], r["player"], r.get("opponent"), r["mode"], r.get("matches"),
                     r.get("quality"), *_ci(r, "quality"), r.get("win_rate"),
                     r.get("forfeit_rate"), r.get("regret_per_move"),
                     *_ci(r, "regret_per_move"), r.get("nash_conv"), *_ci(r, "nash_conv")))
    sec.table(Table(
        "openspiel_summary", "Outcomes, regret per move and NashConv",
        ["game", "player", "opponent", "mode", "matches", "quality", "quality_ci95_low",
         "quality_ci95_high", "win rate", "forfeit rate", "regret/move", "regret_ci95_low",
         "regret_ci95_high", "NashConv", "nash_conv_ci95_low", "nash_conv_ci95_high"],
        rows, note=_NOTE))
