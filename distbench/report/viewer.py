"""The transcript viewer: one self-contained HTML page to browse samples of what models said.

``distbench view RUN_DIR`` writes it (``build_view``). Each family present in the run gives a
:class:`ViewPart` (its ``Family.viewer`` hook, ``games/<family>/viewer.py``); a family without
the hook gets :func:`generic_part`, the first rows of its main table with every column.

What the page holds, and why it stays small on any run:

- **Strata and full counts.** A part names its filters (model, bucket, mode, language, parse
  status...); a *stratum* is one combination of their values, with the number of rows the run
  has in it (from SQL over every row). The filter menus show these full counts
  (``no_answer (812)``), recomputed for the other filters' current choice.
- **A seeded sample per stratum.** Up to ``sample`` items per stratum, ranked by
  ``md5(id || ':' || seed)`` (:func:`ranked`): deterministic for a seed, the same for any
  DuckDB thread count, and every stratum, so every parse status present, has items.
- **A byte budget.** Texts are clipped to ``max_chars``; then :func:`fit_budget` keeps the
  first ``k`` items of every stratum for the largest ``k`` whose data fits ``budget_bytes``
  (default 4.5 MB), never fewer than one per stratum. Long texts shared by many items (a game's
  prompt) are stored once and referenced. The page is the data plus about 15 KB of CSS and
  script, so the file stays under 5 MB whatever the run's size (unless a run has so many
  strata that one item of each exceeds the budget, which the page then says).
- **Lazy parsing.** Each family's data is a separate ``<script type="application/json">``
  block, parsed when its tab is first shown; items are drawn 20 to a page.

Safety: model text is untrusted. It reaches the page only as JSON inside script blocks, with
``<``, ``>``, ``&`` and the JavaScript line separators escaped (so ``</script>`` cannot close
the block), and the script writes it with ``textContent`` only (never ``innerHTML``).

The page reads and writes its state in the URL fragment: ``view.html#family=matrix&status=no_answer``
opens the matrix tab filtered to that parse status (``q=`` searches the sampled items' text,
``page=`` is the page).

Block kinds an item is made of (plain dicts, so a family needs nothing but this module):
``{"t": "kv", "rows": [[label, value], ...]}``, ``{"t": "text", "label": ..., "text": ... |
"ref": shared id, "open": bool, "cls": "raw"|"prompt"}``, ``{"t": "grid", "label": ..., "head":
[...], "rows": [[...]], "mark": [row indices]}``, ``{"t": "msg", "who": ..., "meta": ...,
"text": ..., "bad": bool, "side": "a"|"b", "extra": ...}``, ``{"t": "h", "text": ...}`` and
``{"t": "row", "blocks": [...]}`` (blocks side by side).
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from distbench.report.document import cell_word

log = logging.getLogger(__name__)

__all__ = ["ViewItem", "ViewOptions", "ViewPart", "ViewResult", "ViewSource", "build_view",
           "clip", "fit_budget", "generic_part", "num", "ranked", "render_view", "strata_counts"]

#: Bytes of item data a page may hold (the page adds about 15 KB of frame).
BUDGET_BYTES = 4_500_000
#: Items drawn per page of the list.
PAGE_SIZE = 20


@dataclass(frozen=True)
class ViewOptions:
    """How much the viewer samples.

    Attributes:
        sample: Items per stratum at most.
        seed: Seed of the sample (same seed, same items).
        max_chars: Longest text kept whole (longer ones are clipped, their length said).
        budget_bytes: Bytes of item data the page may hold in all.
        manifest: The run's ``manifest.json`` (families read their configuration from it).
    """

    sample: int = 50
    seed: int = 0
    max_chars: int = 4000
    budget_bytes: int = BUDGET_BYTES
    manifest: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sample < 1:
            raise ValueError(f"sample must be at least 1, got {self.sample}")
        if self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed}")


@dataclass
class ViewItem:
    """One sampled row (a trial, an episode, a game) as the page shows it.

    Attributes:
        key: Its stratum: one value per filter of the part.
        rank: Its place in the stratum's seeded order (0 first).
        title: One line naming it.
        blocks: What is shown (block dicts, see the module docstring).
    """

    key: tuple[str, ...]
    rank: int
    title: str
    blocks: list[dict[str, Any]]


@dataclass
class ViewPart:
    """A family's part of the page.

    Attributes:
        family: The family's name (the tab).
        title: The tab's heading.
        unit: What an item is (``trials``, ``episodes``, ``games``).
        filters: ``(key, label)`` per filter, in the order of ``ViewItem.key``; the key
            ``status`` is the parse status (or outcome) filter.
        strata: ``(values, full count)`` of every stratum of the run.
        items: The sampled items.
        shared: Long texts referenced by items (``{"t": "text", "ref": id}``), stored once.
        good: Status values that are not failures (drawn plain, the others marked).
        note: One line shown under the tab's heading.
    """

    family: str
    title: str
    unit: str
    filters: tuple[tuple[str, str], ...]
    strata: list[tuple[tuple[str, ...], int]]
    items: list[ViewItem]
    shared: dict[str, str] = field(default_factory=dict)
    good: tuple[str, ...] = ("ok",)
    note: str = ""


@dataclass(frozen=True)
class ViewSource:
    """Where a family's part comes from: its hook ``make(con, options)``, or None for the
    generic view of ``table``."""

    family: str
    table: str
    make: Callable[[duckdb.DuckDBPyConnection, ViewOptions], ViewPart] | None = None


@dataclass(frozen=True)
class ViewResult:
    """What ``build_view`` wrote: the page, its size, items kept per family, seconds taken."""

    path: Path
    bytes: int
    items: dict[str, int]
    strata: dict[str, int]
    seconds: float


# --- helpers for the families' hooks -----------------------------------------------------

def clip(text: Any, max_chars: int) -> str | None:
    """``text`` as a string, cut to ``max_chars`` with the cut said; None stays None."""
    if text is None:
        return None
    text = str(text)
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n… [clipped: {len(text):,} characters in all]"


TINY = 1e-9
"""Numbers smaller than this in size are shown as 0, as the report does: a Nash gap of
6.661e-16 is float noise around a zero, not a number to print."""


def num(value: Any, digits: int = 4) -> str:
    """A number as the page shows it: ``digits`` significant digits, sizes below
    :data:`TINY` as 0, None as ``n/a``."""
    word = cell_word(value)
    if word is not None:
        return word
    if isinstance(value, float):
        return "0" if abs(value) < TINY else f"{value:.{digits}g}"
    return str(value)


def strata_counts(con: duckdb.DuckDBPyConnection, sql: str,
                  params: Sequence[Any] = ()) -> list[tuple[tuple[str, ...], int]]:
    """Runs ``sql`` (filter values then a count, one row per stratum) into ``(values, n)``;
    NULL values read ``(none)``."""
    rows = con.execute(sql, list(params)).fetchall()
    return [(tuple("(none)" if v is None else str(v) for v in r[:-1]), int(r[-1])) for r in rows]


def per_stratum(options: ViewOptions, strata: int, item_bytes: int = 200) -> int:
    """Items to fetch per stratum: ``options.sample``, fewer when so many strata could not
    fit the budget anyway (an item costs at least ``item_bytes``)."""
    most = max(1, options.budget_bytes // item_bytes // max(strata, 1))
    return max(1, min(options.sample, most))


def ranked(source: str, partition: str, id_expr: str, limit: int, seed: int) -> str:
    """SQL of the rows of ``source`` (a table or a parenthesised query, aliased ``s``) ranked
    within each ``partition`` by ``md5(id || ':' || seed)`` (column ``_rank``, 1 first),
    keeping ``_rank <= limit``."""
    return (f"SELECT * FROM (SELECT s.*, row_number() OVER (PARTITION BY {partition} "
            f"ORDER BY md5(CAST({id_expr} AS VARCHAR) || ':{int(seed)}'), {id_expr}) AS _rank "
            f"FROM {source} s) WHERE _rank <= {int(limit)}")


def sampled(con: duckdb.DuckDBPyConnection, options: ViewOptions, strata_sql: str, source: str,
            partition: str, id_expr: str, item_bytes: int) -> tuple[list, str]:
    """What a family's viewer samples: (the strata of ``strata_sql``, :func:`strata_counts`;
    the SQL of the rows of ``source`` :func:`ranked` within each ``partition``, as many per
    stratum as :func:`per_stratum` allows for items of ``item_bytes``)."""
    strata = strata_counts(con, strata_sql)
    limit = per_stratum(options, len(strata), item_bytes=item_bytes)
    return strata, ranked(source, partition, id_expr, limit, options.seed)


def share(shared: dict[str, str], text: str) -> str:
    """Stores ``text`` once in ``shared``; returns its id."""
    key = "s" + hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
    shared.setdefault(key, text)
    return key


# --- the generic part ----------------------------------------------------------------------

_GENERIC_FILTERS = (("model", "model"), ("player", "player"), ("mode", "mode"),
                    ("parse_status", "status"))


def generic_part(con: duckdb.DuckDBPyConnection, family: str, table: str,
                 options: ViewOptions) -> ViewPart:
    """A family without a viewer hook: the rows of its main table with every column, up to
    ``options.sample`` per value of its ``model``/``player``/``mode``/``parse_status`` columns
    (those it has; the first rows by a seeded order)."""
    columns = [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    filters = [(col, key if key != "status" else "status") for col, key in _GENERIC_FILTERS
               if col in columns]
    keys = [c for c, _ in filters]
    group = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in keys)
    if keys:
        strata = strata_counts(con, f"SELECT {group}, count(*) FROM {table} GROUP BY ALL ORDER BY ALL")
    else:
        strata = [((), int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]))]
    limit = per_stratum(options, len(strata))
    partition = group or "1"
    result = con.execute(ranked(table, partition, "s", limit, options.seed)
                         + " ORDER BY _rank")
    names = [d[0] for d in result.description]
    items = []
    for row in result.fetchall():
        rec = dict(zip(names, row, strict=True))
        rank = rec.pop("_rank") - 1
        key = tuple("(none)" if rec[c] is None else str(rec[c]) for c in keys)
        kv = [[name, clip(_plain(value), options.max_chars)] for name, value in rec.items()]
        title = " · ".join([str(rec.get(c)) for c in ("game_id", "episode_id", "trial_id")
                            if rec.get(c) is not None][:1] + list(key))
        items.append(ViewItem(key, rank, title or f"row {len(items) + 1}",
                              [{"t": "kv", "rows": kv}]))
    labels = {"model": "model", "player": "player", "mode": "mode", "parse_status": "parse status"}
    return ViewPart(family, f"{family} ({table})", "rows",
                    tuple(("status" if c == "parse_status" else c, labels[c]) for c in keys),
                    strata, items, note=f"generic view: rows of {table} with every column "
                    "(the family has no viewer hook)")


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return num(value, 6)
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return num(value)


# --- budget -----------------------------------------------------------------------------------

def _refs(blocks: list[dict[str, Any]]) -> set[str]:
    return {b["ref"] for b in blocks if "ref" in b}


def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())


def fit_budget(parts: list[ViewPart], budget: int) -> list[ViewPart]:
    """Keeps the first ``k`` items of every stratum (by rank) for the largest ``k`` whose
    items and shared texts fit ``budget`` bytes of JSON; at least one per stratum."""
    sizes = [[_size(_item_json(i)) for i in p.items] for p in parts]
    shared_sizes = [{k: _size(v) for k, v in p.shared.items()} for p in parts]

    def total(k: int) -> int:
        out = 0
        for p, ss, sh in zip(parts, sizes, shared_sizes, strict=True):
            refs: set[str] = set()
            for item, size in zip(p.items, ss, strict=True):
                if item.rank < k:
                    out += size
                    refs |= _refs(item.blocks)
            out += sum(sh[r] for r in refs)
        return out

    most = max((i.rank + 1 for p in parts for i in p.items), default=1)
    lo, hi = 1, most
    if total(most) <= budget:
        lo = most
    else:
        while lo < hi:  # the largest k with total(k) <= budget (1 at least)
            mid = (lo + hi + 1) // 2
            if total(mid) <= budget:
                lo = mid
            else:
                hi = mid - 1
    out = []
    for p in parts:
        items = [i for i in p.items if i.rank < lo]
        refs = set().union(*(_refs(i.blocks) for i in items)) if items else set()
        out.append(ViewPart(p.family, p.title, p.unit, p.filters, p.strata, items,
                            {k: v for k, v in p.shared.items() if k in refs}, p.good, p.note))
    return out


# --- the page -----------------------------------------------------------------------------------

def _item_json(item: ViewItem) -> list[Any]:
    return [list(item.key), item.title, item.blocks]


def _script_json(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: nothing in it can close the
    block or start markup."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


script_json = _script_json  # the public name (replays embed their data the same way)


_CSS = """
*{box-sizing:border-box}
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#222;
 line-height:1.4;font-size:14px;background:#f6f6f4}
