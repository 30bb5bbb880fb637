"""``build_report``: the run's report (HTML + Markdown) from DuckDB queries in ``queries/report_*``.

Sections appear only for the families present in the run: matrix (``trials``), negotiation
(``episodes``), fog-of-war (``fog_games``), and cost and speed (``calls``). Every number comes
from a query file; Python only resamples (bootstrap) and draws.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from distbench.report.bootstrap import bootstrap_mean_ci
from distbench.report.document import Document, Figure, Table, render_html, write_markdown
from distbench.report.stats import PairedDifference, pairwise_differences

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What ``build_report`` wrote.

    Attributes:
        html: Path of ``report.html``.
        markdown: Path of ``report.md``.
        figures: Figure ids in the order they appear.
        tables: Table ids in the order they appear.
        extra: Other files written (the sweep suite tables).
    """

    html: Path
    markdown: Path
    figures: tuple[str, ...]
    tables: tuple[str, ...]
    extra: tuple[Path, ...] = ()


def _query(con: duckdb.DuckDBPyConnection, name: str) -> tuple[list[str], list[tuple]]:
    from distbench.report.sql import resolve_query_file

    sql = resolve_query_file(f"report_{name}").read_text(encoding="utf-8")
    result = con.execute(sql)
    return [d[0] for d in result.description], result.fetchall()


def _records(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    columns, rows = _query(con, name)
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _paired_table(tid: str, title: str, diffs: list[tuple[str, PairedDifference]], unit: str,
                  what: str) -> Table:
    return Table(
        tid, title,
        ["model A", "model B", "subset", f"pairs ({unit})", f"mean A ({what})", f"mean B ({what})",
         "A - B", "CI 95% low", "CI 95% high", "significant"],
        [(d.a, d.b, subset, d.n, d.mean_a, d.mean_b, d.diff, d.ci_low, d.ci_high, d.significant)
         for subset, d in diffs],
        note=f"Paired bootstrap over {unit} (2000 resamples, seeded): both models on the same "
             "units; 'significant' = the 95% interval excludes 0.")


def _forest(diffs: list[tuple[str, PairedDifference]], title: str, xlabel: str) -> bytes:
    from distbench.report import figures

    return figures.forest(
        [(f"{d.a} - {d.b} [{subset}]", d.diff, d.ci_low, d.ci_high, d.n, d.significant)
         for subset, d in diffs], title=title, xlabel=xlabel)


def _label(r: dict[str, Any]) -> str:
    return f"{r['provider']}:{r['model']}"


def _matrix(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Matrix games")
    sec.text("Nash gap = best-response payoff minus the answer's payoff against the Nash "
             "opponent; exploitability = what a best-responding opponent takes from the answer. "
             "Both in the game's payoff units, lower is better; statistics over valid answers.")
    groups = _records(con, "matrix_groups")
    sec.table(Table("matrix_groups", "Per bucket x model x mode",
                    list(groups[0]) if groups else [], [tuple(r.values()) for r in groups]))

    trials = _records(con, "matrix_trials")
    for metric, fid, unit in (("nash_gap", "matrix_nash_gap", "Nash gap (payoff units)"),
                              ("exploitability", "matrix_exploitability",
                               "exploitability (payoff units)")):
        by_bucket: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for r in trials:
            by_bucket[r["bucket"]][f"{_label(r)}\n{r['mode']}"].append(r[metric])
        if by_bucket:
            panels = [(b, list(d), [np.array(v) for v in d.values()])
                      for b, d in sorted(by_bucket.items())]
            sec.figure(Figure(fid, f"Distribution of {metric} per bucket x model x mode",
                              figures.box_panels(panels, title=f"{metric} per bucket x model x mode",
                                                 ylabel=unit)))

    deg = _records(con, "matrix_degenerate")
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
    for r in _records(con, "matrix_tier_games"):
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

    valid = [(f"{_label(r)} {r['mode']}", r) for r in groups]
    by_model_mode: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for lab, r in valid:
        by_model_mode[lab][0] += r["valid_rate"] * r["trials"]
        by_model_mode[lab][1] += r["trials"]
    if by_model_mode:
        labels = sorted(by_model_mode)
        sec.figure(Figure("matrix_valid_rate", "Valid-answer rate per model x mode", figures.bars(
            labels, [by_model_mode[k][0] / by_model_mode[k][1] for k in labels],
            title="Valid-answer rate per model x mode", ylabel="valid answers (share, 0-1)",
            ns=[int(by_model_mode[k][1]) for k in labels], ylim=(0, 1.1))))

    svr = _records(con, "matrix_stated_vs_read")
    if svr:
        pts: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for r in svr:
            pts[_label(r)][0].append(r["read"])
            pts[_label(r)][1].append(r["stated"])
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

    units = _records(con, "matrix_game_means")
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
                [_label(r) for r in sub], [r["game_id"] for r in sub],
                [r[column] for r in sub])]
        if len(modes) > 1:
            diffs += [("all modes", d) for d in pairwise_differences(
                [_label(r) for r in units], [(r["game_id"], r["mode"]) for r in units],
                [r[column] for r in units])]
        _paired(sec, tid, diffs, "games", what, xlabel)


