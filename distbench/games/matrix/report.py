"""The matrix family's section of ``distbench report``: figures and tables from the shipped
``queries/report_matrix_*.sql`` (the report frame is :mod:`distbench.report.build`)."""

from __future__ import annotations

from collections import defaultdict

import duckdb
import numpy as np

from distbench.report.bootstrap import bootstrap_mean_ci
from distbench.report.build import label, paired, records
from distbench.report.document import Document, Figure, Table
from distbench.report.stats import PairedDifference, pairwise_differences
from distbench.store.catalog import cursor_records


def _leaderboard(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """The rows of the shipped ``leaderboard`` query (the suite's ``leaderboard.csv``)."""
    from distbench.report.sql import resolve_query_file

    return cursor_records(con.execute(resolve_query_file("leaderboard").read_text(encoding="utf-8")))


LEADERBOARD_DROPPED = ("honest_nash_gap", "mean_exploitability", "mean_nash_gap",
                       "mean_label_mass")
"""Leaderboard columns the report leaves to the query (the table stays one page wide)."""
GROUPS_DROPPED = ("honest_nash_gap", "honest_exploitability", "headline_metric")
"""Likewise for the per-group table (the honest figures are the leaderboard's and the
query's)."""


def _shown(rows: list[dict], dropped: tuple[str, ...]) -> list[dict]:
    """``rows`` without the ``dropped`` columns."""
    return [{k: v for k, v in r.items() if k not in dropped} for r in rows]


def section(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Matrix games")
    sec.text("The headline is quality: per answer, 1 - exploitability / the worst pure "
             "action's exploitability on its game (1 = unexploitable, 0 = the worst pure "
             "action), an invalid answer 0, over the answered trials (calls that failed at the "
             "server are left out and counted as missing); it equals the valid rate x the "
             "quality of valid answers and compares across modes. Nash gap = best-response "
             "payoff minus the answer's payoff against the Nash opponent; exploitability = what "
             "a best-responding opponent takes from the answer: both in the game's payoff "
             "units, lower is better, over valid answers; the older honest figures score an "
             "invalid answer as chance on its game (the uniform strategy).")
    board = _shown(_leaderboard(con), LEADERBOARD_DROPPED)
    sec.table(Table.of_rows("matrix_leaderboard",
                            "Leaderboard: the headline (quality) per mode", board,
                            note="Ranked by quality (higher is better; an invalid answer 0, "
                                 "failed calls left out); models whose 95% intervals overlap "
                                 "share a rank. Every column: distbench query RUN --file "
                                 "leaderboard."))
    groups = _shown(records(con, "matrix_groups"), GROUPS_DROPPED)
    sec.table(Table.of_rows("matrix_groups", "Per bucket x model x mode", groups,
                            note="Every column: distbench query RUN --file "
                                 "report_matrix_groups."))
    from distbench.games.matrix.summary import matrix_summary

    summary = matrix_summary(con)
    _headline_figure(sec, summary)
    _invariance_table(sec, summary)

    trials = records(con, "matrix_trials")
    for metric, fid, unit in (("nash_gap", "matrix_nash_gap", "Nash gap (payoff units)"),
                              ("exploitability", "matrix_exploitability",
                               "exploitability (payoff units)")):
        by_bucket: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for r in trials:
            by_bucket[r["bucket"]][f"{label(r)}\n{r['mode']}"].append(r[metric])
        if by_bucket:
            panels = [(b, list(d), [np.array(v) for v in d.values()])
                      for b, d in sorted(by_bucket.items())]
            sec.figure(Figure(fid, f"Distribution of {metric} per bucket x model x mode",
                              figures.box_panels(panels, title=f"{metric} per bucket x model x mode",
                                                 ylabel=unit)))

    deg = records(con, "matrix_degenerate")
    sec.table(Table("matrix_degenerate", "Degenerate-gap share per bucket",
                    ["bucket", "games", "degenerate_games", "degenerate_share"],
                    [tuple(r.values()) for r in deg],
                    note="On a degenerate game every answer has Nash gap 0: read exploitability."))
    if deg:
        sec.figure(Figure("matrix_degenerate", "Degenerate-gap share per bucket", figures.bars(
            [r["bucket"] for r in deg], [r["degenerate_share"] for r in deg],
            title="Share of games with a degenerate Nash gap", ylabel="share of games (0-1)",
            ns=[r["games"] for r in deg], ylim=(0, 1.05))))

    clusters: dict[tuple, list[tuple[float, int, int]]] = defaultdict(list)
    for r in records(con, "matrix_tier_games"):
        clusters[(r["tier"] or "(none)", r["mode"])].append((r["gap_sum"], r["valid"], r["trials"]))
    tier_rows = []
    for (tier, mode), cl in sorted(clusters.items()):
        sums = np.array([c[0] for c in cl], dtype=float)
        counts = np.array([c[1] for c in cl], dtype=float)
        valid = int(counts.sum())
        ci = bootstrap_mean_ci(sums, counts)
        tier_rows.append((tier, mode, len(cl), valid, float(sums.sum() / valid) if valid else None,
                          ci[0] if ci else None, ci[1] if ci else None))
    sec.table(Table("matrix_tier_gradient", "Tier gradient: mean Nash gap with 95% CI",
                    ["tier", "mode", "games", "valid_trials", "mean_nash_gap", "ci95_low",
                     "ci95_high"], tier_rows,
                    note="Percentile bootstrap resampling whole games (seeded)."))
    if tier_rows:
        tiers = sorted({r[0] for r in tier_rows})
        series = {}
        for mode in sorted({r[1] for r in tier_rows}):
            by = {r[0]: r for r in tier_rows if r[1] == mode}
            series[mode] = ([by[t][4] if t in by else None for t in tiers],
                            [(by[t][5], by[t][6]) if t in by and by[t][5] is not None else None
                             for t in tiers],
                            [by[t][2] if t in by else 0 for t in tiers])
        sec.figure(Figure("matrix_tier_gradient", "Tier gradient", figures.interval_lines(
            tiers, series, title="Mean Nash gap per tier (95% bootstrap CI, n = games)",
            xlabel="model tier", ylabel="mean Nash gap (payoff units)")))

    valid = [(f"{label(r)} {r['mode']}", r) for r in groups]
    by_model_mode: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for lab, r in valid:
        answered = r["trials"] - (r.get("missing") or 0)  # failed calls are not the model's
        by_model_mode[lab][0] += (r["valid_rate"] or 0.0) * answered
        by_model_mode[lab][1] += answered
    if by_model_mode:
        labels = sorted(by_model_mode)
        sec.figure(Figure("matrix_valid_rate", "Valid-answer rate per model x mode", figures.bars(
            labels, [by_model_mode[k][0] / by_model_mode[k][1] if by_model_mode[k][1] else None
                     for k in labels],
            title="Valid-answer rate per model x mode", ylabel="valid answers (share, 0-1)",
            ns=[int(by_model_mode[k][1]) for k in labels], ylim=(0, 1.1))))

    svr = records(con, "matrix_stated_vs_read")
    if svr:
        pts: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for r in svr:
            pts[label(r)][0].append(r["read"])
            pts[label(r)][1].append(r["stated"])
        rows = []
        for lab, (x, y) in sorted(pts.items()):
            xa, ya = np.array(x), np.array(y)
            corr = float(np.corrcoef(xa, ya)[0, 1]) if len(xa) > 1 and xa.std() > 0 and ya.std() > 0 else None
            rows.append((lab, len(xa), float(np.abs(xa - ya).mean()), corr))
        sec.table(Table("matrix_stated_vs_read", "Stated (mixed) vs read (logprob) strategy",
                        ["model", "points (game x action)", "mean_abs_difference", "correlation"],
                        rows, note="Per game and row action: mean stated probability (mode "
                                   "'mixed') against mean probability read from the log-probs."))
        sec.figure(Figure("matrix_stated_vs_read", "Stated vs read strategy",
                          figures.scatter_identity(
                              {k: (np.array(v[0]), np.array(v[1])) for k, v in pts.items()},
                              title="Stated (mixed) vs read (logprob) action probabilities",
                              xlabel="read probability (logprob mode)",
                              ylabel="stated probability (mixed mode)")))

    units = records(con, "matrix_game_means")
    modes = sorted({r["mode"] for r in units})
    for column, tid, what, xlabel in (
        ("mean_nash_gap", "matrix_paired", "Nash gap",
         "Paired difference in mean Nash gap (payoff units)"),
        ("mean_exploitability", "matrix_paired_exploitability", "exploitability",
         "Paired difference in mean exploitability (payoff units)"),
        ("valid_rate", "matrix_paired_valid_rate", "valid-answer rate",
         "Paired difference in valid-answer rate"),
    ):
        diffs: list[tuple[str, PairedDifference]] = []
        for mode in modes:
            sub = [r for r in units if r["mode"] == mode]
            diffs += [(mode, d) for d in pairwise_differences(
                [label(r) for r in sub], [r["game_id"] for r in sub],
                [r[column] for r in sub])]
        if len(modes) > 1:
            diffs += [("all modes", d) for d in pairwise_differences(
                [label(r) for r in units], [(r["game_id"], r["mode"]) for r in units],
                [r[column] for r in units])]
        paired(sec, tid, diffs, "games", what, xlabel)


def _invariance_table(sec, summary: list[dict]) -> None:
    """``--perturb``: per group and presentation, consistency, position bias and the
    headline against the base presentation (summary.json's ``perturbation`` entries)."""
    rows = []
    for r in summary:
        for e in r.get("perturbation") or ():
            c = e.get("consistency_ci95") or [None, None]
            b = e.get("position_bias_ci95") or [None, None]
            d = e.get("headline_diff_ci95") or [None, None]
            rows.append((r["bucket"], f"{r['provider']}:{r['model']}", r["mode"],
                         e["presentation"], e["games"], e["valid_rate"], e["consistency"],
                         c[0], c[1], e["position_only_consistency"], e.get("position_bias"),
                         b[0], b[1], e["headline_metric"], e["headline_base"], e["headline"],
                         e["headline_diff"], d[0], d[1]))
    if not rows:
        return
    sec.table(Table(
        "matrix_invariance", "Invariance: the same games in other presentations (--perturb)",
        ["bucket", "model", "mode", "presentation", "games", "valid_rate", "consistency",
         "consistency_ci95_low", "consistency_ci95_high", "position_only_consistency",
         "position_1_bias", "position_1_bias_ci95_low", "position_1_bias_ci95_high",
         "headline_metric", "headline_base", "headline_presented", "headline_diff",
         "headline_diff_ci95_low", "headline_diff_ci95_high"], rows,
        note="Consistency: does the model pick the same underlying action as in the base "
             "presentation (1 = invariant; position_only_consistency: what answering by "
             "position alone scores, the presentation's chance level). Position-1 bias: 0 = "
             "the first label is chosen as often as the model's base answers predict, 1 = "
             "always. headline_diff: the headline quality under the presentation minus "
             "the base's, paired over games. 95% bootstrap intervals over games."))


def _headline_figure(sec, summary: list[dict]) -> None:
    """Per bucket x mode, each model's headline (quality: an invalid answer 0, failed calls left
    out) with its 95% bootstrap CI (the run summary's figures: the same numbers as
    summary.json)."""
    from distbench.report import figures

    rows = []
    for r in summary:
        if r.get("quality") is None:
            continue  # nothing answered: no headline
        ci = r.get("quality_ci95") or [None, None]
        rows.append((f"{r['bucket']} {r['mode']}", f"{r['provider']}:{r['model']}",
                     r["quality"], ci[0], ci[1], r["answered_trials"]))
    sec.figure(Figure("matrix_headline", "Headline (quality) per bucket and model",
                      figures.dot_intervals(
                          rows, title="Headline quality per bucket x mode (95% bootstrap CI)",
                          xlabel="quality 0-1, higher is better (1 - exploitability / the "
                                 "worst pure action's; an invalid answer 0)")))
