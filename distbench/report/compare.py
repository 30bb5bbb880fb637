"""Comparisons across runs: a leaderboard and paired bootstrap comparisons over shared instances,
on the headline first.

Separate runs of different models are comparable wherever they played the same instances:
games are generated from their seeds alone, so two runs over the same seeds meet the same
games. Each family's results are cut into **units** (one instance a player played) within
**groups** (the conditions under which units are comparable), as the family declares them
(its ``Comparing.units`` hook, a :class:`FamilyUnits`, in ``games/<family>/compare.py``): the
caller hands the families to compare (``distbench.games.registry.compare_units``), so a
plugin family is compared as a built-in one.

**Metrics**, the headline first (:mod:`distbench.report.headline`): ``quality`` (per unit, the
mean quality of its answered trials, an invalid answer 0: subset "all trials"), then its
components ``valid_rate`` (all trials) and ``quality_of_valid`` (subset "valid only": a unit
counts for a player when it has a valid answer there, and a paired row uses the units valid in
both runs), then the family's own (e.g. exploitability, regret, a raw score). Calls that failed at the server are never counted: a trial, episode or
game whose call failed is left out of every metric.

The opponent is part of the group because a score against one opponent says nothing about a
score against another; self-play is the opponent ``self``. A player is ``(run_id,
provider:model)`` (or a scripted agent), so the same model in two runs is two players.

The **leaderboard** is ranked by the headline: per group, each player's headline over all of
its own units with a percentile bootstrap 95% CI over units
(:func:`distbench.report.bootstrap.bootstrap_mean_ci`), ranked so that players whose
intervals overlap share a rank (:func:`distbench.report.stats.overlap_ranks`); the components
follow in the same order of players. The **paired comparisons** take, for two players and a
metric, the units they share in a group: per-unit differences, a seeded paired bootstrap
(:func:`distbench.report.headline.paired_difference`, the same interval as the report's
:func:`distbench.report.stats.pairwise_differences`) and its two-sided p-value; the p-values
of the metrics tested for one pair in one group are corrected together (Holm,
:func:`distbench.report.headline.holm`), and the verdict reads the corrected p at 5%. A row on
fewer than :data:`~distbench.report.headline.MIN_SHARED_UNITS` shared units carries a
warning. The shared-instance table counts, for every two players of different runs (and two
players of one run that share units), the units they share over all groups: 0 says the runs
cannot be compared.

Non-finite values (NaN, inf) are left out of the means, as failed calls are.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import duckdb
import numpy as np

from distbench.errors import UserError
from distbench.report.bootstrap import BOOTSTRAP_SEED, bootstrap_mean_ci
from distbench.report.headline import MIN_SHARED_UNITS, holm, paired_difference
from distbench.report.stats import overlap_ranks
from distbench.store.catalog import cursor_records

ALL_TRIALS = "all trials"
VALID_ONLY = "valid only in both runs"
ALPHA = 0.05
"""Family-wise error rate of the verdicts (Holm-corrected p below it)."""


@dataclass(frozen=True, slots=True)
class Metric:
    """A compared quantity: its column stem (``<name>_sum``, ``<name>_n`` in the unit SQL),
    which way is better, and the answers it is computed over (``ALL_TRIALS``: every answered
    trial, an invalid answer counting; ``VALID_ONLY``: valid answers only)."""

    name: str
    better: str  # "lower" or "higher"
    subset: str = ALL_TRIALS


@dataclass(frozen=True, slots=True)
class FamilyUnits:
    """How one family's results are cut into comparison units.

    Attributes:
        family: Family name.
        table: The table that must hold rows for the family to be compared.
        unit: What a unit is, plural ("games", "instances").
        sql: One row per (run_id, player, grp, unit) with ``<metric>_sum`` and ``<metric>_n``
            for every metric (the unit's value is sum / n; n = 0 leaves the unit out).
        metrics: The metrics, the headline (``quality``) first.
        differs: What two runs that share no unit differ in (for the sentence saying so).
        needs: The tables the SQL reads (views are made of these).
    """

    family: str
    table: str
    unit: str
    sql: str
    metrics: tuple[Metric, ...]
    differs: str
    needs: tuple[str, ...] = ()


HEADLINE = (Metric("quality", "higher"), Metric("valid_rate", "higher"),
            Metric("quality_of_valid", "higher", VALID_ONLY))
"""The headline and its components, first in every family."""


HEADLINE_AND_REGRET = (*HEADLINE, Metric("regret", "lower", VALID_ONLY))
"""The metrics whose sums :func:`headline_sums` writes: the headline and regret."""


def unit_sql(source: str, *, player: str, grp: str, unit: str, sums: str, before: str = "") -> str:
    """A family's unit SQL (:attr:`FamilyUnits.sql`): one row per run, player, group and unit
    of ``source`` (a table, or a name ``before`` defines in a ``WITH`` clause), with the
    ``<metric>_sum``/``<metric>_n`` select items ``sums`` (from :func:`headline_sums` or
    :func:`answered_sums`, then the family's own). ``player``, ``grp`` and ``unit`` are SQL
    expressions."""
    return f"""{before}
SELECT
    run_id,
    {player} AS player,
    {grp} AS grp,
    {unit} AS unit,
{sums}
FROM {source}
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""


def select_items(*items: tuple[str, str]) -> str:
    """``(expression, name)`` pairs as the lines of a SELECT list (``expression AS name``)."""
    return ",\n".join(f"    {expr} AS {name}" for expr, name in items)


def headline_sums(quality: str, valid: str, regret: str, *, regret_of_valid: bool = False) -> str:
    """The unit SQL's select items of :data:`HEADLINE` and a ``regret`` metric, for a family
    whose rows carry a quality, a validity condition and a regret (SQL expressions): quality
    over its finite values, the valid rate over the rows with a quality, the quality of the
    valid rows, and the finite regrets (of the valid rows only, with ``regret_of_valid``)."""
    good = f"({valid}) AND isfinite({quality})"
    bad_regret = f"({valid}) AND isfinite({regret})" if regret_of_valid else f"isfinite({regret})"
    return select_items(
        (f"sum({quality}) FILTER (WHERE isfinite({quality}))", "quality_sum"),
        (f"count({quality}) FILTER (WHERE isfinite({quality}))", "quality_n"),
        (f"CAST(count(*) FILTER (WHERE {valid}) AS DOUBLE)", "valid_rate_sum"),
        (f"count({quality})", "valid_rate_n"),
        (f"sum({quality}) FILTER (WHERE {good})", "quality_of_valid_sum"),
        (f"count({quality}) FILTER (WHERE {good})", "quality_of_valid_n"),
        (f"sum({regret}) FILTER (WHERE {bad_regret})", "regret_sum"),
        (f"count({regret}) FILTER (WHERE {bad_regret})", "regret_n"),
    )


def answered_sums(answered: str, valid: str) -> str:
    """The unit SQL's select items of :data:`HEADLINE` for a family whose rows carry a
    ``quality`` (NULL where a call failed) and two conditions: ``answered`` (no failed call)
    and ``valid`` (every answer valid): the quality, the valid rate over the answered rows and
    the quality of the answered, valid rows."""
    ok = f"{answered} AND {valid}"
    return select_items(
        ("sum(quality)", "quality_sum"),
        ("count(quality)", "quality_n"),
        (f"CAST(count(*) FILTER (WHERE {ok}) AS DOUBLE)", "valid_rate_sum"),
        (f"count(*) FILTER (WHERE {answered})", "valid_rate_n"),
        (f"sum(quality) FILTER (WHERE {ok})", "quality_of_valid_sum"),
        (f"count(*) FILTER (WHERE {ok})", "quality_of_valid_n"),
    )


RUN_COLUMNS = ["run_id", "path", "family", "state"]
LEADERBOARD_COLUMNS = ["family", "group", "rank", "metric", "better", "subset", "run_id",
                       "player", "units", "n", "mean", "ci95_low", "ci95_high"]
PAIRED_COLUMNS = ["family", "group", "metric", "subset", "a", "b", "shared", "mean_a",
                  "mean_b", "diff", "ci95_low", "ci95_high", "p", "p_holm", "verdict",
                  "warning"]
SHARED_COLUMNS = ["family", "a", "b", "same_run", "shared", "unit", "groups"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """What ``distbench compare`` prints: rows of each table, columns as the ``*_COLUMNS``."""

    runs: list[tuple]
    leaderboard: list[tuple]
    paired: list[tuple]
    shared: list[tuple]
    families: list[str]
    units: Mapping[str, FamilyUnits] = field(default_factory=dict)
    """Family name -> its units, for every family compared."""

    def tables(self) -> dict[str, tuple[list[str], list[tuple]]]:
        """Table name -> (columns, rows), in printing order."""
        return {"runs": (RUN_COLUMNS, self.runs),
                "leaderboard": (LEADERBOARD_COLUMNS, self.leaderboard),
                "shared": (SHARED_COLUMNS, self.shared),
                "paired": (PAIRED_COLUMNS, self.paired)}


def _run_id(run_dir: Path) -> tuple[str, str, str]:
    """(run id, family, state) from the manifest; the folder's name when it has none."""
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    return (str(manifest.get("run_id") or run_dir.name), str(manifest.get("family") or ""),
            str(manifest.get("state") or ""))


def player_name(run_id: str, player: str) -> str:
    """How a player is named in the paired tables: ``<run_id>/<player>``."""
    return f"{run_id}/{player}"


def verdict(n: int, diff: float, p_holm: float, better: str) -> str:
    """The verdict of a paired row: which player is better when the Holm-corrected p is below
    :data:`ALPHA`, else no significant difference."""
    if n < 2:
        return "too few shared units"
    if p_holm >= ALPHA:
        return "no significant difference"
    return "a better" if (diff < 0) == (better == "lower") else "b better"


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.cursor()
    try:
        return cursor_records(cur.execute(sql))
    finally:
        cur.close()


def compare_runs(paths: Sequence[Path | str], families: Sequence[FamilyUnits]) -> Comparison:
    """Compares the runs named by ``paths`` (runs or folders of runs), family by family of
    ``families`` (each family's units, as its ``Comparing`` hook declares them).

    Raises:
        UserError: a path is not a run or a folder of runs, or two folders hold the same run id.
    """
    from distbench.store.catalog import NotARunError, find_runs, open_runs
    from distbench.store.schema import SCHEMAS

    try:
        run_dirs = find_runs(list(paths))
    except NotARunError as exc:
        raise UserError(str(exc)) from None
    runs = []
    seen: dict[str, Path] = {}
    for run_dir in run_dirs:
        run_id, family, state = _run_id(run_dir)
        if run_id in seen:
            raise UserError(f"{seen[run_id]} and {run_dir} hold the same run id {run_id!r} "
                            "(a copy?): compare runs with different ids")
        seen[run_id] = run_dir
        runs.append((run_id, str(run_dir), family, state))

    wanted = [f for f in families if all(t in SCHEMAS for t in (f.table, *f.needs))]
    con = open_runs(run_dirs, safe=True,
                    tables=sorted({t for f in wanted for t in (f.table, *f.needs)}))
    try:
        result = compare_connection(con, wanted)
    finally:
        con.close()
    return Comparison(runs, *result, units={f.family: f for f in families})


def compare_connection(con: duckdb.DuckDBPyConnection, families: Sequence[FamilyUnits],
                       ) -> tuple[list[tuple], list[tuple], list[tuple], list[str]]:
    """The leaderboard, paired and shared rows, and the families present, of the runs whose
    views ``con`` holds (what :func:`compare_runs` does once the runs are open)."""
    leaderboard, paired, shared, present = [], [], [], []
    for fam in families:
        rows = _fetch(con, fam.sql)
        if not rows:
            continue
        present.append(fam.family)
        leaderboard += _leaderboard(fam, rows)
        paired += _paired(fam, rows)
        shared += _shared(fam, rows)
    return leaderboard, paired, shared, present


def _value(row: dict, metric: str) -> float | None:
    n = row[f"{metric}_n"]
    return None if not n else float(row[f"{metric}_sum"]) / n


def _leaderboard(fam: FamilyUnits, rows: list[dict]) -> list[tuple]:
    """Per group, the players ranked by the headline (ties where intervals overlap), each
    metric's block in that order of players."""
    cells: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows:
        cells[(r["grp"], r["run_id"], r["player"])].append(r)
    stats: dict[tuple[str, str, str], dict[str, tuple]] = defaultdict(dict)
    for key, units in cells.items():
        for metric in fam.metrics:
            # Clusters in unit order (as the report's SQL): the seeded interval depends on it.
            kept = sorted((u for u in units if u[f"{metric.name}_n"]), key=lambda u: u["unit"])
            if not kept:
                continue
            sums = np.array([float(u[f"{metric.name}_sum"]) for u in kept])
            counts = np.array([float(u[f"{metric.name}_n"]) for u in kept])
            ci = bootstrap_mean_ci(sums, counts)
            stats[key][metric.name] = (len(kept), int(counts.sum()),
                                       float(sums.sum() / counts.sum()),
                                       ci[0] if ci else None, ci[1] if ci else None)
    head = fam.metrics[0]
    out = []
    for grp in sorted({k[0] for k in cells}):
        players = sorted(k for k in cells if k[0] == grp)
        heads = [stats[k].get(head.name) for k in players]
        ranks = overlap_ranks([h[3] if h else None for h in heads],
                              [h[4] if h else None for h in heads],
                              lower_is_better=head.better == "lower")
        sign = -1.0 if head.better == "higher" else 1.0
        order = sorted(range(len(players)), key=lambda i: (
            ranks[i] is None, ranks[i] or 0,
            sign * heads[i][2] if heads[i] else 0.0, players[i][1], players[i][2]))
        for metric in fam.metrics:
            for i in order:
                key = players[i]
                if metric.name not in stats[key]:
                    continue
                units, n, mean, low, high = stats[key][metric.name]
                out.append((fam.family, grp, ranks[i], metric.name, metric.better,
                            metric.subset.replace(" in both runs", ""), key[1], key[2],
                            units, n, mean, low, high))
    return out


def paired_rows(labels: Sequence[str], units: Sequence[object],
                values: dict[str, Sequence[float | None]], metrics: Sequence[Metric],
                *, seed: int = BOOTSTRAP_SEED) -> list[dict]:
    """Paired comparisons of every two labels over their shared units, for each metric, with
    Holm's correction across the metrics of each pair: what ``distbench compare`` prints and
    what other reports call (e.g. a headline by perturbation: labels = presentations).

    Args:
        labels: (N,) the player (or condition) of each observation.
        units: (N,) its pairing unit; one observation per (label, unit).
        values: metric name -> (N,) the per-unit values (None: no value for that unit, e.g.
            no valid answer there; such a unit is not shared for that metric).
        metrics: The metrics, in the order of the rows.
        seed: Seed of the bootstraps.

    Returns:
        Dicts with keys metric, subset, a, b, shared, mean_a, mean_b, diff, ci95_low,
        ci95_high, p, p_holm, verdict, warning.
    """
    by: dict[str, dict[str, dict[object, float]]] = {m.name: {} for m in metrics}
    for m in metrics:
        for label, unit, value in zip(labels, units, values[m.name], strict=True):
            if value is not None and np.isfinite(value):
                by[m.name].setdefault(label, {})[unit] = float(value)
    out = []
    for a, b in combinations(sorted(set(labels)), 2):
        block = []
        for m in metrics:
            xa, xb = by[m.name].get(a, {}), by[m.name].get(b, {})
            common = sorted(set(xa) & set(xb), key=repr)  # the report's order: same intervals
            if not common:
                continue
            d = paired_difference([xa[u] for u in common], [xb[u] for u in common], seed=seed)
            block.append((m, d))
        adjusted = holm([d.p_value for _, d in block])
        for (m, d), p_holm in zip(block, adjusted, strict=True):
            out.append({
                "metric": m.name, "subset": m.subset, "a": a, "b": b, "shared": d.n,
                "mean_a": d.mean_a, "mean_b": d.mean_b, "diff": d.diff,
                "ci95_low": d.ci_low, "ci95_high": d.ci_high, "p": d.p_value,
                "p_holm": p_holm, "verdict": verdict(d.n, d.diff, p_holm, m.better),
                "warning": (f"< {MIN_SHARED_UNITS} units" if d.n < MIN_SHARED_UNITS
                            else "")})
    return out


def _paired(fam: FamilyUnits, rows: list[dict]) -> list[tuple]:
    out = []
    for grp in sorted({r["grp"] for r in rows}):
        sub = [r for r in rows if r["grp"] == grp]
        values = {m.name: [_value(r, m.name) for r in sub] for m in fam.metrics}
        for d in paired_rows([player_name(r["run_id"], r["player"]) for r in sub],
                             [r["unit"] for r in sub], values, fam.metrics):
            out.append((fam.family, grp, *(d[c] for c in PAIRED_COLUMNS[2:])))
    return out


def _shared(fam: FamilyUnits, rows: list[dict]) -> list[tuple]:
    units: dict[tuple[str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for r in rows:
        units[(r["run_id"], r["player"])][r["grp"]].add(r["unit"])
    out = []
    for (ra, pa_), (rb, pb) in combinations(sorted(units), 2):
        groups = {g: len(units[(ra, pa_)][g] & units[(rb, pb)].get(g, set()))
                  for g in units[(ra, pa_)]}
        groups = {g: n for g, n in groups.items() if n}
        total = sum(groups.values())
        if ra == rb and not total:
            continue  # two players of one run that met no common unit: opponents, not rivals
        out.append((fam.family, player_name(ra, pa_), player_name(rb, pb), ra == rb, total,
                    fam.unit, ", ".join(sorted(groups)) if groups else "(none)"))
    return out


def headline_lines(comparison: Comparison, family: str) -> list[str]:
    """One sentence per paired headline row of ``family``: the difference with its interval
    (rounded to what it supports), the units it rests on and the corrected verdict."""
    from distbench.report.headline import interval, rounded

    fam = comparison.units.get(family)
    units = fam.unit if fam else "units"
    lines = []
    for row in comparison.paired:
        r = dict(zip(PAIRED_COLUMNS, row, strict=True))
        if r["family"] != family or r["metric"] != "quality":
            continue
        low, high = r["ci95_low"], r["ci95_high"]
        warn = (f"; warning: fewer than {MIN_SHARED_UNITS} shared {units}, the interval is "
                "not to be trusted" if r["shared"] < MIN_SHARED_UNITS else "")
        lines.append(
            f"{family} {r['group']}: headline quality {r['a']} {rounded(r['mean_a'], low, high)}"
            f" vs {r['b']} {rounded(r['mean_b'], low, high)}: difference a - b "
            f"{rounded(r['diff'], low, high)} {interval(low, high)} (95% paired bootstrap) over "
            f"{r['shared']} shared {units} ({r['subset']}); Holm-corrected p "
            f"{format_p(r['p_holm'])}: {r['verdict']}{warn}")
    return lines


def format_p(p: float | None) -> str:
    """A p-value to two significant digits ('< 0.001' below that)."""
    if p is None:
        return "-"
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def summary_lines(comparison: Comparison) -> list[str]:
    """Plain sentences about the shared instances: one per pair of players of different runs."""
    differs = {name: f.differs for name, f in comparison.units.items()}
    lines = []
    for family, a, b, same_run, shared, unit, groups in comparison.shared:
        if same_run:
            continue
        if shared:
            lines.append(f"{family}: {a} and {b} share {shared} {unit} ({groups})")
        else:
            lines.append(f"{family}: {a} and {b} share 0 {unit}: no paired comparison "
                         f"(different {differs.get(family, 'instances')})")
    return lines
