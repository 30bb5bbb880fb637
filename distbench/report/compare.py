"""Comparisons across runs: a leaderboard and paired bootstrap comparisons over shared instances.

Separate runs of different models are comparable wherever they played the same instances:
games are generated from their seeds alone, so two runs over the same seeds meet the same
games. Each family's results are cut into **units** (one instance a player played) within
**groups** (the conditions under which units are comparable):

* matrix: unit = the game (``game_id`` = bucket, seed, game index), group = the answer mode;
  per unit the valid-answer rate and, over the valid answers, the mean Nash gap and mean
  exploitability (the report's per-game means, ``report_matrix_game_means.sql``);
* negotiation: unit = the instance (``instance_id``), group = mode, language and opponent;
  per unit the mean main score over the player's seats that were not aborted and the share of
  seats not aborted;
* fog: unit = the game (seed, game index), group = the condition (board, forces, turn limit,
  scouting and scout accuracy) and the opponent; per unit the score (win 1, draw 0.5).

The opponent is part of the group because a score against one opponent says nothing about a
score against another; self-play is the opponent ``self``, so two runs of two models each in
self-play are compared. A player is ``(run_id, provider:model)`` (or a scripted agent), so the
same model in two runs is two players.

The leaderboard gives each player's mean over all of its own units (trial- or seat-weighted,
as the run's summaries) with a percentile bootstrap 95% CI over units
(:func:`distbench.report.bootstrap.bootstrap_mean_ci`). The paired comparisons are those of
the report (:func:`distbench.report.stats.pairwise_differences`: per-unit differences, seeded
paired bootstrap) over the units two players share in a group. The shared-instance table counts,
for every two players of different runs (and two players of one run that share units), the
units they share over all groups: 0 says the runs cannot be compared.

Non-finite values (NaN, inf) are left out of the means, as invalid answers are.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import duckdb
import numpy as np

from distbench.errors import UserError
from distbench.report.bootstrap import bootstrap_mean_ci
from distbench.report.stats import PairedDifference, pairwise_differences


@dataclass(frozen=True, slots=True)
class Metric:
    """A compared quantity: its column stem (``<name>_sum``, ``<name>_n`` in the unit SQL)."""

    name: str
    better: str  # "lower" or "higher"


@dataclass(frozen=True, slots=True)
class FamilyUnits:
    """How one family's results are cut into comparison units.

    Attributes:
        family: Family name.
        table: The table that must hold rows for the family to be compared.
        unit: What a unit is, plural ("games", "instances").
        sql: One row per (run_id, player, grp, unit) with ``<metric>_sum`` and ``<metric>_n``
            for every metric (the unit's value is sum / n; n = 0 leaves the unit out).
        metrics: The metrics.
        differs: What two runs that share no unit differ in (for the sentence saying so).
    """

    family: str
    table: str
    unit: str
    sql: str
    metrics: tuple[Metric, ...]
    differs: str


_MATRIX_SQL = """
SELECT
    run_id,
    provider || ':' || model                                         AS player,
    mode                                                             AS grp,
    game_id                                                          AS unit,
    CAST(count(*) FILTER (WHERE parse_status = 'ok') AS DOUBLE)      AS valid_rate_sum,
    count(*)                                                         AS valid_rate_n,
    sum(nash_gap) FILTER (WHERE parse_status = 'ok' AND isfinite(nash_gap))             AS nash_gap_sum,
    count(nash_gap) FILTER (WHERE parse_status = 'ok' AND isfinite(nash_gap))           AS nash_gap_n,
    sum(exploitability) FILTER (WHERE parse_status = 'ok' AND isfinite(exploitability)) AS exploitability_sum,
    count(exploitability) FILTER (WHERE parse_status = 'ok' AND isfinite(exploitability)) AS exploitability_n
FROM trials
WHERE family = 'matrix'
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

_NEGOTIATION_SQL = """
WITH seats AS (
    SELECT run_id, player_a AS player, player_b AS opponent, mode, lang, instance_id, aborted,
           main_score
    FROM episodes
    UNION ALL
    SELECT run_id, player_b, player_a, mode, lang, instance_id, aborted, main_score
    FROM episodes
)
SELECT
    run_id,
    player,
    mode || '/' || lang || ' vs ' || CASE WHEN opponent = player THEN 'self' ELSE opponent END
                                                                     AS grp,
    instance_id                                                      AS unit,
    sum(main_score) FILTER (WHERE isfinite(main_score))              AS main_score_sum,
    count(main_score) FILTER (WHERE isfinite(main_score))            AS main_score_n,
    CAST(count(*) FILTER (WHERE NOT aborted) AS DOUBLE)              AS completed_rate_sum,
    count(*)                                                         AS completed_rate_n
FROM seats
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

_FOG_SQL = """
WITH per_agent AS (
    SELECT run_id, agent_a AS agent, agent_b AS opponent, seed, game_index, board_size,
           num_forces, max_turns, scouting, scout_accuracy,
           CASE winner WHEN 'a' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END AS score
    FROM fog_games
    UNION ALL
    SELECT run_id, agent_b, agent_a, seed, game_index, board_size, num_forces, max_turns,
           scouting, scout_accuracy,
           CASE winner WHEN 'b' THEN 1.0 WHEN 'draw' THEN 0.5 ELSE 0.0 END
    FROM fog_games
)
SELECT
    run_id,
    agent                                                            AS player,
    board_size || 'x' || board_size || ' k' || num_forces || ' t' || max_turns || ' '
        || CASE WHEN scouting THEN 'scout ' || CAST(scout_accuracy AS VARCHAR)
                ELSE 'no scouting' END
        || ' vs ' || CASE WHEN opponent = agent THEN 'self' ELSE opponent END AS grp,
    's' || CAST(seed AS VARCHAR) || '/g' || CAST(game_index AS VARCHAR) AS unit,
    sum(score)                                                       AS score_sum,
    count(*)                                                         AS score_n
FROM per_agent
GROUP BY ALL
ORDER BY run_id, player, grp, unit
"""

FAMILIES: tuple[FamilyUnits, ...] = (
    FamilyUnits("matrix", "trials", "games", _MATRIX_SQL,
                (Metric("exploitability", "lower"), Metric("nash_gap", "lower"),
                 Metric("valid_rate", "higher")), "buckets, seeds or answer modes"),
    FamilyUnits("negotiation", "episodes", "instances", _NEGOTIATION_SQL,
                (Metric("main_score", "higher"), Metric("completed_rate", "higher")),
                "seeds, modes, languages or opponents"),
    FamilyUnits("fog", "fog_games", "games", _FOG_SQL, (Metric("score", "higher"),),
                "seeds, conditions or opponents"),
)
"""The compared families and their units (a family not listed here is not compared)."""

RUN_COLUMNS = ["run_id", "path", "family", "state"]
LEADERBOARD_COLUMNS = ["family", "group", "metric", "better", "run_id", "player", "units",
                       "n", "mean", "ci95_low", "ci95_high"]
PAIRED_COLUMNS = ["family", "group", "metric", "a", "b", "shared", "mean_a", "mean_b",
                  "diff", "ci95_low", "ci95_high", "verdict"]
SHARED_COLUMNS = ["family", "a", "b", "same_run", "shared", "unit", "groups"]


@dataclass(frozen=True, slots=True)
class Comparison:
    """What ``distbench compare`` prints: rows of each table, columns as the ``*_COLUMNS``."""

    runs: list[tuple]
    leaderboard: list[tuple]
    paired: list[tuple]
    shared: list[tuple]
    families: list[str]

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


def _verdict(diff: PairedDifference, better: str) -> str:
    if diff.n < 2:
        return "too few shared units"
    if not diff.significant:
        return "no significant difference"
    a_lower = diff.ci_high < 0
    return "a better" if a_lower == (better == "lower") else "b better"


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.cursor()
    try:
        result = cur.execute(sql)
        names = [d[0] for d in result.description]
        return [dict(zip(names, row, strict=True)) for row in result.fetchall()]
    finally:
        cur.close()


def compare_runs(paths: Sequence[Path | str]) -> Comparison:
    """Compares the runs named by ``paths`` (runs or folders of runs).

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

    wanted = [f for f in FAMILIES if f.table in SCHEMAS]
    con = open_runs(run_dirs, safe=True, tables=sorted({f.table for f in wanted}))
    try:
        leaderboard, paired, shared, present = [], [], [], []
        for fam in wanted:
            rows = _fetch(con, fam.sql)
            if not rows:
                continue
            present.append(fam.family)
            leaderboard += _leaderboard(fam, rows)
            paired += _paired(fam, rows)
            shared += _shared(fam, rows)
    finally:
        con.close()
    return Comparison(runs, leaderboard, paired, shared, present)


def _value(row: dict, metric: str) -> float | None:
    n = row[f"{metric}_n"]
    return None if not n else float(row[f"{metric}_sum"]) / n


def _leaderboard(fam: FamilyUnits, rows: list[dict]) -> list[tuple]:
    cells: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows:
        cells[(r["grp"], r["run_id"], r["player"])].append(r)
    out = []
    for metric in fam.metrics:
        block = []
        for (grp, run_id, player), units in cells.items():
            # Clusters in unit order (as the report's SQL): the seeded interval depends on it.
            units = sorted((u for u in units if u[f"{metric.name}_n"]), key=lambda u: u["unit"])
            if not units:
                continue
            sums = np.array([float(u[f"{metric.name}_sum"]) for u in units])
            counts = np.array([float(u[f"{metric.name}_n"]) for u in units])
            ci = bootstrap_mean_ci(sums, counts)
            block.append((fam.family, grp, metric.name, metric.better, run_id, player,
                          len(units), int(counts.sum()), float(sums.sum() / counts.sum()),
                          ci[0] if ci else None, ci[1] if ci else None))
        sign = 1.0 if metric.better == "lower" else -1.0
        out += sorted(block, key=lambda r: (r[1], sign * r[8], r[4], r[5]))
    order = {m.name: i for i, m in enumerate(fam.metrics)}
    return sorted(out, key=lambda r: (r[1], order[r[2]]))  # stable: keeps the ranking


def _paired(fam: FamilyUnits, rows: list[dict]) -> list[tuple]:
    out = []
    for grp in sorted({r["grp"] for r in rows}):
        sub = [r for r in rows if r["grp"] == grp]
        for metric in fam.metrics:
            values = [_value(r, metric.name) for r in sub]
            for d in pairwise_differences([player_name(r["run_id"], r["player"]) for r in sub],
                                          [r["unit"] for r in sub], values):
                out.append((fam.family, grp, metric.name, d.a, d.b, d.n, d.mean_a, d.mean_b,
                            d.diff, d.ci_low, d.ci_high, _verdict(d, metric.better)))
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


def summary_lines(comparison: Comparison) -> list[str]:
    """Plain sentences about the shared instances: one per pair of players of different runs."""
    differs = {f.family: f.differs for f in FAMILIES}
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