header{background:#fff;border-bottom:1px solid #ccc;padding:.6em 1.2em}
header h1{font-size:18px;margin:0 0 .2em}
header p{margin:0;color:#555;font-size:12px}
nav{display:flex;gap:.3em;padding:.5em 1.2em 0;background:#fff;border-bottom:1px solid #ccc}
nav button{border:1px solid #ccc;border-bottom:none;background:#eee;padding:.35em .9em;
 cursor:pointer;font-size:13px;border-radius:4px 4px 0 0}
nav button.on{background:#f6f6f4;font-weight:600}
main{padding:.8em 1.2em;max-width:1250px}
.filters{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:end;margin-bottom:.6em}
.filters label{display:flex;flex-direction:column;font-size:12px;color:#555}
.filters select,.filters input{font-size:13px;padding:2px 4px;min-width:10em;max-width:26em}
.summary{font-size:13px;color:#333;margin:.3em 0 .6em}
.note{font-size:12px;color:#666}
.pager button{font-size:13px;margin-right:.4em}
.card{background:#fff;border:1px solid #ccc;border-left:5px solid #8a8;border-radius:3px;
 margin:.7em 0;padding:.5em .8em}
.card.bad{border-left-color:#c44}
.card h3{font-size:14px;margin:0 0 .4em;font-family:ui-monospace,Menlo,Consolas,monospace;
 font-weight:600;word-break:break-all}
.badge{display:inline-block;font-size:11px;padding:0 .5em;border-radius:8px;background:#dde8dd;
 margin-left:.5em;font-family:sans-serif}
.bad .badge,.badge.bad{background:#f3d3d3}
table{border-collapse:collapse;margin:.3em 0 .5em;font-size:12.5px}
td,th{border:1px solid #ddd;padding:2px 7px;vertical-align:top;text-align:left}
th{background:#f0f0f0;font-weight:600}
table.grid td{white-space:pre-line}
td.mark,tr.mark td{background:#fff3c4}
table.kv td:first-child{color:#555;white-space:nowrap}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;border:1px solid #e2e2e2;
 padding:.4em .6em;margin:.2em 0 .5em;font-size:12.5px;max-height:28em;overflow:auto}
pre.raw{background:#fffbea;border-color:#e8dca8}
details summary{cursor:pointer;font-size:12.5px;color:#444;margin:.2em 0}
.lbl{font-size:12px;color:#555;margin-top:.3em}
.msg{border:1px solid #e2e2e2;border-radius:4px;margin:.35em 0;padding:.3em .6em;background:#fbfbfb}
.msg.b{margin-left:3em;background:#f4f7fb}
.msg.bad{border-color:#d99}
.msg .who{font-weight:600;font-size:12.5px}
.msg .meta{font-size:11.5px;color:#666;margin-left:.6em}
h4{margin:.7em 0 .2em;font-size:13px;border-bottom:1px solid #eee}
.row{display:flex;flex-wrap:wrap;gap:0 1.5em;align-items:flex-start}
"""

_JS = r"""
(function(){
"use strict";
var PAGE=%(page)d;
var index=JSON.parse(document.getElementById("vd-index").textContent);
var cache={};
function data(i){if(!cache[i]){cache[i]=JSON.parse(document.getElementById("vd-"+i).textContent);}return cache[i];}
function el(tag,cls,text){var e=document.createElement(tag);if(cls){e.className=cls;}
 if(text!==undefined&&text!==null){e.textContent=String(text);}return e;}
function readHash(){var s={};var h=location.hash.replace(/^#/,"");if(!h){return s;}
 h.split("&").forEach(function(kv){if(!kv){return;}var i=kv.indexOf("=");
  var k=decodeURIComponent(i<0?kv:kv.slice(0,i));var v=i<0?"":decodeURIComponent(kv.slice(i+1).replace(/\+/g," "));s[k]=v;});
 return s;}
function writeHash(s){var out=[];Object.keys(s).forEach(function(k){if(s[k]!==""&&s[k]!==undefined){
 out.push(encodeURIComponent(k)+"="+encodeURIComponent(s[k]));}});
 var h="#"+out.join("&");if(location.hash!==h){history.replaceState(null,"",h);}}
var state=readHash();
function partIndex(){for(var i=0;i<index.length;i++){if(index[i].family===state.family){return i;}}return 0;}
function matches(key,filters,skip){for(var j=0;j<filters.length;j++){if(j===skip){continue;}
 var v=state[filters[j][0]];if(v!==undefined&&v!==""&&key[j]!==v){return false;}}return true;}
function itemText(it){if(it._text===undefined){it._text=(it[1]+" "+JSON.stringify(it[2])).toLowerCase();}return it._text;}
function block(b,shared){var box=document.createDocumentFragment();
 if(b.t==="kv"){var t=el("table","kv");b.rows.forEach(function(r){var tr=el("tr");
   tr.appendChild(el("td",null,r[0]));var td=el("td",null,r[1]===null?"n/a":r[1]);tr.appendChild(td);t.appendChild(tr);});
  box.appendChild(t);}
 else if(b.t==="text"){var txt=b.ref!==undefined?shared[b.ref]:b.text;var pre=el("pre",b.cls||null,txt===null||txt===undefined?"(none)":txt);
  if(b.open===false){var d=el("details");d.appendChild(el("summary",null,b.label));d.appendChild(pre);box.appendChild(d);}
  else{box.appendChild(el("div","lbl",b.label));box.appendChild(pre);}}
 else if(b.t==="grid"){if(b.label){box.appendChild(el("div","lbl",b.label));}var g=el("table","grid");
  if(b.head){var hr=el("tr");b.head.forEach(function(h){hr.appendChild(el("th",null,h));});g.appendChild(hr);}
  var marks=b.mark||[];b.rows.forEach(function(r,ri){var tr=el("tr",marks.indexOf(ri)>=0?"mark":null);
   r.forEach(function(c,ci){tr.appendChild(el(ci===0&&b.head?"th":"td",null,c===null?"n/a":c));});g.appendChild(tr);});
  box.appendChild(g);}
 else if(b.t==="msg"){var m=el("div","msg"+(b.side==="b"?" b":"")+(b.bad?" bad":""));var w=el("div");
  w.appendChild(el("span","who",b.who));w.appendChild(el("span","meta",b.meta));m.appendChild(w);
  m.appendChild(el("pre","raw",b.text===null||b.text===undefined?"(no text)":b.text));
  if(b.extra){m.appendChild(el("div","note",b.extra));}box.appendChild(m);}
 else if(b.t==="h"){box.appendChild(el("h4",null,b.text));}
 else if(b.t==="row"){var rw=el("div","row");b.blocks.forEach(function(x){var cell=el("div");cell.appendChild(block(x,shared));rw.appendChild(cell);});box.appendChild(rw);}
 return box;}
function card(it,part,shared){var key=it[0];var status=key[part.status];
 var bad=part.status>=0&&part.good.indexOf(status)<0;
 var c=el("section","card"+(bad?" bad":""));c.setAttribute("data-status",status===undefined?"":status);
 var h=el("h3",null,it[1]);if(part.status>=0){h.appendChild(el("span","badge",status));}c.appendChild(h);
 it[2].forEach(function(b){c.appendChild(block(b,shared));});return c;}
function render(){var t0=performance.now();var pi=partIndex();var part=index[pi];state.family=part.family;
 var nav=document.getElementById("tabs");nav.textContent="";
 index.forEach(function(p,i){var b=el("button",i===pi?"on":null,p.title);b.onclick=function(){
   state={family:p.family};writeHash(state);render();};nav.appendChild(b);});
 var main=document.getElementById("main");main.textContent="";
 main.appendChild(el("h2",null,part.title));if(part.note){main.appendChild(el("p","note",part.note));}
 var f=el("div","filters");
 part.filters.forEach(function(flt,j){var lab=el("label",null,flt[1]);var sel=el("select");sel.name=flt[0];
  var counts={};var all=0;part.strata.forEach(function(s){if(matches(s[0],part.filters,j)){counts[s[0][j]]=(counts[s[0][j]]||0)+s[1];all+=s[1];}});
  var o=el("option",null,"all ("+all.toLocaleString("en")+")");o.value="";sel.appendChild(o);
  part.values[j].forEach(function(v){var op=el("option",null,v+" ("+(counts[v]||0).toLocaleString("en")+")");op.value=v;sel.appendChild(op);});
  sel.value=state[flt[0]]||"";if(sel.value!==(state[flt[0]]||"")){var miss=el("option",null,state[flt[0]]+" (0)");miss.value=state[flt[0]];sel.appendChild(miss);sel.value=state[flt[0]];}
  sel.onchange=function(){state[flt[0]]=sel.value;state.page="";writeHash(state);render();};
  lab.appendChild(sel);f.appendChild(lab);});
 var ql=el("label",null,"search the sampled text");var q=el("input");q.type="search";q.value=state.q||"";
 q.onchange=function(){state.q=q.value;state.page="";writeHash(state);render();};ql.appendChild(q);f.appendChild(ql);
 main.appendChild(f);
 var d=data(pi);var query=(state.q||"").toLowerCase();
 var hits=d.items.filter(function(it){return matches(it[0],part.filters,-1)&&(!query||itemText(it).indexOf(query)>=0);});
 var inRun=0;part.strata.forEach(function(s){if(matches(s[0],part.filters,-1)){inRun+=s[1];}});
 var pages=Math.max(1,Math.ceil(hits.length/PAGE));var page=Math.min(Math.max(parseInt(state.page||"1",10)||1,1),pages);
 var sum=el("div","summary",hits.length.toLocaleString("en")+" sampled "+part.unit+" shown of "+inRun.toLocaleString("en")+
  " in the run that match the filters"+(query?" (search applies to the sample)":"")+"; page "+page+" of "+pages+".");
 sum.id="summary";main.appendChild(sum);
 var pg=el("div","pager");function btn(label,to){var b=el("button",null,label);b.disabled=to<1||to>pages||to===page;
  b.onclick=function(){state.page=String(to);writeHash(state);render();window.scrollTo(0,0);};pg.appendChild(b);}
 btn("« first",1);btn("‹ previous",page-1);btn("next ›",page+1);btn("last »",pages);main.appendChild(pg);
 var list=el("div");list.id="items";hits.slice((page-1)*PAGE,page*PAGE).forEach(function(it){list.appendChild(card(it,part,d.shared));});
 main.appendChild(list);writeHash(state);
 document.body.setAttribute("data-render-ms",String(Math.round(performance.now()-t0)));
 document.body.setAttribute("data-ready-ms",String(Math.round(performance.now())));}
window.addEventListener("hashchange",function(){state=readHash();render();});
render();
})();
"""


def _index_entry(part: ViewPart) -> dict[str, Any]:
    keys = [k for k, _ in part.filters]
    values = [sorted({s[0][j] for s in part.strata}) for j in range(len(keys))]
    return {"family": part.family, "title": part.title, "unit": part.unit,
            "filters": [list(f) for f in part.filters], "values": values,
            "strata": [[list(k), n] for k, n in part.strata], "good": list(part.good),
            "status": keys.index("status") if "status" in keys else -1,
            "note": part.note, "sampled": len(part.items)}


def render_view(parts: list[ViewPart], *, title: str, intro: str = "") -> str:
    """The page: frame, index of the parts, one JSON block of items per part, the script."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
           f"<header><h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p></header>",
           '<nav id="tabs"></nav><main id="main">',
           "<noscript>This page needs JavaScript to show the samples.</noscript></main>",
           f'<script type="application/json" id="vd-index">{_script_json([_index_entry(p) for p in parts])}</script>']
    for i, p in enumerate(parts):
        payload = {"items": [_item_json(it) for it in p.items], "shared": p.shared}
        out.append(f'<script type="application/json" id="vd-{i}">{_script_json(payload)}</script>')
    if not parts:
        out.append('<script type="application/json" id="vd-0">{"items":[],"shared":{}}</script>')
    out.append(f"<script>{_JS % {'page': PAGE_SIZE}}</script></body></html>")
    return "\n".join(out) + "\n"


def _empty_part() -> ViewPart:
    return ViewPart("none", "no rows", "rows", (), [], [], note="the run has no rows yet")


def build_view(run_dir: Path | str, out: Path | str, sources: Sequence[ViewSource],
               options: ViewOptions | None = None) -> ViewResult:
    """Writes the viewer page of a run (temp file + rename).

    Args:
        run_dir: The run folder.
        out: The HTML file to write.
        sources: One per family that may be in the run; those whose main table has rows get
            a part.
        options: Sample size, seed, clipping and budget.
    """
    from distbench.store.catalog import check_run_dir, open_run

    start = time.perf_counter()
    run = check_run_dir(run_dir)
    options = options or ViewOptions()
    if not options.manifest and (run / "manifest.json").exists():
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        options = ViewOptions(options.sample, options.seed, options.max_chars,
                              options.budget_bytes, manifest)
    con = open_run(run, safe=True)
    parts: list[ViewPart] = []
    for src in sources:
        if not con.execute(f"SELECT EXISTS (SELECT 1 FROM {src.table})").fetchone()[0]:
            continue
        part = src.make(con, options) if src.make else generic_part(con, src.family, src.table,
                                                                  options)
        parts.append(part)
        log.debug("view part %s: %d strata, %d items", part.family, len(part.strata),
                  len(part.items))
    con.close()
    parts = fit_budget(parts, options.budget_bytes) or [_empty_part()]
    manifest = options.manifest
    command = manifest.get("command") or ""
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    command = "" if str(command).strip() in ("", "-") else command
    intro = " · ".join(x for x in (
        f"run {manifest.get('run_id', run.name)}", str(command),
        f"sample: up to {options.sample} per stratum, seed {options.seed}; the counts in the "
        "menus are over every row of the run") if x)
    page = render_view(parts, title=f"distbench view: {manifest.get('run_id', run.name)}",
                       intro=intro)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, out)
    return ViewResult(out, out.stat().st_size, {p.family: len(p.items) for p in parts},
                      {p.family: len(p.strata) for p in parts}, time.perf_counter() - start)
