"""``distbench publish --site``: a static leaderboard site over one or more runs.

Plain files (HTML, one stylesheet, one small script, Parquet and CSV downloads) that open from
disk and serve unchanged from any static host: nothing is fetched from another host. Built from
the store by SQL (each family's comparison units, its tournament ratings, the calls table), so
the Python work grows with the units and players, not with the trials.

- the leaderboard: one Plackett–Luce fit (Bradley–Terry for two seats) over every game where
  models met, each game weighted equally, with a simultaneous bootstrap band
  (:func:`distbench.report.ratings.bootstrap_plackett_luce`); one fit per group of models that
  met, directly or through others (:func:`groups`), since models that never met are not
  comparable;
- each family's own headline (its ``Comparing`` units' first metric) per game with its
  interval (:func:`distbench.report.compare.compare_connection`);
- the Nash-averaging mass of a tournament's ratings;
- calls, tokens and cost per model; the date, distbench version and harness hash of each run;
- a page per model and per game; a game links to its replays when the replay writer exists.

The caller (the CLI) hands the families' hooks (:class:`SiteFamily`): this module names no family.
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from distbench.report.compare import LEADERBOARD_COLUMNS, FamilyUnits, compare_connection
from distbench.report.ratings import bootstrap_plackett_luce, elo
from distbench.store.catalog import fetch_records as _fetch
from distbench.store.harness import mixed_harnesses

UNKNOWN = "unknown"
LEVEL = 0.95


@dataclass(frozen=True)
class SiteFamily:
    """What the site needs of one family (from the registry, by the caller).

    Attributes:
        name: Family name.
        units: Its comparison units (None: not compared).
        outcomes: ``(con) -> [SeatOutcome]`` of its tournaments (None: it has none); a
            run's seat outcomes are the games where its players met.
        scripted: ``(label) -> bool``: the label names one of the family's own players (a
            scripted player: its rules are the family's), not a model, which is the same
            player in every family (None: every label is a model).
    """

    name: str
    units: FamilyUnits | None = None
    outcomes: Callable[[Any], list[Any]] | None = None
    scripted: Callable[[str], bool] | None = None


@dataclass
class SiteTables:
    """Every table the site shows, name -> (columns, rows)."""

    tables: dict[str, tuple[list[str], list[tuple]]]

    def records(self, name: str) -> list[dict[str, Any]]:
        columns, rows = self.tables[name]
        return [dict(zip(columns, r, strict=True)) for r in rows]


# --- data -----------------------------------------------------------------------------------

def _runs_table(run_dirs: Sequence[Path]) -> tuple[list[str], list[tuple]]:
    """Per run: id, family, date, distbench version, harness hash ("unknown" when absent)."""
    rows = []
    for run_dir in run_dirs:
        manifest = _json(run_dir / "manifest.json")
        summary = _json(run_dir / "summary.json")
        harness = (summary.get("harness_hash") or manifest.get("harness_hash") or UNKNOWN)
        if isinstance(harness, list):  # a run whose shards mix harnesses
            harness = "+".join(str(h) for h in harness)
        date = str(manifest.get("finished_at") or manifest.get("started_at") or UNKNOWN)[:10]
        version = (manifest.get("versions") or {}).get("distbench", UNKNOWN)
        rows.append((manifest.get("run_id", run_dir.name), manifest.get("family", UNKNOWN),
                     date, version, str(harness), manifest.get("state", UNKNOWN)))
    return ["run_id", "family", "date", "distbench_version", "harness_hash", "state"], rows


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _have(con: Any, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                            [table]).fetchone()[0])


def _meetings(con: Any, families: Sequence[SiteFamily], present: set[str],
              ) -> dict[str, list[tuple[list[str], list[float]]]]:
    """Game key -> the tables where players met: (players, scores, higher better).

    A family with tournaments: each of its games as its seat outcomes (key: the family; an
    n-seat family's tables of one player alone are left out: nobody met there). Any
    other compared family: each unit (the same instance) its players played in one group, their
    headline value as the score (key: family/group)."""
    games: dict[str, list[tuple[list[str], list[float]]]] = defaultdict(list)
    for fam in families:
        if fam.name not in present:
            continue
        if fam.outcomes is not None:
            for o in fam.outcomes(con):
                if hasattr(o, "player_a"):  # a two-seat family's SeatOutcome
                    games[fam.name].append(([o.player_a, o.player_b], [o.score_a, o.score_b]))
                elif len(set(o[2])) >= 2:  # an n-seat family's (game, shard, players, scores)
                    games[fam.name].append((list(o[2]), [float(x) for x in o[3]]))
            continue
        if fam.units is None:
            continue
        head = fam.units.metrics[0]
        sign = 1.0 if head.better == "higher" else -1.0
        cells: dict[tuple[str, str], tuple[list[str], list[float]]] = {}
        for r in _fetch(con, fam.units.sql):
            n = r[f"{head.name}_n"]
            if not n:
                continue
            players, scores = cells.setdefault((r["grp"], str(r["unit"])), ([], []))
            players.append(r["player"])
            scores.append(sign * float(r[f"{head.name}_sum"]) / n)
        for (grp, _), (players, scores) in sorted(cells.items()):
            if len(set(players)) >= 2:
                games[f"{fam.name}/{grp}"].append((players, scores))
    return _scripted_apart(games, families)


def _scripted_apart(games: dict[str, list[tuple[list[str], list[float]]]],
                    families: Sequence[SiteFamily]) -> dict[str, list[tuple[list[str], list[float]]]]:
    """A scripted player's label in several families (``scripted:random`` of negotiation and
    of gama play by different rules) names a player per family: ``label (family)``, so the
    fit does not join their families' players into one group through it. Models keep their
    label: a model is the same player everywhere."""
    scripted = {f.name: f.scripted for f in families if f.scripted is not None}
    seen: dict[str, set[str]] = defaultdict(set)
    for key, tables in games.items():
        fam = key.split("/", 1)[0]
        if fam in scripted:
            for names, _ in tables:
                for n in names:
                    if scripted[fam](n):
                        seen[n].add(fam)
    shared = {n for n, fams in seen.items() if len(fams) > 1}
    if not shared:
        return games
    out: dict[str, list[tuple[list[str], list[float]]]] = defaultdict(list)
    for key, tables in games.items():
        fam = key.split("/", 1)[0]
        for names, scores in tables:
            out[key].append(([f"{n} ({fam})" if n in shared and fam in scripted else n
                              for n in names], scores))
    return out


def groups(games: dict[str, list[tuple[list[str], list[float]]]]) -> list[list[str]]:
    """The players in groups that met, directly or through a chain of opponents (the
    connected components of the "sat at one table" graph), largest first, each sorted.
    Strengths of two groups are not comparable: no game links them."""
    parent: dict[str, str] = {}

    def root(p: str) -> str:
        while parent.setdefault(p, p) != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for tables in games.values():
        for names, _ in tables:
            for other in names[1:]:
                parent[root(other)] = root(names[0])
            root(names[0])
    members: dict[str, list[str]] = defaultdict(list)
    for p in sorted(parent):
        members[root(p)].append(p)
    return sorted(members.values(), key=lambda m: (-len(m), m[0]))


LEADERBOARD = ["rank", "player", "games", "tables", "strength", "band_low", "band_high",
               "elo", "elo_low", "elo_high", "group"]
"""The leaderboard's columns: ``group`` names the players' group (:func:`groups`); strength,
band and rank compare only within one."""


def _fit(games: dict[str, list[tuple[list[str], list[float]]]], seed: int, resamples: int,
         ) -> tuple[list[str], list[tuple]]:
    """One Plackett–Luce fit per group of players who met (:func:`groups`), over that
    group's tables of every game, each game weighted equally; a group whose fit fails (or of
    one player) has no rows."""
    rows: list[tuple] = []
    for number, members in enumerate(groups(games), 1):
        inside = set(members)
        own = {key: [t for t in tables if t[0][0] in inside] for key, tables in games.items()}
        rows.extend(r + (f"group {number}",) for r in _fit_group(
            {k: v for k, v in own.items() if v}, members, seed, resamples))
    return LEADERBOARD, rows


def _fit_group(games: dict[str, list[tuple[list[str], list[float]]]], players: list[str],
               seed: int, resamples: int) -> list[tuple]:
    """The rows of one group's fit (every column but ``group``)."""
    if len(players) < 2:
        return []
    index = {p: i for i, p in enumerate(players)}
    flat, weights = [], []
    for key in sorted(games):
        tables = games[key]
        for names, scores in tables:
            flat.append(([index[p] for p in names], scores))
            weights.append(1.0 / len(tables))
    try:
        fit = bootstrap_plackett_luce(len(players), flat, seed=seed, resamples=resamples,
                                      level=LEVEL, game_weights=weights)
    except ValueError:
        return []
    n_games = {p: sum(any(p in t[0] for t in tables) for tables in games.values())
               for p in players}
    n_tables = {p: sum(p in t[0] for tables in games.values() for t in tables) for p in players}
    low, high = np.asarray(fit.low), np.asarray(fit.high)
    order = sorted(range(len(players)), key=lambda i: (-fit.theta[i], players[i]))
    rows = []
    for i in order:
        rank = 1 + int(np.sum(low > high[i]))  # ranks shared where the bands overlap
        rows.append((rank, players[i], n_games[players[i]], n_tables[players[i]],
                     float(fit.theta[i]), float(low[i]), float(high[i]),
                     float(elo(np.asarray([fit.theta[i]]))[0]),
                     float(elo(np.asarray([low[i]]))[0]), float(elo(np.asarray([high[i]]))[0])))
    return rows


