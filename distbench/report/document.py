"""A report as a list of blocks, rendered to one self-contained HTML page, a Markdown twin, and
files a paper can use.

HTML: inline CSS, figures as inline SVG, nothing fetched from the network. Markdown: tables as
Markdown tables (each preceded by an invisible ``<!-- table:<id> -->`` marker), figures as PNG
files next to the ``.md`` file. Beside them (:func:`write_assets`): ``figures/<id>.svg`` and
``figures/<id>.pdf`` for every figure, ``tables/<id>.csv`` (every number at full precision)
and ``tables/<id>.tex`` (booktabs) for every table.

Numbers on the page are rounded to what their interval supports: a value with a 95% interval
beside it (columns ``X_ci95_low``/``X_ci95_high``, or ``ci95_low``/``ci95_high``/``ci_low``/
``ci_high`` right after it) and the interval's ends get two significant digits of the
interval's half-width; other numbers four significant digits, and anything below 1e-9 in size
is 0 (a calibration error of 4e-16 is a zero, not a number to print).
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { border-bottom: 2px solid #333; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
div.wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .8em 0 1.4em; font-size: 12px; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 2px 5px; text-align: right; }
th { background: #f0f0f0; vertical-align: bottom; font-weight: 600; }
td { white-space: nowrap; }
td.text { text-align: left; white-space: normal; overflow-wrap: break-word; }
tr:nth-child(even) td { background: #fafafa; }
table.meta td, table.meta th { text-align: left; }
table.meta td { white-space: normal; overflow-wrap: anywhere; }
figure { margin: 1em 0 2em; }
figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 13px; color: #555; }
p.note { font-size: 13px; color: #555; }
p.files { font-size: 12px; color: #777; }
.sig { font-weight: bold; color: #b00; }
"""

_TINY = 1e-9


def cell_word(value: Any) -> str | None:
    """The word a page shows for a value that is no finite number: ``n/a`` for None and NaN or
    infinities, ``yes``/``no`` for a bool; None for anything else (a number to format)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return None


def format_cell(value: Any, decimals: int | None = None) -> str:
    """How a value appears on the page: ``decimals`` places when given (an interval decides
    them), else four significant digits; None as 'n/a'; sizes below 1e-9 as 0."""
    word = cell_word(value)
    if word is not None:
        return word
    if isinstance(value, float):
        if abs(value) < _TINY:
            value = 0.0
        if decimals is not None:
            return f"{value:.{decimals}f}"
        if value == 0.0:
            return "0"
        text = f"{value:.4g}"
        if "e" in text and 1e-4 <= abs(value) < 1e15:
            text = f"{value:.{max(0, 3 - math.floor(math.log10(abs(value))))}f}"
        return text
    return str(value)


def interval_decimals(low: Any, high: Any) -> int | None:
    """Decimal places that give two significant digits of an interval's half-width."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
               for v in (low, high)):
        return None
    half = abs(float(high) - float(low)) / 2
    if half < _TINY:
        return None
    return max(0, 1 - math.floor(math.log10(half)))


def _ci_groups(columns: list[str]) -> dict[int, tuple[int, int]]:
    """Column index of a value -> (index of its interval's low end, of its high end)."""
    index = {c: i for i, c in enumerate(columns)}
    out: dict[int, tuple[int, int]] = {}
    for i, c in enumerate(columns):
        for low_suffix, high_suffix in (("ci95_low", "ci95_high"), ("ci_low", "ci_high")):
            if not c.endswith(low_suffix):
                continue
            high = c[: -len(low_suffix)] + high_suffix
            if high not in index:
                continue
            stem = c[: -len(low_suffix)].rstrip("_")
            value = next((index[n] for n in (stem, f"mean_{stem}") if stem and n in index), None)
            if value is None and i > 0 and not columns[i - 1].endswith(("_high", "_low")):
                value = i - 1  # ci95_low right after its value
            if value is not None:
                out[value] = (i, index[high])
    return out


def display_rows(t: Table) -> list[list[str]]:
    """The table's cells as shown: rounded to what their intervals support."""
    groups = _ci_groups(t.columns)
    out = []
    for row in t.rows:
        decimals: dict[int, int] = {}
        for value, (lo, hi) in groups.items():
            if max(value, lo, hi) < len(row):
                d = interval_decimals(row[lo], row[hi])
                if d is not None:
                    decimals.update({value: d, lo: d, hi: d})
        out.append([format_cell(v, decimals.get(i) if isinstance(v, float) else None)
                    for i, v in enumerate(row)])
    return out


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]
    rows: list[tuple]
    note: str = ""
    keys: int = 1
    """Leading columns that name a row, repeated in each block of a table cut to fit a
    console (:func:`format_console` with a width)."""

    @classmethod
    def of_records(cls, id: str, title: str, columns: Sequence[str],
                   records: Iterable[Mapping[str, Any]], note: str = "") -> Table:
        """The table of ``columns`` over dict rows (a key a row lacks: an empty cell)."""
        return cls(id, title, list(columns), [tuple(r.get(c) for c in columns) for r in records],
                   note=note)

    @classmethod
    def of_rows(cls, id: str, title: str, records: Sequence[Mapping[str, Any]],
                note: str = "") -> Table:
        """The table of every column of a query's dict rows (the first row's keys, in order)."""
        return cls.of_records(id, title, list(records[0]) if records else [], records, note)


