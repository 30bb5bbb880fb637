"""``build_report``: the run's report (HTML + Markdown) from DuckDB queries in ``queries/report_*``.

Sections appear only for the families present in the run: matrix (``trials``), negotiation
(``episodes``), fog-of-war (``fog_games``), and cost and speed (``calls``). Every number comes
from a query file; Python only resamples (bootstrap) and draws.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from distbench.report.document import (
    Document,
    Figure,
    Table,
    render_html,
    write_assets,
    write_markdown,
)
from distbench.report.stats import PairedDifference

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReportPart:
    """A family's part of the report.

    Attributes:
        family: The family's name.
        table: Its main table (the section appears when it has rows).
        unit: What a row of that table is, for the report's first line.
        write: ``write(doc, con)`` adds the family's section to ``doc``.
    """

    family: str
    table: str
    unit: str
    write: Callable[[Document, Any], None]


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What ``build_report`` wrote.

    Attributes:
        html: Path of ``report.html``.
        markdown: Path of ``report.md``.
        figures: Figure ids in the order they appear.
        tables: Table ids in the order they appear.
        extra: Other files written (the sweep suite tables).
        assets: ``figures/*.svg|pdf`` and ``tables/*.csv|tex``.
    """

    html: Path
    markdown: Path
    figures: tuple[str, ...]
    tables: tuple[str, ...]
    extra: tuple[Path, ...] = ()
    assets: tuple[Path, ...] = ()


def _query(con: duckdb.DuckDBPyConnection, name: str) -> tuple[list[str], list[tuple]]:
    from distbench.report.sql import resolve_query_file

    sql = resolve_query_file(f"report_{name}").read_text(encoding="utf-8")
    result = con.execute(sql)
    return [d[0] for d in result.description], result.fetchall()


