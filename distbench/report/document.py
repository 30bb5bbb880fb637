"""A report as a list of blocks, rendered to one self-contained HTML page and a Markdown twin.

HTML: inline CSS, figures embedded as base64 PNG, nothing fetched from the network. Markdown:
tables as Markdown tables (each preceded by an invisible ``<!-- table:<id> -->`` marker),
figures as PNG files next to the ``.md`` file.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { border-bottom: 2px solid #333; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0 1.4em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; }
td.text { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
figure { margin: 1em 0 2em; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 13px; color: #555; }
p.note { font-size: 13px; color: #555; }
.sig { font-weight: bold; color: #b00; }
"""


def format_cell(value: Any) -> str:
    """How a value appears in a table: floats with 6 significant digits, None as 'n/a'."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.6g}"
    return str(value)


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]
    rows: list[tuple]
    note: str = ""


@dataclass
class Figure:
    id: str
    title: str
    png: bytes
    caption: str = ""


@dataclass
class Section:
    title: str
    blocks: list[Any] = field(default_factory=list)

    def text(self, text: str) -> None:
        self.blocks.append(text)

    def table(self, table: Table) -> None:
        self.blocks.append(table)

    def figure(self, figure: Figure) -> None:
        self.blocks.append(figure)


@dataclass
class Document:
    title: str
    intro: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    def section(self, title: str) -> Section:
        s = Section(title)
        self.sections.append(s)
        return s

    @property
    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]

    @property
    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]


def _html_table(t: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in t.columns)
    body = []
    for row in t.rows:
        cells = []
        for v in row:
            cls = ' class="text"' if isinstance(v, str) else ""
            text = html.escape(format_cell(v))
            if t.columns and isinstance(v, bool) and v:
                text = f'<span class="sig">{text}</span>'
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{html.escape(t.note)}</p>' if t.note else ""
    return (f'<h3>{html.escape(t.title)}</h3>{note}<table id="tab-{t.id}"><thead><tr>{head}'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table>')


def render_html(doc: Document) -> str:
    """The whole page as one string (no external resource)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(doc.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(doc.title)}</h1>"]
    parts += [f"<p>{html.escape(p)}</p>" for p in doc.intro]
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
                data = base64.b64encode(b.png).decode("ascii")
                parts.append(
                    f'<figure id="fig-{b.id}"><img alt="{html.escape(b.title)}" '
                    f'src="data:image/png;base64,{data}"><figcaption>{html.escape(b.caption or b.title)}'
                    "</figcaption></figure>")
            else:
                parts.append(f"<p>{html.escape(b)}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(t: Table) -> str:
    lines = [f"### {t.title}", ""]
    if t.note:
        lines += [t.note, ""]
    lines.append(f"<!-- table:{t.id} -->")
    lines.append("| " + " | ".join(_md_escape(c) for c in t.columns) + " |")
    lines.append("|" + "|".join("---" for _ in t.columns) + "|")
    for row in t.rows:
        lines.append("| " + " | ".join(_md_escape(format_cell(v)) for v in row) + " |")
    return "\n".join(lines)


def write_markdown(doc: Document, out_dir: Path) -> Path:
    """Writes ``report.md`` and one ``fig-<id>.png`` per figure into ``out_dir``."""
    parts = [f"# {doc.title}", ""]
    parts += [p + "\n" for p in doc.intro]
    for s in doc.sections:
        parts += [f"## {s.title}", ""]
        for b in s.blocks:
            if isinstance(b, Table):
                parts += [_md_table(b), ""]
            elif isinstance(b, Figure):
                name = f"fig-{b.id}.png"
                (out_dir / name).write_bytes(b.png)
                parts += [f"![{_md_escape(b.title)}]({name})", "", f"*{b.caption or b.title}*", ""]
            else:
                parts += [b, ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
