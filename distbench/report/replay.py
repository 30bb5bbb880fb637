"""Replays: pages that draw a game moment by moment, with step forward / back, play, keys and a
link to any moment (the URL fragment ``#r=<replay>&s=<step>``).

A family offers replays through its ``Presentation.replay`` hook (``games/<family>/replay.py``):
``replay(con, per_game, seed) -> ReplayPart``, the sampled games of a run as plain data (each a
static part and a list of steps) and the family's JavaScript renderer, which draws one step of a
replay into an element. This module is the generic shell: it samples (:func:`pick`), writes one
self-contained HTML page per game (the data as JSON in a script block, escaped as the viewer
escapes it; the shell's and the renderer's scripts inline; no request to any other host, so the
page opens from ``file://``), and drives the steps. Renderers write text with ``textContent``
only (model text is untrusted) through the helpers ``Replay.el`` and ``Replay.svg``.

The family lookup happens above this layer: ``distbench.engine.replays.write_replays`` hands the
registry's sources to :func:`write_replays` here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from distbench.report.viewer import ranked, script_json
from distbench.store.catalog import cursor_groups

__all__ = ["Replay", "ReplayPart", "ReplaySource", "grouped", "pick", "records", "render_page",
           "replay_loop", "units_and_steps", "write_replays"]


@dataclass
class Replay:
    """One game as a replay.

    Attributes:
        id: A stable id (the game's id), shown and used in file-free links.
        title: One line naming it.
        static: What every step shares (the board, the matrix, the items...).
        steps: One dict per moment; each has a ``label`` the shell shows under the drawing.
    """

    id: str
    title: str
    static: dict[str, Any]
    steps: list[dict[str, Any]]


@dataclass
class ReplayPart:
    """A family's replays of a run.

    Attributes:
        family: The family's name.
        script: Its renderer: JavaScript calling ``Replay.register(family, draw)`` where
            ``draw(root, replay, step)`` draws step ``step`` of ``replay`` into ``root``.
        games: Game key (a bucket, a game's name) -> its sampled replays.
    """

    family: str
    script: str
    games: dict[str, list[Replay]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplaySource:
    """A family of the registry as replays see it: its name, its main table and its hook
    (None: it draws no replay)."""

    family: str
    table: str
    build: Callable[[duckdb.DuckDBPyConnection, int, int], ReplayPart] | None


def asset(name: str) -> str:
    """The text of a file shipped beside a module: ``"package:file.js"``."""
    package, _, file = name.partition(":")
    return resources.files(package).joinpath(file).read_text(encoding="utf-8")


def pick(con: duckdb.DuckDBPyConnection, source: str, group: str, id_expr: str,
         per_game: int, seed: int) -> dict[str, list[str]]:
    """Up to ``per_game`` distinct ids of ``source`` per value of ``group`` (a column), in the
    seeded order of :func:`distbench.report.viewer.ranked`: the same seed, the same ids."""
    distinct = f"(SELECT DISTINCT {group} AS g, CAST({id_expr} AS VARCHAR) AS id FROM {source})"
    sql = ranked(distinct, "g", "s.id", per_game, seed)
    out: dict[str, list[str]] = {}
    for g, gid, _ in con.execute(f"SELECT g, id, _rank FROM ({sql}) ORDER BY g, _rank").fetchall():
        out.setdefault(str(g), []).append(gid)
    return out


def records(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[Any, dict]:
    """The rows of ``sql`` as dicts, keyed by their first column."""
    result = con.execute(sql, params)
    names = [d[0] for d in result.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in result.fetchall()}


def grouped(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[Any, list[tuple]]:
    """The rows of ``sql`` grouped by their first column (the rest of each row kept, in order)."""
    return cursor_groups(con.execute(sql, params))


def units_and_steps(con: duckdb.DuckDBPyConnection, unit_sql: str, step_sql: str
                    ) -> Callable[[list[str], str], tuple[dict, dict]]:
    """A ``fetch`` for :func:`replay_loop`: a group's units as :func:`records` of ``unit_sql``
    and their steps as :func:`grouped` rows of ``step_sql`` (both take the ids as ``?``)."""
    return lambda ids, _group: (records(con, unit_sql, [ids]), grouped(con, step_sql, [ids]))


def replay_loop(con: duckdb.DuckDBPyConnection, *, family: str, package: str,
                sample: tuple[str, str, str], per_game: int, seed: int,
                fetch: Callable[[list[str], str], Any], build: Callable[[str, Any], Replay]
                ) -> ReplayPart:
    """The loop of a family's replay hook: up to ``per_game`` ids per game key, sampled by
    :func:`pick` from ``sample`` (source, group, id expression); per game key, what its replays
    need read at once (``fetch(ids, key)``), then each replay built in the sampled order
    (``build(id, fetched)``). The renderer is ``replay.js`` of ``package``."""
    part = ReplayPart(family, asset(f"{package}:replay.js"))
    for key, ids in pick(con, *sample, per_game, seed).items():
        fetched = fetch(ids, key)
        part.games[key] = [build(unit, fetched) for unit in ids]
    return part


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "game"


def render_page(part: ReplayPart, game: str, replays: Sequence[Replay], *, title: str) -> str:
    """One self-contained page of a game's replays."""
    data = {"family": part.family, "game": game,
            "replays": [{"id": r.id, "title": r.title, "static": r.static, "steps": r.steps}
                        for r in replays]}
    return (_SHELL.replace("{{title}}", html.escape(title))
            .replace("{{css}}", asset("distbench.report.replay_assets:replay.css"))
            .replace("{{data}}", script_json(data))
            .replace("{{shell}}", asset("distbench.report.replay_assets:replay.js"))
            .replace("{{renderer}}", part.script.replace("</", "<\\/")))


def write_replays(run_dir: Path, out_dir: Path, per_game: int, seed: int,
                  sources: Sequence[ReplaySource]) -> dict[str, str]:
    """Writes the replays of ``run_dir`` under ``out_dir``: one page per game of every family
    that has a replay hook, up to ``per_game`` replays each, sampled by ``seed``. Returns
    ``"<family>/<game>"`` -> the page's path relative to ``out_dir`` (``replays/...html``)."""
    from distbench.store.catalog import open_run

    if per_game < 1:
        raise ValueError(f"per_game must be at least 1, got {per_game}")
    con = open_run(Path(run_dir))
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables")
              .fetchall()}
    out: dict[str, str] = {}
    for source in sources:
        if source.build is None or source.table not in tables:
            continue
        if not con.execute(f"SELECT count(*) FROM {source.table}").fetchone()[0]:
            continue
        part = source.build(con, per_game, seed)
        for game, replays in sorted(part.games.items()):
            if not replays:
                continue
            rel = f"replays/{_slug(part.family)}-{_slug(game)}.html"
            path = Path(out_dir) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_page(part, game, replays,
                                        title=f"{part.family} · {game} · replays"),
                            encoding="utf-8")
            out[f"{part.family}/{game}"] = rel
    return out


_SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>{{css}}</style></head>
<body>
<header><h1>{{title}}</h1>
<label>replay <select id="pick" aria-label="replay"></select></label></header>
<main>
<nav class="controls" aria-label="steps">
<button id="first" title="first (Home)">|&#x25C0;</button>
<button id="back" title="back (&#x2190;)">&#x25C0;</button>
<button id="play" title="play / pause (space)">play</button>
<button id="fwd" title="forward (&#x2192;)">&#x25B6;</button>
<button id="last" title="last (End)">&#x25B6;|</button>
<input id="scrub" type="range" min="0" value="0" aria-label="step">
<span id="where" aria-live="polite"></span>
<a id="link" href="#">link to this moment</a>
</nav>
<p id="caption" class="caption"></p>
<div id="stage"></div>
</main>
<script type="application/json" id="replay-data">{{data}}</script>
<script>{{shell}}</script>
<script>{{renderer}}</script>
<script>Replay.start();</script>
</body></html>
"""
