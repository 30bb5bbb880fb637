"""``distbench list KIND``: what exists, as the registries say (built-in and plugins alike).

``families`` and ``providers`` come from the two registries; ``queries`` from the shipped SQL
files; ``games``, ``strategies``, ``classes``, ``buckets`` and ``players`` from each family's
``catalog`` hook (:class:`distbench.games.base.Family`), so a plugin's own show beside the
built-in ones. ``--format json`` prints the same rows as a list of objects.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import Any

import click

from distbench.cli.errors import UserError
from distbench.games.base import CATALOG_KINDS

KINDS = ("families", "providers", "queries", *CATALOG_KINDS)

_ANY_MODEL = {"name": "PROVIDER[:MODEL]", "description": "any model (distbench list providers)"}


def _origin(module_path: str) -> str:
    return "built-in" if module_path.startswith("distbench.") else "plugin"


def family_rows() -> list[dict[str, Any]]:
    """One row per registered family."""
    from distbench.games.registry import families

    return [{"name": f.name, "description": f.description, "unit": f.unit,
             "modes": list(f.identity.modes), "tournaments": f.pairable, "origin": _origin(f.play.runner)}
            for f in families().values()]


def provider_rows() -> list[dict[str, Any]]:
    """One row per registered provider."""
    from distbench.llm.registry import providers

    return [{"name": p.name, "description": p.description, "default_model": p.default_model,
             "style": p.style, "origin": _origin(p.target)} for p in providers().values()]


def query_rows() -> list[dict[str, Any]]:
    """One row per shipped query (``distbench query --file NAME``): its first sentence."""
    from distbench.report.sql import QUERIES_DIR

    rows = []
    for path in sorted(QUERIES_DIR.glob("*.sql")):
        comment = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("--"):
                break
            comment.append(line.lstrip("- ").strip())
        text = " ".join(comment)
        first = text.split(". ")[0].rstrip(".") if text else ""
        rows.append({"name": path.stem, "description": first})
    return rows


def catalog_rows(kind: str, family: str | None) -> list[dict[str, Any]]:
    """The ``kind`` rows of every family's catalog (or of ``family``), each with its family;
    ``players`` ends each tournament family's list with "any model"."""
    from distbench.games.registry import families, get_family

    chosen = [get_family(family)] if family else list(families().values())
    rows = []
    for fam in chosen:
        if kind == "players" and not fam.pairable:
            continue
        entries = fam.catalog_entries().get(kind, [])
        if kind == "players":
            entries = [*entries, dict(_ANY_MODEL)]
        rows += [{"family": fam.name, **entry} for entry in entries]
    return rows


def rows_of(kind: str, family: str | None) -> list[dict[str, Any]]:
    """The rows ``distbench list KIND`` prints."""
    if kind in CATALOG_KINDS:
        return catalog_rows(kind, family)
    rows = {"families": family_rows, "providers": provider_rows, "queries": query_rows}[kind]()
    if family and kind == "families":
        rows = [r for r in rows if r["name"] == family]
    return rows


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    return "-" if value is None else str(value)


def render_rows(rows: list[dict[str, Any]], width: int) -> str:
    """The rows as a table of at most ``width`` columns: every column but ``description`` as
    wide as its longest cell, ``description`` last and wrapped into the room left."""
    columns = [c for c in rows[0] if c != "description"] + ["description"]
    cells = [[_text(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    left = sum(widths[:-1]) + 2 * (len(columns) - 1)
    room = max(20, width - left)
    lines = []
    for row in [columns, *cells]:
        head = "".join(v.ljust(w + 2) for v, w in zip(row[:-1], widths, strict=False))
        wrapped = textwrap.wrap(row[-1], room) or [""]
        lines.append(head + wrapped[0])
        lines += [" " * left + more for more in wrapped[1:]]
    return "\n".join(line.rstrip() for line in lines)


@click.command("list")
@click.argument("kind", type=click.Choice(KINDS), metavar="|".join(KINDS))
@click.option("--family", default=None, metavar="NAME",
              help="Only this family's entries (see distbench list families).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def list_command(kind: str, family: str | None, fmt: str) -> None:
    """What exists: the registered families and providers (plugins included), the shipped
    queries, and each family's games, strategies, classes, buckets and tournament players."""
    from distbench.games.registry import UnknownFamilyError, get_family

    if family:
        try:
            get_family(family)
        except UnknownFamilyError as exc:
            raise UserError(f"--family: {exc}") from None
    rows = rows_of(kind, family)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        where = f" of the {family} family" if family else ""
        click.echo(f"no {kind}{where} to list")
        return
    if family:
        rows = [{k: v for k, v in row.items() if k != "family"} for row in rows]
    click.echo(render_rows(rows, shutil.get_terminal_size((100, 24)).columns))