def records(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
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


def label(r: dict[str, Any]) -> str:
    return f"{r['provider']}:{r['model']}"


def paired(sec: Any, tid: str, diffs: list[tuple[str, PairedDifference]], unit: str, what: str,
            xlabel: str) -> None:
    if not diffs:
        sec.text(f"Paired comparisons ({what}): fewer than two models share {unit}.")
        return
    sec.table(_paired_table(tid, f"Paired comparisons: {what}", diffs, unit, what))
    sec.figure(Figure(tid, f"Paired differences in {what}",
                      _forest(diffs, f"Paired differences in {what} (95% CI, red = significant)",
                              xlabel)))


def _cost(doc: Document, con: duckdb.DuckDBPyConnection,
          health: dict[str, Any] | None = None) -> None:
    from distbench.report import figures

    sec = doc.section("Cost and speed")
    if health is not None and health.get("prompt_tokens") is not None:
        cost = health.get("cost_usd")
        sec.text(f"Tokens billed (as the endpoints reported them; cache hits not counted): "
                 f"{health['prompt_tokens']:,} prompt, {health['completion_tokens']:,} "
                 "completion. Cost: " + (f"${cost:,.4f} at the prices given for the run." if
                                         cost is not None else "unknown (no price was given; "
                                         "distbench assumes none)."))
        if health.get("batch_calls"):
            sec.text(f"{health['batch_calls']:,} calls were answered through the provider's "
                     f"batch API, priced at {health['batch_price']:g} of the price.")
        estimate = health.get("estimate_cost_usd_max")
        if estimate:
            sec.text(f"Estimated before the run: at most ${estimate['live']:,.4f} live, "
                     f"${estimate['batch']:,.4f} at the batch price ({estimate['batch_price']:g} "
                     "of the price, --execution batch).")
        likely = health.get("estimate_cost_usd_expected")
        if likely:
            sec.text(f"Expected (the prompts as rendered, completion tokens by the answer "
                     f"{likely['completion_by']}): ${likely['live']:,.4f} live, "
                     f"${likely['batch']:,.4f} at the batch price.")
    rows = records(con, "cost_endpoints")
    sec.table(Table.of_rows("cost_endpoints", "Calls per endpoint and model", rows,
                            note="retries = attempts beyond the first; latency over calls not "
                                 "answered from the cache, in ms."))
    cats = [f"{r['endpoint']}\n{r['model']}" for r in rows]
    ns = [r["calls"] for r in rows]
    sec.figure(Figure("cost_latency", "Latency percentiles", figures.grouped_bars(
        cats, figures.record_series(rows, {"p50": "latency_p50_ms", "p90": "latency_p90_ms",
                                           "p99": "latency_p99_ms"}),
        title="Call latency per endpoint", ylabel="latency (ms)", ns=ns)))
    sec.figure(Figure("cost_tokens", "Tokens", figures.grouped_bars(
        cats, figures.record_series(rows, {"prompt": "prompt_tokens",
                                           "completion": "completion_tokens"}),
        title="Tokens per endpoint", ylabel="tokens", ns=ns)))


def _find(config: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a (nested) configuration."""
    if isinstance(config, dict):
        if key in config:
            return config[key]
        for value in config.values():
            found = _find(value, key)
            if found is not None:
                return found
    elif isinstance(config, list):
        for value in config:
            found = _find(value, key)
            if found is not None:
                return found
    return None


def _command(argv: list[str] | None) -> str:
    """The run's command line as shown: the program by its name, not by the absolute path
    of a developer's install (a run started from a script or a test records its argv)."""
    if not argv:
        return "n/a"
    program = argv[0]
    if Path(program).is_absolute():
        program = Path(program).name
    return " ".join([program, *argv[1:]])


def run_metadata(run_dir: Path, con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """What a reader needs to reproduce the run: command, models and providers, sampling,
    seeds, versions of distbench and its solvers, dates and the machine (``manifest.json``
    and the ``calls`` table)."""
    import platform
    import time

    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    config = manifest.get("config") or {}
    if manifest.get("models") is not None:
        models = [f"{m['provider']}:{m['model']} ({m.get('base_url') or 'in process'}, "
                  f"{m.get('style')} style)" for m in manifest["models"]]
    else:  # runs made before the manifest listed its models: the ones that were called
        models = [f"{p}:{m} ({e.split(':', 1)[1] if ':' in e else e})"
                  for p, m, e in con.execute(
                      "select provider, model, any_value(endpoint) from calls group by all "
                      "order by all").fetchall()]
    seeds = manifest.get("seeds") or {}
    versions = manifest.get("versions") or {}
    machine = versions.get("machine")
    rows = [
        ("run", f"{manifest.get('run_id', run_dir.name)} ({manifest.get('family', '?')}; "
                f"{manifest.get('state', '?')})"),
        ("command", _command(manifest.get("command"))),
        ("models", ", ".join(models) or "none called (scripted players only)"),
        ("temperature", str(_find(config, "temperature"))),
        ("game seeds", ", ".join(str(s) for s in seeds.get("game_seeds") or []) or "n/a"),
        ("sampling seed", str(seeds.get("llm_seed", "n/a"))),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items() if k != "machine")
         or "n/a"),
        ("run dates", f"{manifest.get('started_at', '?')} to {manifest.get('finished_at', '?')}"),
        ("machine", machine or "not recorded"),
        ("report built", f"{time.strftime('%Y-%m-%d %H:%M %Z')} on {platform.node() or '?'}"),
    ]
    if "sweep" in config:
        rows.insert(2, ("spec", json.dumps(config.get("spec_data") or config["sweep"],
                                           sort_keys=True)[:2000]))
    return rows


def is_sweep(run_dir: Path) -> bool:
    """The run is a sweep (manifest family 'sweep' or a 'sweep' config)."""
    path = run_dir / "manifest.json"
    if not path.exists():
        return False
    manifest = json.loads(path.read_text(encoding="utf-8"))
    return manifest.get("family") == "sweep" or "sweep" in (manifest.get("config") or {})


def build_report(run_dir: Path, out_dir: Path,
                 sections: Sequence[ReportPart] = (),
                 links: Sequence[tuple[str, str]] = (),
                 progress: Callable[[str], None] | None = None) -> ReportResult:
    """Builds the report of ``run_dir`` into ``out_dir`` (created if needed).

    Args:
        run_dir: The run folder.
        out_dir: Where the files go.
        sections: The families' report parts (``distbench.games.registry.report_parts()``):
            each family with rows in the run writes its own section; the frame adds the
            cost and speed of the model calls.
        links: (text, relative URL) pairs shown under the header (the transcript viewer).
        progress: Told what is being done, in a few words, as the report is built (each
            section, each figure drawn, the files written): drawing the figures takes
            seconds each.

    Raises:
        distbench.store.catalog.NotARunError: ``run_dir`` is not a run folder.
        OSError: ``out_dir`` cannot be written.
    """
    from distbench.store.catalog import open_run

    def say(message: str) -> None:
        if progress is not None:
            progress(message)

    run_dir = Path(run_dir)
    say(f"reading the tables of {run_dir.name} ...")
    con = open_run(run_dir, threads=1, safe=True)
    try:
        counts = [(part, con.execute(f'select count(*) from "{part.table}"').fetchone()[0])
                  for part in sections]
        calls = con.execute("select count(*) from calls").fetchone()[0]
        doc = Document(f"distbench report: {run_dir.name}", progress=progress)
        doc.meta = run_metadata(run_dir, con)
        doc.links = list(links)
        found = ", ".join(f"{n} {part.unit} ({part.family})" for part, n in counts if n)
        if not found:  # a tournament's games sit in its pairing tables, not a main table
            from distbench.report.tournament import tournament_games

            games = tournament_games(con)
            found = f"{games:,} tournament games" if games else ""
        doc.intro.append(
            f"Run {run_dir.name}: {found or 'no rows'}, {calls} model calls. Built from DuckDB "
            "queries (queries/report_*.sql) over the committed Parquet files.")
        for part, n in counts:
            if n:
                say(f"{part.family} section ({n:,} {part.unit}): drawing its figures ...")
                part.write(doc, con)
        from distbench.report.tournament import has_tournament
        from distbench.report.tournament import section as tournament_section

        if has_tournament(con):
            tournament_section(doc, con)
        if calls:
            say(f"cost and speed section ({calls:,} model calls) ...")
            summary = run_dir / "summary.json"
            health = (json.loads(summary.read_text(encoding="utf-8")).get("calls")
                      if summary.exists() else None)
            _cost(doc, con, health)
        if not doc.sections:
            doc.intro.append("The run has no committed results yet.")
    finally:
        con.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    say(f"writing report.html, report.md, figures/ and tables/ in {out_dir} ...")
    html_path = out_dir / "report.html"
    html_path.write_text(render_html(doc), encoding="utf-8")
    md_path = write_markdown(doc, out_dir)
    assets = write_assets(doc, out_dir)
    extra: tuple[Path, ...] = ()
    if is_sweep(run_dir):
        from distbench.report.suite import write_suite_tables

        extra = tuple(write_suite_tables(run_dir, out_dir))
    return ReportResult(html_path, md_path, tuple(f.id for f in doc.figures),
                        tuple(t.id for t in doc.tables), extra, tuple(assets))