@dataclass
class Figure:
    """A figure: ``drawing`` is a :class:`distbench.report.figures.Drawing` (SVG, PDF, PNG),
    or None when there was nothing to draw (the page says so in one line)."""

    id: str
    title: str
    drawing: Any
    caption: str = ""


@dataclass
class Section:
    title: str
    blocks: list[Any] = field(default_factory=list)
    progress: Callable[[str], None] | None = field(default=None, repr=False)

    def text(self, text: str) -> None:
        self.blocks.append(text)

    def table(self, table: Table) -> None:
        self.blocks.append(table)

    def figure(self, figure: Figure) -> None:
        if self.progress is not None:
            self.progress(f"drew figure {figure.title!r}")
        if figure.drawing is None:
            self.blocks.append(f"{figure.title}: no figure, every value is empty.")
            return
        self.blocks.append(figure)


@dataclass
class Document:
    title: str
    intro: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    meta: list[tuple[str, str]] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    progress: Callable[[str], None] | None = field(default=None, repr=False)
    """Told of each figure as it is drawn (drawing is the slow part of a report)."""

    def section(self, title: str) -> Section:
        s = Section(title, progress=self.progress)
        self.sections.append(s)
        return s

    @property
    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]

    @property
    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]


_WORDS = {"ci95": "95% CI", "ci": "CI", "num": "", "ms": "(ms)", "pct": "%", "expl": "expl.",
          "br": "best-response", "usd": "(USD)"}
_LABELS = {"num_games": "games", "total_trials": "trials", "valid_rate": "valid answers",
           "tied_with": "tied with (overlapping CIs)", "lang": "language", "degenerate_trial_share":
           "degenerate trials", "degenerate_share": "degenerate share", "call_id": "call id"}


def column_label(name: str) -> str:
    """A column's heading on the page: ``mean_nash_gap`` -> "mean Nash gap",
    ``latency_p50_ms`` -> "latency p50 (ms)"; the CSV and TeX files and the Markdown twin
    keep the SQL name (scripts and ``distbench query`` read it)."""
    if name in _LABELS:
        return _LABELS[name]
    words = [_WORDS.get(w, w) for w in name.split("_")]
    text = " ".join(w for w in words if w)
    for word in ("Nash", "Brier", "Pareto"):
        text = re.sub(rf"\b{word.lower()}\b", word, text)
    return text or name


def _html_table(t: Table) -> str:
    """The table on the page: human headings (:func:`column_label`), an interval's two ends
    in one "95% CI" cell, and headings that wrap, so a wide table fits the page."""
    lows = {lo: hi for lo, hi in _ci_groups(t.columns).values()}
    highs = set(lows.values())
    head = "".join(
        f"<th>{'95% CI' if i in lows else html.escape(column_label(c))}</th>"
        for i, c in enumerate(t.columns) if i not in highs)
    body = []
    for row, shown in zip(t.rows, display_rows(t), strict=True):
        cells = []
        for i, (v, text) in enumerate(zip(row, shown, strict=True)):
            if i in highs:
                continue
            if i in lows:
                low, high = text, shown[lows[i]]
                text = "n/a" if low == high == "n/a" else f"[{low}, {high}]"
                cells.append(f"<td>{html.escape(text)}</td>")
                continue
            cls = ' class="text"' if isinstance(v, str) else ""
            text = html.escape(text)
            if t.columns and isinstance(v, bool) and v:
                text = f'<span class="sig">{text}</span>'
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    files = (f'<p class="files">tables/{html.escape(t.id)}.csv (full precision), '
             f'tables/{html.escape(t.id)}.tex</p>')
    return (f'<h3>{html.escape(t.title)}</h3>{note}<div class="wrap"><table id="tab-{t.id}">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{files}')