def _paired(sec: Any, tid: str, diffs: list[tuple[str, PairedDifference]], unit: str, what: str,
            xlabel: str) -> None:
    if not diffs:
        sec.text(f"Paired comparisons ({what}): fewer than two models share {unit}.")
        return
    sec.table(_paired_table(tid, f"Paired comparisons: {what}", diffs, unit, what))
    sec.figure(Figure(tid, f"Paired differences in {what}",
                      _forest(diffs, f"Paired differences in {what} (95% CI, red = significant)",
                              xlabel)))


def _negotiation(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Negotiation")
    sec.text("Each episode counts once per seat. Main score (0-100, 100 = Pareto-optimal "
             "deal) is over episodes that were not aborted.")
    out = _records(con, "negotiation_outcomes")
    units = _records(con, "negotiation_units")
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
    cats = [f"{r['player']}\n{r['mode']}/{r['lang']}" for r in out]
    ns = [r["episodes"] for r in out]
    sec.figure(Figure("negotiation_outcomes", "Outcome shares", figures.grouped_bars(
        cats, {"success": [r["success_share"] for r in out], "lose": [r["lose_share"] for r in out],
               "aborted": [r["aborted_share"] for r in out]},
        title="Negotiation outcomes per player x mode/lang", ylabel="share of episodes (0-1)",
        ns=ns, stacked=True)))
    sec.figure(Figure("negotiation_scores", "Main score and Pareto-optimal rate",
                      figures.grouped_bars(
                          cats, {"main score / 100": [None if r["mean_main_score"] is None
                                                      else r["mean_main_score"] / 100 for r in out],
                                 "Pareto-optimal rate": [r["pareto_optimal_rate"] for r in out]},
                          title="Main score and Pareto-optimal rate per player x mode/lang",
                          ylabel="score / 100, rate (0-1)", ns=ns)))
    diffs = []
    for key in sorted({(r["mode"], r["lang"]) for r in units}):
        sub = [r for r in units if (r["mode"], r["lang"]) == key and r["scored"]]
        diffs += [(f"{key[0]}/{key[1]}", d) for d in pairwise_differences(
            [r["player"] for r in sub], [r["instance_id"] for r in sub],
            [r["score_sum"] / r["scored"] for r in sub])]
    _paired(sec, "negotiation_paired", diffs, "instances", "main score",
            "Paired difference in mean main score (points, 0-100 scale)")


def _fog(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Fog of war")
    pairings = _records(con, "fog_pairings")
    sec.table(Table("fog_pairings", "Results per agent and opponent (both seats)",
                    list(pairings[0]) if pairings else [], [tuple(r.values()) for r in pairings]))
    cats = [f"{r['agent']}\nvs {r['opponent']}" for r in pairings]
    sec.figure(Figure("fog_win_rates", "Win rates by pairing", figures.grouped_bars(
        cats, {"win": [r["win_rate"] for r in pairings], "draw": [r["draw_rate"] for r in pairings],
               "loss": [r["loss_rate"] for r in pairings]},
        title="Fog-of-war results by pairing", ylabel="share of games (0-1)",
        ns=[r["games"] for r in pairings], stacked=True)))

    agents = _records(con, "fog_agents")
    sec.table(Table("fog_agents", "Belief quality per agent", list(agents[0]) if agents else [],
                    [tuple(r.values()) for r in agents],
                    note="Brier: multi-class, 0 best, 2 worst; log loss: -ln p(true power), nats."))
    sec.figure(Figure("fog_belief_scores", "Brier and log loss per agent", figures.grouped_bars(
        [r["agent"] for r in agents], {"Brier": [r["mean_brier"] for r in agents],
                                       "log loss (nats)": [r["mean_log_loss"] for r in agents]},
        title="Belief scores per agent (lower is better)", ylabel="mean per game",
        ns=[r["games"] for r in agents])))

    rel = _records(con, "fog_reliability")
    sec.table(Table("fog_reliability", "Reliability bins per agent",
                    list(rel[0]) if rel else [], [tuple(r.values()) for r in rel],
                    note="Forecast = one belief probability about a living enemy force; bins of "
                         "width 0.1."))
    if rel:
        by: dict[str, list[dict]] = defaultdict(list)
        for r in rel:
            by[r["agent"]].append(r)
        sec.figure(Figure("fog_reliability", "Reliability diagrams", figures.reliability(
            {a: (np.array([x["mean_forecast"] for x in v]),
                 np.array([x["observed_frequency"] for x in v]),
                 np.array([x["forecasts"] for x in v], dtype=float)) for a, v in sorted(by.items())},
            title="Reliability of beliefs over enemy powers")))

    gain = _records(con, "fog_info_gain")
    sec.table(Table("fog_info_gain", "Information gain of scouting",
                    list(gain[0]) if gain else [], [tuple(r.values()) for r in gain],
                    note="Entropy drop (bits) of the beliefs about forces revealed by scouting."))
    if gain:
        sec.figure(Figure("fog_info_gain", "Information gain of scouting", figures.bars(
            [f"{r['agent']} (acc {r['scout_accuracy']:g})" for r in gain],
            [r["mean_info_gain_per_reveal"] for r in gain],
            title="Mean information gain per report with a reveal",
            ylabel="entropy drop (bits)", ns=[r["reveal_reports"] for r in gain])))

    units = _records(con, "fog_units")
    diffs = [("all", d) for d in pairwise_differences(
        [r["agent"] for r in units], [(r["seed"], r["game_index"]) for r in units],
        [r["score_sum"] / r["games"] for r in units])]
    _paired(sec, "fog_paired", diffs, "game seeds", "win rate",
            "Paired difference in score rate (win 1, draw 0.5)")


def _cost(doc: Document, con: duckdb.DuckDBPyConnection) -> None:
    from distbench.report import figures

    sec = doc.section("Cost and speed")
    rows = _records(con, "cost_endpoints")
    sec.table(Table("cost_endpoints", "Calls per endpoint and model", list(rows[0]),
                    [tuple(r.values()) for r in rows],
                    note="retries = attempts beyond the first; latency over calls not answered "
                         "from the cache, in ms."))
    cats = [f"{r['endpoint']}\n{r['model']}" for r in rows]
    ns = [r["calls"] for r in rows]
    sec.figure(Figure("cost_latency", "Latency percentiles", figures.grouped_bars(
        cats, {"p50": [r["latency_p50_ms"] for r in rows], "p90": [r["latency_p90_ms"] for r in rows],
               "p99": [r["latency_p99_ms"] for r in rows]},
        title="Call latency per endpoint", ylabel="latency (ms)", ns=ns)))
    sec.figure(Figure("cost_tokens", "Tokens", figures.grouped_bars(
        cats, {"prompt": [r["prompt_tokens"] for r in rows],
               "completion": [r["completion_tokens"] for r in rows]},
        title="Tokens per endpoint", ylabel="tokens", ns=ns)))


def is_sweep(run_dir: Path) -> bool:
    """The run is a sweep (manifest family 'sweep' or a 'sweep' config)."""
    path = run_dir / "manifest.json"
    if not path.exists():
        return False
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return manifest.get("family") == "sweep" or "sweep" in (manifest.get("config") or {})


def build_report(run_dir: Path, out_dir: Path) -> ReportResult:
    """Builds the report of ``run_dir`` into ``out_dir`` (created if needed).

    Raises:
        distbench.store.catalog.NotARunError: ``run_dir`` is not a run folder.
        OSError: ``out_dir`` cannot be written.
    """
    from distbench.store.catalog import open_run

    run_dir = Path(run_dir)
    con = open_run(run_dir, threads=1, safe=True)
    try:
        counts = _records(con, "families")[0]
        doc = Document(f"distbench report: {run_dir.name}")
        doc.intro.append(
            f"Run {run_dir.name}: {counts['trials']} matrix trials, {counts['episodes']} "
            f"negotiation episodes, {counts['fog_games']} fog-of-war games, {counts['calls']} "
            "model calls. Built from DuckDB queries (queries/report_*.sql) over the committed "
            "Parquet files.")
        if counts["trials"]:
            _matrix(doc, con)
        if counts["episodes"]:
            _negotiation(doc, con)
        if counts["fog_games"]:
            _fog(doc, con)
        if counts["calls"]:
            _cost(doc, con)
        if not doc.sections:
            doc.intro.append("The run has no committed results yet.")
    finally:
        con.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path = out_dir / "report.html"
    html_path.write_text(render_html(doc), encoding="utf-8")
    md_path = write_markdown(doc, out_dir)
    extra: tuple[Path, ...] = ()
    if is_sweep(run_dir):
        from distbench.report.suite import write_suite_tables

        extra = tuple(write_suite_tables(run_dir, out_dir))
    return ReportResult(html_path, md_path, tuple(f.id for f in doc.figures),
                        tuple(t.id for t in doc.tables), extra)