def site_tables(con: Any, run_dirs: Sequence[Path], families: Sequence[SiteFamily], *,
                seed: int = 0, resamples: int = 200) -> SiteTables:
    """Every table of the site, from the runs whose views ``con`` holds."""
    runs = _runs_table(run_dirs)
    present = {r[1] for r in runs[1]}
    harness = {r[0]: r[4] for r in runs[1]}
    units = [f.units for f in families if f.units is not None and f.name in present
             and _have(con, f.units.table) and all(_have(con, t) for t in f.units.needs)]
    board, _, _, _ = compare_connection(con, units)
    head = {u.family: u.metrics[0].name for u in units}
    headline = [r + (harness.get(r[6], UNKNOWN),) for r in board if r[3] == head[r[0]]]
    tables = {
        "runs": runs,
        "headlines": (LEADERBOARD_COLUMNS + ["harness_hash"], headline),
    }
    with_outcomes = [f for f in families if f.name in present and (
        f.outcomes is not None or f.units in units)]
    tables["leaderboard"] = _fit(_meetings(con, with_outcomes, present), seed, resamples)
    nash: list[tuple] = []
    if _have(con, "ratings"):
        nash = [tuple(r.values()) for r in _fetch(
            con, "SELECT family, player, matches, nash_mass, nash_rating, bt_strength, bt_low, "
                 "bt_high, run_id FROM ratings ORDER BY family, nash_mass DESC, player")]
    tables["nash"] = (["family", "player", "matches", "nash_mass", "nash_rating", "bt_strength",
                       "bt_low", "bt_high", "run_id"], nash)
    usage: list[tuple] = []
    if _have(con, "calls"):
        usage = [tuple(r.values()) for r in _fetch(con, _USAGE_SQL)]
    tables["usage"] = (["model", "run_id", "calls", "failed_calls", "prompt_tokens",
                        "completion_tokens", "cost_usd"], usage)
    _add_cost(tables, run_dirs)
    return SiteTables(tables)