def render_html(doc: Document) -> str:
    """The whole page as one string (no external resource)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(doc.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(doc.title)}</h1>"]
    parts += [f"<p>{html.escape(p)}</p>" for p in doc.intro]
    if doc.meta:
        parts.append('<table class="meta" id="tab-meta"><tbody>' + "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in doc.meta) + "</tbody></table>")
    parts += [f'<p><a href="{html.escape(url)}">{html.escape(text)}</a></p>'
              for text, url in doc.links]
    if doc.sections:
        parts.append("<ul>" + "".join(
            f'<li><a href="#sec-{i}">{html.escape(s.title)}</a></li>'
            for i, s in enumerate(doc.sections)) + "</ul>")
    for i, s in enumerate(doc.sections):
        parts.append(f'<h2 id="sec-{i}">{html.escape(s.title)}</h2>')
        for b in s.blocks:
            if isinstance(b, Table):
                parts.append(_html_table(b))
            elif isinstance(b, Figure):
                parts.append(
                    f'<figure id="fig-{b.id}" aria-label="{html.escape(b.title)}">'
                    f"{b.drawing.svg}<figcaption>{html.escape(b.caption or b.title)} "
                    f"(figures/{html.escape(b.id)}.pdf, .svg)</figcaption></figure>")
            else:
                parts.append(f"<p>{html.escape(b)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


_MD_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _md_text(text: str) -> str:
    """Prose on the Markdown page with no raw HTML: ``&``, ``<`` and ``>`` as entities (a
    model's name or answer may hold ``<img onerror=...>``; a Markdown viewer would run it)."""
    return str(text).translate(_MD_HTML)


def _md_escape(text: str) -> str:
    """A table cell or an inline value: no raw HTML (:func:`_md_text`), on one line, its
    ``|`` escaped, and its ``[``/``]`` too (an answer's ``![x](http://...)`` stays text)."""
    text = _md_text(text).replace("\r", " ").replace("\n", " ")
    for ch in "|[]":
        text = text.replace(ch, "\\" + ch)
    return text


def _md_table(t: Table) -> str:
    lines = [f"### {_md_escape(t.title)}", ""]
    if t.note:
        lines += [_md_text(t.note), ""]
    lines.append(f"<!-- table:{t.id} -->")
    lines.append("| " + " | ".join(_md_escape(c) for c in t.columns) + " |")
    lines.append("|" + "|".join("---" for _ in t.columns) + "|")
    for shown in display_rows(t):
        lines.append("| " + " | ".join(_md_escape(c) for c in shown) + " |")
    return "\n".join(lines)


def write_markdown(doc: Document, out_dir: Path) -> Path:
    """Writes ``report.md`` and one ``fig-<id>.png`` per figure into ``out_dir``."""
    parts = [f"# {_md_escape(doc.title)}", ""]
    parts += [_md_text(p) + "\n" for p in doc.intro]
    parts += [f"[{_md_escape(text)}]({url})\n" for text, url in doc.links]
    if doc.meta:
        parts += ["| | |", "|---|---|"] + [f"| {_md_escape(k)} | {_md_escape(v)} |"
                                           for k, v in doc.meta] + [""]
    for s in doc.sections:
        parts += [f"## {_md_escape(s.title)}", ""]
        for b in s.blocks:
            if isinstance(b, Table):
                parts += [_md_table(b), ""]
            elif isinstance(b, Figure):
                name = f"fig-{b.id}.png"
                (out_dir / name).write_bytes(b.drawing.png)
                parts += [f"![{_md_escape(b.title)}]({name})", "",
                          f"*{_md_escape(b.caption or b.title)}*", ""]
            else:
                parts += [_md_text(b), ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def format_console(t: Table, width: int | None = None) -> str:
    """The table as aligned plain text for the terminal (numbers as on the page: rounded to
    their intervals), its note under it.

    With ``width`` (the console summaries of ``distbench run``), it fits that many columns:
    each value and its interval are one cell ``0.214 [0.145, 0.282]`` under ``name [95% CI]``,
    column names are words (no ``_``), a table wider than ``width`` is cut into blocks of
    columns (:func:`fit_lines`, the first ``t.keys`` columns repeated in each) and the note is
    wrapped. Without it, the table as it is (``distbench run --wide``).
    """
    shown = display_rows(t)
    columns = list(t.columns)
    numeric = [not all(isinstance(r[i], str) for r in t.rows if i < len(r)) for i in
               range(len(t.columns))]
    if width is not None:
        columns, shown, numeric = _with_intervals(columns, shown, numeric)
        columns = [c.replace("_", " ") for c in columns]
    out = fit_lines(columns, shown, width, keys=t.keys, right=numeric)
    if t.note:
        out += textwrap.wrap(t.note, width) if width else [t.note]
    return "\n".join(out)


def _with_intervals(columns: list[str], shown: list[list[str]], numeric: list[bool],
                    ) -> tuple[list[str], list[list[str]], list[bool]]:
    """Each value column with an interval (``x``, ``x_ci95_low``, ``x_ci95_high``) as one
    column ``x [95% CI]`` of cells ``value [low, high]``."""
    groups = _ci_groups(columns)
    ends = {i for pair in groups.values() for i in pair}
    keep = [i for i in range(len(columns)) if i not in ends]
    names = [f"{columns[i]} [95% CI]" if i in groups else columns[i] for i in keep]
    rows = []
    for row in shown:
        cells = []
        for i in keep:
            lo, hi = groups.get(i, (None, None))
            bounds = (row[lo], row[hi]) if lo is not None else ("n/a", "n/a")
            cells.append(row[i] if "n/a" in bounds else f"{row[i]} [{bounds[0]}, {bounds[1]}]")
        rows.append(cells)
    return names, rows, [numeric[i] and i not in groups for i in keep]


def summary_lines(family: str, records: list[dict[str, Any]], explanation: str,
                  header: tuple[str, ...], rows: list[tuple[str, ...]], width: int | None, *,
                  keys: int) -> str:
    """A family's console summary: the title (``<family> summary (provider:model; the
    explanation)``, wrapped to ``width``) over the table of :func:`fit_lines`."""
    title = f"{family} summary ({records[0]['provider']}:{records[0]['model']}; {explanation})"
    out = fit_lines(list(header), [list(row) for row in rows], width, keys=keys)
    return "\n".join([*(textwrap.wrap(title, width) if width else [title]), *out])


def fit_lines(header: list[str], rows: list[list[str]], width: int | None, *, keys: int = 1,
              right: list[bool] | None = None) -> list[str]:
    """A table as aligned lines: the header, a rule, the rows. When ``width`` is given and the
    table is wider, its columns after the first ``keys`` are cut into blocks, one under the
    other (a blank line between), each repeating the ``keys`` columns and fitting ``width``
    (a single column wider than it stays whole).

    Args:
        header: The column names.
        rows: The cells, as text.
        width: Columns available, or None: one block however wide.
        keys: Leading columns that name a row (repeated in every block).
        right: Per column, align right (numbers); default left.
    """
    n = len(header)
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(n)]
    right = right or [False] * n
    keys = max(0, min(keys, n - 1))

    def span(cols: list[int]) -> int:
        return sum(widths[i] for i in cols) + 2 * (len(cols) - 1)

    def block(cols: list[int]) -> list[str]:
        def line(cells: list[str]) -> str:
            return "  ".join(cells[i].rjust(widths[i]) if right[i] else cells[i].ljust(widths[i])
                             for i in cols).rstrip()
        return [line(header), "  ".join("-" * widths[i] for i in cols),
                *(line(r) for r in rows)]

    everything = list(range(n))
    if width is None or span(everything) <= width:
        return block(everything)
    blocks, current = [], list(range(keys))
    for i in range(keys, n):
        if len(current) > keys and span([*current, i]) > width:
            blocks.append(current)
            current = list(range(keys))
        current.append(i)
    blocks.append(current)
    out: list[str] = []
    for k, cols in enumerate(blocks):
        out += ([""] if k else []) + block(cols)
    return out


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in text)


