"""Plots of the report (matplotlib, no pyplot state): each function returns a
:class:`Drawing` (SVG for the HTML page, PDF for papers, PNG for the Markdown twin), or None
when there is nothing to draw (every value empty), so no panel is drawn for empty data.

Every plot has a title, labelled axes with units and the sample sizes (n=...) of what it shows.
Series named after an outcome keep one colour everywhere (:data:`SEMANTIC`: a loss is never
green).
matplotlib is the optional ``report`` extra; importing this module without it raises an
ImportError that names the extra.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    import matplotlib
    from matplotlib.figure import Figure
except ImportError as exc:  # pragma: no cover - depends on the environment
    from distbench.errors import install_hint

    raise ImportError(
        f"distbench report needs matplotlib, which is not installed: {install_hint('report')}"
    ) from exc

_DPI = 100

SEMANTIC: dict[str, str] = {
    "success": "#2e7d32", "win": "#2e7d32", "wins": "#2e7d32", "ok": "#2e7d32",
    "lose": "#c62828", "loss": "#c62828", "losses": "#c62828", "failed": "#c62828",
    "aborted": "#9e9e9e", "draw": "#f9a825", "draws": "#f9a825",
}
"""Colours of outcome series, the same in every figure."""
_CYCLE = ["#4878a8", "#e1812c", "#3a923a", "#c03d3e", "#9372b2", "#845b53", "#d684bd"]


@dataclass(frozen=True)
class Drawing:
    """One figure in three formats: ``svg`` (inline in the HTML), ``pdf``, ``png``."""

    svg: str
    pdf: bytes
    png: bytes


def _render(fig: Figure) -> Drawing:
    """The figure as SVG (ids salted by its title, so several inline SVGs never clash and
    the same figure gives the same bytes), PDF and PNG."""
    salt = hashlib.blake2b(fig.get_suptitle().encode(), digest_size=6).hexdigest()
    out = {}
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path",
                                "pdf.fonttype": 42}):
        for fmt in ("svg", "pdf", "png"):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, dpi=_DPI, bbox_inches="tight",
                        metadata={"Date": None} if fmt in ("svg", "pdf") else None)
            out[fmt] = buf.getvalue()
    svg = out["svg"].decode("utf-8")
    svg = svg[svg.index("<svg"):]  # no XML prolog or DOCTYPE inside an HTML page
    svg = re.sub(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"', r'\1', svg, count=1)
    return Drawing(svg=svg, pdf=out["pdf"], png=out["png"])


def _colour(name: str, i: int) -> str:
    return SEMANTIC.get(name.lower().split()[0] if name else "", _CYCLE[i % len(_CYCLE)])


def _empty(*series: Sequence[float | None]) -> bool:
    """No finite value at all: nothing to draw."""
    for values in series:
        for v in values:
            if v is not None and np.isfinite(float(v)):
                return False
    return True


def _labelled(fig: Figure, ax: Any, xlabel: str, ylabel: str, legend: str | None = None
              ) -> Drawing:
    """``fig`` rendered with its axes labelled, a small legend (at ``legend``, else where it
    fits best) and a light grid."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend is None:
        ax.legend(fontsize=8)
    else:
        ax.legend(fontsize=8, loc=legend)
    ax.grid(alpha=0.3)
    return _render(fig)


def _new(width: float, height: float, title: str) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig


