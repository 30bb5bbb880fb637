"""Plots of the report (matplotlib, no pyplot state): each function returns PNG bytes.

Every plot has a title, labelled axes with units and the sample sizes (n=...) of what it shows.
matplotlib is the optional ``report`` extra; importing this module without it raises an
ImportError that names the extra.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

try:
    from matplotlib.figure import Figure
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "distbench report needs matplotlib: pip install 'distbench[report]'"
    ) from exc

_DPI = 100


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight")
    return buf.getvalue()


def _new(width: float, height: float, title: str) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    fig.suptitle(title, fontsize=12, fontweight="bold")
    return fig


def box_panels(
    panels: Sequence[tuple[str, Sequence[str], Sequence[np.ndarray]]],
    *,
    title: str,
    ylabel: str,
) -> bytes:
    """Box plots, one panel per (panel title, box labels, box values); n=... under each box."""
    ncols = min(2, len(panels))
    nrows = -(-len(panels) // ncols)
    width = max(6.0, max(len(p[1]) for p in panels) * 1.1) * ncols
    fig = _new(min(width, 16.0), 3.6 * nrows + 0.6, title)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, (name, labels, data) in zip(axes, panels, strict=False):
        ax.boxplot([np.asarray(d, dtype=float) for d in data], showmeans=True)
        ax.set_xticks(range(1, len(labels) + 1),
                      [f"{lab}\nn={len(d)}" for lab, d in zip(labels, data, strict=True)],
                      fontsize=7)
        ax.set_title(name, fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    return _png(fig)


def bars(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    ylabel: str,
    ns: Sequence[int],
    errors: Sequence[tuple[float, float]] | None = None,
    ylim: tuple[float, float] | None = None,
) -> bytes:
    """One bar per label with n=... on it; ``errors`` are (low, high) interval ends."""
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
    return _png(fig)


def grouped_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    title: str,
    ylabel: str,
    ns: Sequence[int],
    stacked: bool = False,
) -> bytes:
    """Bars per category, one colour per series (side by side, or stacked shares)."""
    fig = _new(max(6.0, 1.0 * len(categories) * (1 if stacked else len(series) * 0.6) + 2),
               4.4, title)
    ax = fig.subplots()
    x = np.arange(len(categories))
    width = 0.7 if stacked else 0.8 / max(1, len(series))
    bottom = np.zeros(len(categories))
    for i, (name, vals) in enumerate(series.items()):
        v = np.nan_to_num(np.array([np.nan if a is None else a for a in vals], dtype=float))
        if stacked:
            ax.bar(x, v, width, bottom=bottom, label=name)
            bottom += v
        else:
            ax.bar(x - 0.4 + width * (i + 0.5), v, width, label=name)
    ax.set_xticks(x, [f"{c}\nn={n}" for c, n in zip(categories, ns, strict=True)],
                  rotation=0 if len(categories) < 5 else 20, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def interval_lines(
    xs: Sequence[str],
    series: dict[str, tuple[Sequence[float | None], Sequence[tuple[float, float] | None],
                            Sequence[int]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> bytes:
    """Means with interval error bars across ordered categories, one line per series."""
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
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _png(fig)


def scatter_identity(
    groups: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> bytes:
    """Scatter of (x, y) points per group against the diagonal y = x, on [0, 1]^2."""
    fig = _new(6.0, 5.6, title)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="y = x")
    for name, (x, y) in groups.items():
        ax.scatter(x, y, s=14, alpha=0.7, label=f"{name} (n={len(x)})")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _png(fig)


def reliability(
    agents: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    title: str,
) -> bytes:
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
    return _png(fig)


def forest(
    rows: Sequence[tuple[str, float, float, float, int, bool]],
    *,
    title: str,
    xlabel: str,
) -> bytes:
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
    return _png(fig)