_USAGE_SQL = """
SELECT model, run_id, count(*) AS calls, count(*) FILTER (WHERE status <> 'ok') AS failed_calls,
       coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
       coalesce(sum(completion_tokens), 0) AS completion_tokens, NULL::DOUBLE AS cost_usd
FROM calls GROUP BY model, run_id ORDER BY model, run_id
"""


def _add_cost(tables: dict[str, tuple[list[str], list[tuple]]], run_dirs: Sequence[Path]
              ) -> None:
    """Cost from the manifest's prices per million tokens (None where no price is given)."""
    prices: dict[tuple[str, str], tuple[float, float]] = {}
    for run_dir in run_dirs:
        manifest = _json(run_dir / "manifest.json")
        for m in manifest.get("models") or []:
            if isinstance(m, dict) and m.get("price_in") is not None \
                    and m.get("price_out") is not None:
                prices[(manifest.get("run_id", run_dir.name), str(m.get("model")))] = (
                    float(m["price_in"]), float(m["price_out"]))
    columns, rows = tables["usage"]
    out = []
    for r in rows:
        price = prices.get((r[1], r[0]))
        cost = (r[4] * price[0] + r[5] * price[1]) / 1e6 if price else None
        out.append(r[:6] + (cost,))
    tables["usage"] = (columns, out)


