"""The negotiation family's section of ``distbench report``: figures and tables from the shipped
``queries/report_negotiation_*.sql`` (the report frame is :mod:`distbench.report.build`)."""

from __future__ import annotations

from collections import defaultdict

import duckdb
import numpy as np

from distbench.report.bootstrap import bootstrap_mean_ci
from distbench.report.build import paired, records
from distbench.report.document import Document, Figure, Table
from distbench.report.stats import pairwise_differences


def section(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Negotiation")
    sec.text("Each episode counts once per seat. Main score (0-100, 100 = Pareto-optimal "
             "deal) is over episodes that were not aborted.")
    out = records(con, "negotiation_outcomes")
    units = records(con, "negotiation_units")
    cl: dict[tuple, list[tuple[float, int]]] = defaultdict(list)
    for r in units:
        cl[(r["player"], r["mode"], r["lang"])].append((r["score_sum"], r["scored"]))
    rows = []
    for r in out:
        c = cl.get((r["player"], r["mode"], r["lang"]), [])
        ci = bootstrap_mean_ci(np.array([x[0] for x in c], dtype=float),
                               np.array([x[1] for x in c], dtype=float)) if c else None
        rows.append((*r.values(), ci[0] if ci else None, ci[1] if ci else None))
    columns = [*(out[0] if out else []), "main_score_ci95_low", "main_score_ci95_high"]
    sec.table(Table("negotiation_outcomes", "Outcomes per player x mode x lang", columns, rows,
                    note="CI: percentile bootstrap resampling instances (seeded)."))
    clem = records(con, "negotiation_clembench")
    sec.table(Table.of_rows(
        "negotiation_clembench", "clembench's aggregates per player x mode x lang (and 'all')",
        clem,
        note="As clembench defines them: pct_played = 100 x share not aborted; quality_score = "
             "mean episode score over played episodes (coop: 100 x sum / max sum; semi: 100 x "
             "(1 - Pareto improvement / the larger player's total), 0 on lose; comp: 100); "
             "clemscore = pct_played / 100 x quality_score. mean_main_score and "
             "mean_comp_score are distbench's own."))
    cats = [f"{r['player']}\n{r['mode']}/{r['lang']}" for r in out]
    ns = [r["episodes"] for r in out]
    sec.figure(Figure("negotiation_outcomes", "Outcome shares", figures.grouped_bars(
        cats, figures.record_series(out, {"success": "success_share", "lose": "lose_share",
                                          "aborted": "aborted_share"}),
        title="Negotiation outcomes per player x mode/lang", ylabel="share of episodes (0-1)",
        ns=ns, stacked=True)))
    sec.figure(Figure("negotiation_scores", "Main score and Pareto-optimal rate",
                      figures.grouped_bars(
                          cats, {"main score / 100": [None if r["mean_main_score"] is None
                                                      else r["mean_main_score"] / 100 for r in out],
                                 "Pareto-optimal rate": [r["pareto_optimal_rate"] for r in out]},
                          title="Main score and Pareto-optimal rate per player x mode/lang",
                          ylabel="score / 100, rate (0-1)", ns=ns)))
    deals = con.execute(
        "SELECT mode, success, score_a::DOUBLE / nullif(max_score_a, 0), "
        "score_b::DOUBLE / nullif(max_score_b, 0) FROM episodes WHERE NOT aborted "
        "ORDER BY episode_id").fetchall()
    points: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for mode, success, x, y in deals:
        if x is not None and y is not None:
            key = f"{'success' if success else 'lose'} ({mode})"
            points[key][0].append(x)
            points[key][1].append(y)
    sec.figure(Figure("negotiation_pareto", "Where the deals land", figures.pareto_positions(
        {k: (np.array(v[0]), np.array(v[1])) for k, v in sorted(points.items())},
        title="Pareto position: each episode's scores as shares of each seat's best")))
    diffs = []
    for key in sorted({(r["mode"], r["lang"]) for r in units}):
        sub = [r for r in units if (r["mode"], r["lang"]) == key and r["scored"]]
        diffs += [(f"{key[0]}/{key[1]}", d) for d in pairwise_differences(
            [r["player"] for r in sub], [r["instance_id"] for r in sub],
            [r["score_sum"] / r["scored"] for r in sub])]
    paired(sec, "negotiation_paired", diffs, "instances", "main score",
            "Paired difference in mean main score (points, 0-100 scale)")