def box_panels(
    panels: Sequence[tuple[str, Sequence[str], Sequence[np.ndarray]]],
    *,
    title: str,
    ylabel: str,
) -> Drawing | None:
    """Box plots, one panel per (panel title, box labels, box values); n=... under each box."""
    if not panels or all(_empty(*[np.asarray(d, dtype=float) for d in p[2]]) for p in panels):
        return None
    ncols = min(2, len(panels))
    nrows = -(-len(panels) // ncols)
    width = max(6.0, max(len(p[1]) for p in panels) * 1.1) * ncols
    fig = _new(min(width, 16.0), 3.6 * nrows + 0.6, title)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (name, labels, data) in zip(axes, panels, strict=False):
        arrays = [np.asarray(d, dtype=float) for d in data]
        ax.set_title(name, fontsize=10)
        if all(a.size == 0 or not np.any(a[np.isfinite(a)]) for a in arrays):
            ax.text(0.5, 0.5, "every value is 0 (degenerate):\nnothing to compare here",
                    ha="center", va="center", transform=ax.transAxes, fontsize=9, color="#555")
            ax.set_xticks([])
            continue
        ax.boxplot(arrays, showmeans=True)
        ax.set_xticks(range(1, len(labels) + 1),
                      [f"{lab}\nn={len(d)}" for lab, d in zip(labels, data, strict=True)],
                      fontsize=7, rotation=25 if len(labels) > 3 else 0, ha="right"
                      if len(labels) > 3 else "center")
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    return _render(fig)


def bars(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    ylabel: str,
    ns: Sequence[int],
    errors: Sequence[tuple[float, float]] | None = None,
    ylim: tuple[float, float] | None = None,
) -> Drawing | None:
    """One bar per label with n=... on it; ``errors`` are (low, high) interval ends."""
    if _empty(values):
        return None
    fig = _new(max(6.0, 0.9 * len(labels) + 2), 4.2, title)
    ax = fig.subplots()
    x = np.arange(len(labels))
    vals = np.array([np.nan if v is None else v for v in values], dtype=float)
    yerr = None
    if errors is not None:
        lo = np.array([np.nan if e is None else e[0] for e in errors], dtype=float)
        hi = np.array([np.nan if e is None else e[1] for e in errors], dtype=float)
        yerr = np.vstack([np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)])
    ax.bar(x, np.nan_to_num(vals), yerr=yerr, capsize=4, color="#4878a8")
    for xi, v, n in zip(x, vals, ns, strict=True):
        ax.annotate(f"n={n}", (xi, 0 if np.isnan(v) else v), ha="center", va="bottom",
                    fontsize=7, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(x, labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.grid(axis="y", alpha=0.3)
    return _render(fig)


def record_bars(records: Sequence[Mapping[str, Any]], labels: Sequence[str], column: str, *,
                n: str, title: str, ylabel: str, ylim: tuple[float, float] | None = None
                ) -> Drawing | None:
    """:func:`bars` of dict rows: each row's ``column`` with its 95% interval (``<column>_lo``,
    ``<column>_hi``) and its count ``n``."""
    return bars(labels, [r[column] for r in records], title=title, ylabel=ylabel,
                ns=[r[n] for r in records],
                errors=[(r[f"{column}_lo"], r[f"{column}_hi"]) for r in records], ylim=ylim)


def record_series(records: Sequence[Mapping[str, Any]], columns: Mapping[str, str]
                  ) -> dict[str, list[Any]]:
    """:func:`grouped_bars`' series from dict rows: each label's values, read from its column."""
    return {label: [r[column] for r in records] for label, column in columns.items()}


def grouped_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    title: str,
    ylabel: str,
    ns: Sequence[int],
    stacked: bool = False,
) -> Drawing | None:
    """Bars per category, one colour per series (side by side, or stacked shares); series
    named after an outcome get its :data:`SEMANTIC` colour."""
    if _empty(*series.values()):
        return None
    fig = _new(max(6.0, 1.0 * len(categories) * (1 if stacked else len(series) * 0.6) + 2),
               4.4, title)
    ax = fig.subplots()
    x = np.arange(len(categories))
    width = 0.7 if stacked else 0.8 / max(1, len(series))
    bottom = np.zeros(len(categories))
    for i, (name, vals) in enumerate(series.items()):
        v = np.nan_to_num(np.array([np.nan if a is None else a for a in vals], dtype=float))
        if stacked:
            ax.bar(x, v, width, bottom=bottom, label=name, color=_colour(name, i))
            bottom += v
        else:
            ax.bar(x - 0.4 + width * (i + 0.5), v, width, label=name, color=_colour(name, i))
    ax.set_xticks(x, [f"{c}\nn={n}" for c, n in zip(categories, ns, strict=True)],
                  rotation=0 if len(categories) < 5 else 20, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="y", alpha=0.3)
    return _render(fig)


def interval_lines(
    xs: Sequence[str],
    series: dict[str, tuple[Sequence[float | None], Sequence[tuple[float, float] | None],
                            Sequence[int]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> Drawing | None:
    """Means with interval error bars across ordered categories, one line per series."""
    if _empty(*(means for means, _, _ in series.values())):
        return None
    fig = _new(7.5, 4.4, title)
    ax = fig.subplots()
    x = np.arange(len(xs))
    for i, (name, (means, cis, ns)) in enumerate(series.items()):
        m = np.array([np.nan if v is None else v for v in means], dtype=float)
        lo = np.array([np.nan if c is None else c[0] for c in cis], dtype=float)
        hi = np.array([np.nan if c is None else c[1] for c in cis], dtype=float)
        off = (i - (len(series) - 1) / 2) * 0.06
        ax.errorbar(x + off, m, yerr=np.vstack([m - lo, hi - m]), marker="o", capsize=4,
                    label=name)
        for xi, v, n in zip(x + off, m, ns, strict=True):
            if not np.isnan(v):
                ax.annotate(f"n={n}", (xi, v), fontsize=7, xytext=(4, 4),
                            textcoords="offset points")
    ax.set_xticks(x, xs)
    return _labelled(fig, ax, xlabel, ylabel)


def scatter_identity(
    groups: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> Drawing | None:
    """Scatter of (x, y) points per group against the diagonal y = x, on [0, 1]^2."""
    if all(len(x) == 0 for x, _ in groups.values()):
        return None
    fig = _new(6.0, 5.6, title)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="y = x")
    for name, (x, y) in groups.items():
        ax.scatter(x, y, s=14, alpha=0.7, label=f"{name} (n={len(x)})")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    return _labelled(fig, ax, xlabel, ylabel)


def reliability(
    agents: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    title: str,
) -> Drawing | None:
    """Reliability diagrams, one panel per agent: (mean forecast, observed frequency, counts)
    per probability bin, marker area by count, against perfect calibration."""
    names = list(agents)
    ncols = min(3, len(names))
    nrows = -(-len(names) // ncols)
    fig = _new(4.2 * ncols, 4.2 * nrows + 0.5, title)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, name in zip(axes, names, strict=False):
        mean_p, freq, counts = agents[name]
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1,
                label="perfectly calibrated")
        sizes = 20 + 180 * counts / max(1, counts.max())
        ax.plot(mean_p, freq, color="#4878a8", linewidth=1)
        ax.scatter(mean_p, freq, s=sizes, color="#4878a8", zorder=3, label="bins (area ~ n)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{name} (n={int(counts.sum())} forecasts)", fontsize=10)
        ax.set_xlabel("forecast probability of the power")
        ax.set_ylabel("observed frequency")
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(alpha=0.3)
    for ax in axes[len(names):]:
        ax.set_visible(False)
    return _render(fig)


def forest(
    rows: Sequence[tuple[str, float, float, float, int, bool]],
    *,
    title: str,
    xlabel: str,
) -> Drawing | None:
    """Paired differences with their intervals, one line each: (label, diff, low, high, n,
    significant); significant ones in red, a vertical line at 0."""
    fig = _new(8.0, 0.45 * len(rows) + 1.6, title)
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    for yi, (_label, diff, lo, hi, _n, sig) in zip(y, rows, strict=True):
        color = "#c03030" if sig else "#4878a8"
        ax.errorbar([diff], [yi], xerr=[[diff - lo], [hi - diff]], fmt="o", color=color,
                    capsize=4)
    ax.axvline(0, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(y, [f"{r[0]} (n={r[4]})" for r in rows], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    return _render(fig)


def dot_intervals(
    rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]],
    *,
    title: str,
    xlabel: str,
) -> Drawing | None:
    """A dot plot with intervals: one line per group (the first field), one marker per
    series (the second: e.g. the model), at (value, low, high), with its n."""
    rows = [r for r in rows if r[2] is not None and np.isfinite(float(r[2]))]
    if not rows:
        return None
    groups = list(dict.fromkeys(r[0] for r in rows))
    series = list(dict.fromkeys(r[1] for r in rows))
    fig = _new(8.0, 0.5 * len(groups) * max(1, len(series)) ** 0.5 + 1.8, title)
    ax = fig.subplots()
    y_of = {g: len(groups) - 1 - i for i, g in enumerate(groups)}
    step = 0.6 / max(1, len(series))
    for k, name in enumerate(series):
        pts = [r for r in rows if r[1] == name]
        ys = np.array([y_of[r[0]] + 0.3 - step * (k + 0.5) for r in pts])
        xs = np.array([float(r[2]) for r in pts])
        lo = np.array([float(r[3]) if r[3] is not None else x for r, x in zip(pts, xs, strict=True)])
        hi = np.array([float(r[4]) if r[4] is not None else x for r, x in zip(pts, xs, strict=True)])
        ax.errorbar(xs, ys, xerr=np.vstack([np.clip(xs - lo, 0, None), np.clip(hi - xs, 0, None)]),
                    fmt="o", capsize=3, color=_CYCLE[k % len(_CYCLE)],
                    label=f"{name} (n={sum(r[5] for r in pts)})")
    ax.set_yticks(range(len(groups)), groups[::-1], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return _render(fig)


def pareto_positions(
    points: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
) -> Drawing | None:
    """Where deals land: per series, each deal's share of the best score each seat could get
    (x: seat a, y: seat b); the top right corner is the joint best, points on a frontier
    marked by the series."""
    if all(len(x) == 0 for x, _ in points.values()):
        return None
    fig = _new(6.0, 5.6, title)
    ax = fig.subplots()
    for i, (name, (x, y)) in enumerate(points.items()):
        ax.scatter(x, y, s=18, alpha=0.6, color=_colour(name, i), label=f"{name} (n={len(x)})")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    return _labelled(fig, ax, "seat a's score / its best possible score",
                     "seat b's score / its best possible score", legend="lower left")


def heatmap(
    labels: Sequence[str],
    values: np.ndarray,
    *,
    title: str,
    colorbar: str,
    counts: np.ndarray | None = None,
) -> Drawing | None:
    """A square matrix ``values[i, j]`` (row player against column player) as a diverging
    heat map centred on 0, each cell annotated with its value (and n= from ``counts``); NaN
    cells (pairs that did not meet) are left blank."""
    vals = np.asarray(values, dtype=float)
    if vals.size == 0 or np.all(np.isnan(vals)):
        return None
    k = len(labels)
    fig = _new(max(5.0, 0.9 * k + 2.5), max(4.0, 0.8 * k + 1.8), title)
    ax = fig.subplots()
    span = float(np.nanmax(np.abs(vals))) or 1.0
    image = ax.imshow(np.ma.masked_invalid(vals), cmap="RdBu", vmin=-span, vmax=span)
    for i in range(k):
        for j in range(k):
            if np.isnan(vals[i, j]):
                continue
            text = f"{vals[i, j]:+.2f}"
            if counts is not None and i != j:
                text += f"\nn={int(counts[i, j])}"
            # white on the dark ends of the colour map, black on its light middle
            dark = abs(vals[i, j]) > 0.55 * span
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    ax.set_xticks(range(k), labels, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(k), labels, fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player")
    fig.colorbar(image, ax=ax, label=colorbar)
    return _render(fig)
