"""The fog family's section of ``distbench report``: figures and tables from the shipped
``queries/report_fog_*.sql`` (the report frame is :mod:`distbench.report.build`)."""

from __future__ import annotations

from collections import defaultdict

import duckdb
import numpy as np

from distbench.report.build import paired, records
from distbench.report.document import Document, Figure, Table
from distbench.report.stats import pairwise_differences


def section(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Fog of war")
    pairings = records(con, "fog_pairings")
    sec.table(Table.of_rows("fog_pairings", "Results per agent and opponent (both seats)",
                            pairings))
    cats = [f"{r['agent']}\nvs {r['opponent']}" for r in pairings]
    sec.figure(Figure("fog_win_rates", "Win rates by pairing", figures.grouped_bars(
        cats, figures.record_series(pairings, {"win": "win_rate", "draw": "draw_rate",
                                               "loss": "loss_rate"}),
        title="Fog-of-war results by pairing", ylabel="share of games (0-1)",
        ns=[r["games"] for r in pairings], stacked=True)))

    agents = records(con, "fog_agents")
    sec.table(Table.of_rows("fog_agents", "Belief quality per agent", agents,
                            note="Brier: multi-class, 0 best, 2 worst; log loss: -ln p(true "
                                 "power), nats."))
    sec.figure(Figure("fog_belief_scores", "Brier and log loss per agent", figures.grouped_bars(
        [r["agent"] for r in agents],
        figures.record_series(agents, {"Brier": "mean_brier",
                                       "log loss (nats)": "mean_log_loss"}),
        title="Belief scores per agent (lower is better)", ylabel="mean per game",
        ns=[r["games"] for r in agents])))

    rel = records(con, "fog_reliability")
    sec.table(Table.of_rows("fog_reliability", "Reliability bins per agent", rel,
                            note="Forecast = one belief probability about a living enemy force; "
                                 "bins of width 0.1."))
    if rel:
        by: dict[str, list[dict]] = defaultdict(list)
        for r in rel:
            by[r["agent"]].append(r)
        sec.figure(Figure("fog_reliability", "Reliability diagrams", figures.reliability(
            {a: (np.array([x["mean_forecast"] for x in v]),
                 np.array([x["observed_frequency"] for x in v]),
                 np.array([x["forecasts"] for x in v], dtype=float)) for a, v in sorted(by.items())},
            title="Reliability of beliefs over enemy powers")))

    gain = records(con, "fog_info_gain")
    sec.table(Table.of_rows("fog_info_gain", "Information gain of scouting", gain,
                            note="Entropy drop (bits) of the beliefs about forces revealed by "
                                 "scouting."))
    if gain:
        sec.figure(Figure("fog_info_gain", "Information gain of scouting", figures.bars(
            [f"{r['agent']} (acc {r['scout_accuracy']:g})" for r in gain],
            [r["mean_info_gain_per_reveal"] for r in gain],
            title="Mean information gain per report with a reveal",
            ylabel="entropy drop (bits)", ns=[r["reveal_reports"] for r in gain])))

    units = records(con, "fog_units")
    diffs = [("all", d) for d in pairwise_differences(
        [r["agent"] for r in units], [(r["seed"], r["game_index"], r["scout_accuracy"], r["scouting"]) for r in units],
        [r["score_sum"] / r["games"] for r in units])]
    paired(sec, "fog_paired", diffs, "game seeds", "score rate",
            "Paired difference in score rate (win 1, draw 0.5)")