# --- files ----------------------------------------------------------------------------------

def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"
    return slug[:80]


def _write_data(tables: SiteTables, data_dir: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    data_dir.mkdir(parents=True, exist_ok=True)
    for name, (columns, rows) in tables.tables.items():
        arrays = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
        table = pa.table(arrays) if rows else pa.table({c: pa.array([], pa.string())
                                                        for c in columns})
        pq.write_table(table, data_dir / f"{name}.parquet")
        pacsv.write_csv(table, data_dir / f"{name}.csv")


class Raw(str):
    """A cell's HTML, shown as is (a drawing the site made, never stored text)."""


def _cell(value: Any) -> tuple[str, str]:
    """(shown text, sort key) of a value."""
    if isinstance(value, Raw):
        return value, ""
    if value is None:
        return "–", ""
    if isinstance(value, float):
        if not np.isfinite(value):
            return "–", ""
        return f"{round(value, 3) + 0.0:.3f}", repr(value)
    return str(value), str(value)


def _table(tid: str, columns: list[str], rows: list[tuple], *, links: dict[int, Callable[
        [Any], str | None]] | None = None, caption: str = "", prefix: str = "") -> str:
    links = links or {}
    head = "".join(f'<th scope="col"><button type="button" data-col="{i}">{html.escape(c)}'
                   "</button></th>" for i, c in enumerate(columns))
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            text, key = _cell(value)
            href = links[i](value) if i in links else None
            shown = (f'<a href="{html.escape(href)}">{html.escape(text)}</a>' if href
                     else text if isinstance(value, Raw) else html.escape(text))
            cells.append(f'<td data-v="{html.escape(key)}">{shown}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    downloads = (f'<p class="dl">Download: <a href="{prefix}data/{tid}.csv">CSV</a> · '
                 f'<a href="{prefix}data/{tid}.parquet">Parquet</a> (every row of the table)</p>'
                 if tid else "")
    return (f'<div class="tbl"><label>Filter <input type="search" data-filter="{tid}-t" '
            f'aria-label="filter {html.escape(caption or tid)}"></label>{downloads}'
            f'<div class="scroll"><table id="{tid}-t" class="sortable">'
            f"<caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
            f'<tbody>{"".join(body)}</tbody></table></div></div>')


_CSS = """
:root{--fg:#1a1a1a;--bg:#ffffff;--muted:#4a4a4a;--link:#0b57a4;--line:#c8c8c8;--head:#eef2f6}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header,main,footer{max-width:1100px;margin:0 auto;padding:0 12px}
header nav a{margin-right:1em}
a{color:var(--link)}
p.note,p.dl,footer{color:var(--muted);font-size:.9em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9em;min-width:100%}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border-bottom:1px solid var(--line);padding:.25em .5em;text-align:left;white-space:nowrap}
th{background:var(--head)}
th button{font:inherit;font-weight:600;background:none;border:0;color:var(--fg);cursor:pointer;
padding:0}
th button[aria-sort=ascending]::after{content:" ▲"}
th button[aria-sort=descending]::after{content:" ▼"}
input[type=search]{font:inherit;margin:.3em;max-width:100%}
.band{display:inline-block;position:relative;width:120px;height:10px;background:#e6e6e6;
vertical-align:middle}
.band span{position:absolute;top:0;height:10px;background:#0b57a4}
@media (max-width:600px){body{font-size:15px}th,td{padding:.2em .3em}.band{width:60px}}
"""

_JS = """
(function(){
function key(td){var v=td.getAttribute('data-v');var n=parseFloat(v);
return (v!==''&&!isNaN(n)&&isFinite(v))?n:v;}
document.querySelectorAll('table.sortable').forEach(function(t){
t.querySelectorAll('th button').forEach(function(b){b.addEventListener('click',function(){
var col=+b.getAttribute('data-col');var asc=b.getAttribute('aria-sort')!=='ascending';
t.querySelectorAll('th button').forEach(function(o){o.removeAttribute('aria-sort');});
b.setAttribute('aria-sort',asc?'ascending':'descending');
var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
rows.sort(function(x,y){var a=key(x.cells[col]),c=key(y.cells[col]);
if(a===c)return 0;if(a===''||c==='')return a===''?1:-1;return (a<c?-1:1)*(asc?1:-1);});
rows.forEach(function(r){body.appendChild(r);});});});});
var d=document.documentElement;d.setAttribute('data-overflow',d.scrollWidth>d.clientWidth?'yes':'no');
document.querySelectorAll('input[data-filter]').forEach(function(i){
i.addEventListener('input',function(){var q=i.value.toLowerCase();
var t=document.getElementById(i.getAttribute('data-filter'));
Array.prototype.forEach.call(t.tBodies[0].rows,function(r){
r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});});});
})();
"""


def _page(title: str, body: str, prefix: str, stamp: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title>"
            f'<link rel="stylesheet" href="{prefix}assets/site.css"></head><body>'
            f'<header><nav><a href="{prefix}index.html">Leaderboard</a>'
            f'<a href="{prefix}games.html">Games</a><a href="{prefix}runs.html">Runs</a></nav>'
            f"<h1>{html.escape(title)}</h1></header><main>{body}</main>"
            f"<footer><p>{html.escape(stamp)}</p></footer>"
            f'<script src="{prefix}assets/site.js"></script></body></html>')


def harness_note(runs: list[dict[str, Any]]) -> str:
    """One line when runs of one family were made by different harnesses ("" when they were
    not): keyed by family as :func:`~distbench.store.harness.mixed_harnesses` says why."""
    hashes = mixed_harnesses((str(r["family"]), str(r["harness_hash"])) for r in runs)
    if not hashes:
        return ""
    return (f"the runs differ in harness ({', '.join(hashes)}): their numbers were made by "
            "different prompts, parsers or scorers; compare with care")


def _stamp(tables: SiteTables) -> str:
    runs = tables.records("runs")
    dates = sorted({r["date"] for r in runs})
    versions = sorted({str(r["distbench_version"]) for r in runs})
    hashes = sorted({r["harness_hash"] for r in runs})
    note = harness_note(runs)
    mixed = f" ({note})" if note else ""
    return (f"Built by distbench from {len(runs)} run(s) dated {', '.join(dates) or '–'}; "
            f"distbench {', '.join(versions) or '–'}; harness hash {', '.join(hashes) or '–'}"
            f"{mixed}. Each number's run, date, version and harness hash: the Runs page.")


def _band_svg(rows: list[tuple], lo_i: int, hi_i: int, est_i: int) -> list[str]:
    """A small inline bar per row: the band over the common scale."""
    values = [v for r in rows for v in (r[lo_i], r[hi_i]) if v is not None and np.isfinite(v)]
    if not values:
        return ["" for _ in rows]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    out = []
    for r in rows:
        left = 100 * (r[lo_i] - lo) / span
        width = max(2.0, 100 * (r[hi_i] - r[lo_i]) / span)
        out.append(Raw(f'<span class="band" aria-hidden="true"><span style="left:{left:.1f}%;'
                       f'width:{width:.1f}%"></span></span>'))
    return out


def _groups_note(board: list[tuple], group_i: int) -> str:
    """The leaderboard's groups when there are several ("" for one): who is in each, and that
    numbers of two groups are not comparable."""
    members: dict[str, list[str]] = {}
    for r in board:
        members.setdefault(r[group_i], []).append(str(r[1]))
    if len(members) < 2:
        return ""
    items = "".join(f"<li><strong>{html.escape(g)}</strong> ({len(m)} models): "
                    f"{html.escape(', '.join(sorted(m)))}</li>" for g, m in members.items())
    return (f'<p class="note groups"><strong>Not comparable across groups.</strong> These models '
            f"fall into {len(members)} groups that never met, directly or through a chain of "
            "opponents: each group has its own fit (strengths of mean 0 within it), band and "
            "ranks, and a strength, band or rank of one group says nothing about a model of "
            f"another (the group column).</p><ul class=\"groups\">{items}</ul>")


def write_site(tables: SiteTables, out_dir: Path, *,
               replays: dict[str, str] | None = None) -> list[Path]:
    """Writes the site's files into ``out_dir``; returns the pages written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "assets").mkdir(exist_ok=True)
    (out_dir / "assets" / "site.css").write_text(_CSS.strip() + "\n", encoding="utf-8")
    (out_dir / "assets" / "site.js").write_text(_JS.strip() + "\n", encoding="utf-8")
    _write_data(tables, out_dir / "data")
    stamp = _stamp(tables)
    replays = replays or {}
    pages = []

    def model_link(prefix: str) -> Callable[[Any], str]:
        return lambda p: f"{prefix}models/{_slug(str(p))}.html"

    def game_link(prefix: str) -> Callable[[Any], str]:
        return lambda g: f"{prefix}games/{_slug(str(g))}.html"

    board_cols, board = tables.tables["leaderboard"]
    head_cols, heads = tables.tables["headlines"]
    nash_cols, nash = tables.tables["nash"]
    use_cols, usage = tables.tables["usage"]
    group_i = board_cols.index("group")
    bands = {}  # each group's bands on its own scale: strengths of two groups never compare
    for label in {r[group_i] for r in board}:
        mine = [r for r in board if r[group_i] == label]
        bands.update(zip((id(r) for r in mine), _band_svg(mine, 5, 6, 4), strict=True))
    board_shown = [r + (bands[id(r)],) for r in board]
    body = [
        '<p class="note">One Plackett–Luce fit (Bradley–Terry when two play) over every game '
        "where models met (one per group of models that met, when some never did), "
        "<strong>each game weighted equally</strong> (a game's tables weigh "
        "1 / their number, so a game played often does not outweigh one played rarely): in a "
        "tournament a game is its seat outcomes, elsewhere the same instance played by several "
        f"models. strength: log-odds, mean 0; band: {LEVEL:.0%} simultaneous bootstrap band "
        "(every model's band holds at once); rank: 1 + the models whose band lies wholly "
        "above. Elo = 1500 + 400 / ln 10 × strength.</p>",
        _groups_note(board, group_i),
        _table("leaderboard", board_cols + ["band"], board_shown,
               links={1: model_link("")}, caption="Leaderboard (all games)")
        if board else "<p>No two models met in these runs: no joint fit.</p>",
        "<h2>Each family's headline</h2><p class=\"note\">Each family's own headline metric "
        "per game (group) with its 95% interval over units.</p>",
        _table("headlines", head_cols, heads, links={1: game_link(""), 7: model_link("")},
               caption="Headline per game"),
        "<h2>Nash averaging</h2>",
        _table("nash", nash_cols, nash, links={1: model_link("")},
               caption="Nash-averaging mass (tournaments)") if nash
        else "<p>No tournament in these runs.</p>",
        "<h2>Calls, tokens and cost</h2>",
        _table("usage", use_cols, usage, links={0: model_link("")}, caption="Usage per model"),
    ]
    index = out_dir / "index.html"
    index.write_text(_page("distbench leaderboard", "".join(body), "", stamp), encoding="utf-8")
    pages.append(index)

    runs_cols, runs = tables.tables["runs"]
    page = out_dir / "runs.html"
    page.write_text(_page("Runs", _table("runs", runs_cols, runs, caption="Runs"), "", stamp),
                    encoding="utf-8")
    pages.append(page)

    games = sorted({(r[0], r[1]) for r in heads} | {(g, "") for g in replays})
    (out_dir / "games").mkdir(exist_ok=True)
    listing = []
    for family, grp in games:
        name = f"{family}/{grp}" if grp else family
        rows = [r for r in heads if r[0] == family and (not grp or r[1] == grp)]
        replay = replays.get(name) or replays.get(family)
        link = (f'<p><a class="replay" href="../replays/{html.escape(replay)}">Replays of this '
                "game</a></p>" if replay else "<p>No replays were written for this game.</p>")
        body = link + _table("", head_cols, rows, links={7: model_link("../")},
                             caption=f"Headline: {name}", prefix="../")
        page = out_dir / "games" / f"{_slug(name)}.html"
        page.write_text(_page(f"Game {name}", body, "../", stamp), encoding="utf-8")
        pages.append(page)
        listing.append((name, family, len(rows), "yes" if replay else "no"))
    page = out_dir / "games.html"
    page.write_text(_page("Games", _table("", ["game", "family", "rows", "replays"], listing,
                                          links={0: game_link("")}, caption="Games"),
                          "", stamp), encoding="utf-8")
    pages.append(page)

    (out_dir / "models").mkdir(exist_ok=True)
    models = sorted({r[1] for r in board} | {r[7] for r in heads} | {r[1] for r in nash}
                    | {r[0] for r in usage})
    for model in models:
        body = [
            _table("", board_cols, [r for r in board if r[1] == model],
                   caption="Joint fit", prefix="../"),
            _table("", head_cols, [r for r in heads if r[7] == model],
                   links={1: game_link("../")}, caption="Headline per game", prefix="../"),
            _table("", nash_cols, [r for r in nash if r[1] == model],
                   caption="Nash averaging", prefix="../"),
            _table("", use_cols, [r for r in usage if r[0] == model or str(model).endswith(
                str(r[0]))], caption="Usage", prefix="../"),
        ]
        page = out_dir / "models" / f"{_slug(str(model))}.html"
        page.write_text(_page(f"Model {model}", "".join(body), "../", stamp), encoding="utf-8")
        pages.append(page)
    return pages


def build_site(run_dirs: Sequence[Path], out_dir: Path, families: Sequence[SiteFamily], *,
               seed: int = 0, resamples: int = 200, replays_per_game: int = 3,
               replay_writer: Callable[..., dict[str, str]] | None = None,
               ) -> tuple[list[Path], str]:
    """The site of ``run_dirs`` in ``out_dir`` (see the module's docstring): the pages
    written, and one line when the runs differ in harness ("" otherwise). ``replay_writer``
    (``distbench.engine.replays.write_replays``: the family lookup sits above ``report``)
    draws each run's sampled games under ``out_dir/replays``; None: no replays."""
    from distbench.store.catalog import open_runs

    con = open_runs(run_dirs, safe=True)
    try:
        tables = site_tables(con, run_dirs, families, seed=seed, resamples=resamples)
    finally:
        con.close()
    replays = _replays(replay_writer, run_dirs, out_dir / "replays", replays_per_game, seed)
    return write_site(tables, out_dir, replays=replays), harness_note(tables.records("runs"))


def _replays(writer: Callable[..., dict[str, str]] | None, run_dirs: Sequence[Path],
             out_dir: Path, per_game: int, seed: int) -> dict[str, str]:
    """Game key -> replay page (relative to ``out_dir``), over every run (each run in its own
    folder, so two runs' pages of one game never overwrite each other; the first run's page
    of a game is the one linked); {} without a writer."""
    if writer is None or per_game < 1:
        return {}
    found: dict[str, str] = {}
    for i, run_dir in enumerate(run_dirs):
        for game, rel in writer(run_dir, out_dir / f"run{i}", per_game, seed).items():
            found.setdefault(game, f"run{i}/{rel}")
    return found