def table_csv(t: Table) -> str:
    """The table as CSV, every number at full precision (``repr`` of floats)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(t.columns)
    for row in t.rows:
        writer.writerow(["" if v is None else ("yes" if v else "no") if isinstance(v, bool)
                         else repr(v) if isinstance(v, float) else v for v in row])
    return buf.getvalue()


def table_tex(t: Table) -> str:
    """The table as a LaTeX ``table`` with booktabs rules, numbers as on the page."""
    align = "".join("l" if all(isinstance(r[i], str) for r in t.rows if i < len(r)) else "r"
                    for i in range(len(t.columns)))
    lines = [r"% needs \usepackage{booktabs}", r"\begin{table}[ht]", r"\centering",
             rf"\caption{{{_tex(t.title)}}}", rf"\label{{tab:{_tex(t.id)}}}",
             rf"\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(_tex(c) for c in t.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(_tex(c) for c in shown) + r" \\" for shown in display_rows(t)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if t.note:
        lines.append(rf"\par\smallskip{{\footnotesize {_tex(t.note)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_assets(doc: Document, out_dir: Path) -> list[Path]:
    """Writes ``figures/<id>.svg`` and ``.pdf`` for every figure and ``tables/<id>.csv`` and
    ``.tex`` for every table into ``out_dir``; returns the paths."""
    written = []
    figures, tables = out_dir / "figures", out_dir / "tables"
    figures.mkdir(parents=True, exist_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    for f in doc.figures:
        for ext, data in (("svg", f.drawing.svg.encode("utf-8")), ("pdf", f.drawing.pdf)):
            path = figures / f"{f.id}.{ext}"
            path.write_bytes(data)
            written.append(path)
    for t in doc.tables:
        for ext, text in (("csv", table_csv(t)), ("tex", table_tex(t))):
            path = tables / f"{t.id}.{ext}"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
