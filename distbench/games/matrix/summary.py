"""The run summary of the matrix family: one record per (bucket, provider, model, tier, mode).

Statistics are over the valid trials (parse_status = 'ok'); the valid-answer rate is reported
beside them. ``std_nash_gap`` is the population standard deviation (``numpy.std``, ddof=0), as
in the seed tool. ``gap_ratio`` = mean nash_gap / mean |br_value|. The 95% confidence interval
of the mean gap is a percentile bootstrap that resamples whole games (the trials of one game
share its payoffs, so they are not independent), with a fixed seed so it is reproducible.

**The headline** (README, "The headline"): ``quality``, the mean over the answered trials of
each trial's quality in [0, 1]: 1 - exploitability / the worst pure action's exploitability on
its game (``games.worst_pure_exploitability``; 1 for any valid answer on a game whose every
action is optimal), an invalid answer 0, so no failure ever scores better than a valid answer
and modes compare. Calls that failed at the server are not the model's: they are left out of
every figure (``missing_trials`` counts them; ``valid_rate`` is valid / answered). Beside it
``valid_rate`` and ``quality_of_valid`` (headline = valid_rate x quality_of_valid), each with
a bootstrap 95% interval over games; with nothing answered all three are None.

**Honest aggregates** (the previous headline, kept for queries that read them):
``honest_nash_gap`` and ``honest_exploitability`` are means over the answered trials, where an
invalid answer scores what answering at random scores in expectation on that game: the
uniform strategy's gap (``games.uniform_nash_gap``) and, for exploitability, the uniform mixed
strategy's in mixed and logprob modes (``games.uniform_exploitability``) and the expected
exploitability of a uniformly random pure action in pure mode
(``games.uniform_pure_exploitability``). Their 95% intervals are the same bootstrap over
games. ``headline_metric`` names the honest aggregate to read of those two:
``exploitability`` for mixed buckets and for groups with gap-degenerate games, ``nash_gap``
otherwise; ``degenerate_game_share`` is the share of the group's games whose gap is degenerate.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import duckdb
import numpy as np

from distbench.games.matrix.buckets import UnknownBucketError, get_bucket
from distbench.report.bootstrap import Offload, start_bootstrap_ci
from distbench.report.headline import QUALITY_TOLERANCE, headline_cell, rounded
from distbench.store.catalog import cursor_records

GROUP_KEYS: tuple[str, ...] = ("bucket", "provider", "model", "tier", "mode")


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


# A game whose trials were split across shards has one game_scores row per part: ``merged``
# pools them into one row per game (counts and sums added, the population variance pooled
# around the game's mean, in shard order); a game of one part keeps its row's numbers exactly.
_MERGED_SQL = """
parts AS (
    SELECT *, sum(coalesce(mean_nash_gap * valid, 0)) OVER w / nullif(sum(valid) OVER w, 0)
                  AS game_mean
    FROM game_scores
    WINDOW w AS (PARTITION BY run_id, bucket, provider, model, tier, mode, game_id)
),
merged AS (
    SELECT run_id, bucket, provider, model, tier, mode, game_id,
           sum(trials) AS trials, sum(valid) AS valid,
           CASE WHEN count(*) = 1 THEN any_value(var_nash_gap)
                ELSE sum(valid * (coalesce(var_nash_gap, 0) + (mean_nash_gap - game_mean) ** 2)
                         ORDER BY shard_id) / nullif(sum(valid), 0) END AS var_nash_gap,
           min(min_nash_gap) AS min_nash_gap, max(max_nash_gap) AS max_nash_gap,
           {means},
           avg(mean_label_mass) AS mean_label_mass, bool_or(gap_degenerate) AS gap_degenerate
    FROM parts GROUP BY ALL
)"""
_MEANS = ", ".join(
    f"CASE WHEN count(*) = 1 THEN any_value({c}) ELSE sum({c} * valid ORDER BY shard_id) "
    f"/ nullif(sum(valid), 0) END AS {c}"
    for c in ("mean_nash_gap", "mean_llm_value", "mean_br_value", "mean_abs_br_value",
              "mean_exploitability"))

_GAMES_SQL = """
WITH """ + _MERGED_SQL.format(means=_MEANS) + """,
failed AS (
    SELECT bucket, provider, model, tier, mode, game_id, count(*) AS failed
    FROM trials WHERE family = 'matrix' AND parse_status = 'call_failed' GROUP BY ALL
),
per_game AS (
    SELECT s.bucket, s.provider, s.model, s.tier, s.mode, s.game_id, s.trials AS n, s.valid AS nv,
           coalesce(f.failed, 0) AS nf,
           coalesce(s.mean_nash_gap * s.valid, 0) AS s, s.var_nash_gap AS v,
           s.min_nash_gap AS lo, s.max_nash_gap AS hi,
           s.mean_llm_value * s.valid AS s_llm, s.mean_br_value * s.valid AS s_br,
           s.mean_abs_br_value * s.valid AS s_abs_br, s.mean_exploitability * s.valid AS s_expl,
           s.mean_label_mass AS lm, s.gap_degenerate AS deg,
           {honest}
    FROM merged AS s{join}
    LEFT JOIN failed AS f
        ON f.bucket = s.bucket AND f.provider = s.provider
       AND f.model = s.model AND f.tier IS NOT DISTINCT FROM s.tier AND f.mode = s.mode
       AND f.game_id = s.game_id
)
SELECT bucket, provider, model, tier, mode,
       count(*) AS num_games, max(n) AS per_game, sum(n) AS total, sum(nv) AS valid,
       sum(nf) AS failed,
       avg(CASE WHEN deg THEN 1.0 ELSE 0.0 END) AS deg_share,
       list(s ORDER BY game_id) AS sums, list(nv ORDER BY game_id) AS counts,
       list(coalesce(v, 0) ORDER BY game_id) AS variances,
       min(lo) AS min_gap, max(hi) AS max_gap,
       sum(s_llm ORDER BY game_id) AS sum_llm,
       sum(s_br ORDER BY game_id) AS sum_br,
       sum(s_abs_br ORDER BY game_id) AS sum_abs_br,
       sum(s_expl ORDER BY game_id) AS sum_expl,
       sum(lm ORDER BY game_id) AS sum_lm, count(lm) AS n_lm,
       list(h_gap ORDER BY game_id) AS honest_gap_sums,
       list(h_expl ORDER BY game_id) AS honest_expl_sums,
       list(q ORDER BY game_id) AS quality_sums,
       list(n - nf ORDER BY game_id) AS answered_counts
FROM per_game GROUP BY ALL
ORDER BY bucket, provider, model, tier NULLS FIRST, mode
"""

# Per game, the sums over its answered trials (failed calls left out: not the model's):
# the headline's quality (an invalid answer 0; a valid one 1 - exploitability / the game's
# worst pure exploitability, linear in the trial's exploitability, so the sum comes from the
# game's mean exploitability) and the older honest sums (an invalid answer scored as chance).
# NULL when the run has no games table to read the baselines from.
HONEST_SUMS_SQL = f"""
    coalesce(s.mean_nash_gap * s.valid, 0) + (s.trials - s.valid - coalesce(f.failed, 0))
        * g.uniform_nash_gap AS h_gap,
    coalesce(s.mean_exploitability * s.valid, 0) + (s.trials - s.valid - coalesce(f.failed, 0))
        * CASE WHEN s.mode = 'pure' THEN g.uniform_pure_exploitability
               ELSE g.uniform_exploitability END AS h_expl,
    CASE WHEN g.worst_pure_exploitability IS NULL THEN NULL
         WHEN s.valid = 0 THEN 0.0
         WHEN g.worst_pure_exploitability <= {QUALITY_TOLERANCE} THEN CAST(s.valid AS DOUBLE)
         ELSE greatest(0.0, least(s.valid, s.valid - s.mean_exploitability * s.valid
                                               / g.worst_pure_exploitability)) END AS q
"""
_GAMES_JOIN = """
    LEFT JOIN (SELECT DISTINCT run_id, game_id, uniform_nash_gap, uniform_exploitability,
                               uniform_pure_exploitability, worst_pure_exploitability
               FROM games) AS g
        USING (run_id, game_id)"""
_NO_GAMES = "NULL::DOUBLE AS h_gap, NULL::DOUBLE AS h_expl, NULL::DOUBLE AS q"

_VALID_TRIALS = "FROM trials WHERE family = 'matrix' AND parse_status = 'ok'"
_MEDIANS_SQL = (f"SELECT bucket, provider, model, tier, mode, median(nash_gap) AS median_gap "
                f"{_VALID_TRIALS} GROUP BY ALL")
# A run of one group (one bucket, model and mode: the common single run) has every valid
# trial in that group; grouping a million rows by five string keys would double the scan.
_MEDIAN_SQL = f"SELECT median(nash_gap) {_VALID_TRIALS}"
MEDIAN_IN_MEMORY = 5_000_000
"""Above this many valid trials in a group, the medians are found from counts of distinct
gaps (:func:`_median_by_counts`) rather than by DuckDB's ``median``, which holds every value
in memory (10⁸ trials: 800 MB and more)."""

_COUNTS_SQL = (f"SELECT nash_gap, count(*) {_VALID_TRIALS} AND bucket = ? AND provider = ? "
               "AND model = ? AND tier IS NOT DISTINCT FROM ? AND mode = ? "
               "GROUP BY nash_gap ORDER BY nash_gap")


def _median_by_counts(con: duckdb.DuckDBPyConnection, key: tuple, total: int) -> float | None:
    """The exact median of one group's ``total`` valid gaps (its ``game_scores`` count them;
    as DuckDB's ``median``: the mean of the two middle values when their number is even),
    from the count of each distinct gap, read in order: memory is bounded by DuckDB's limit
    (a large aggregate spills to disk) and by one batch of rows here. Answers take few
    distinct gaps (a pure action: one per action), so the counts are short where the trials
    are many."""
    if not total:
        return None
    lower_rank, upper_rank = (total - 1) // 2, total // 2  # 0-based ranks of the middle
    result = con.execute(_COUNTS_SQL, list(key))
    seen = 0
    lower = None
    while rows := result.fetchmany(10_000):
        for value, count in rows:
            if lower is None and seen + count > lower_rank:
                lower = value
            if seen + count > upper_rank:
                return float(lower + (value - lower) / 2) if value != lower else float(value)
            seen += count
    return None  # pragma: no cover - the counts add up to the total


# Why answers were invalid, per group: only the invalid rows are read.
_INVALID_SQL = ("SELECT bucket, provider, model, tier, mode, parse_status, count(*) FROM trials "
                "WHERE family = 'matrix' AND parse_status <> 'ok' GROUP BY ALL ORDER BY ALL")


def matrix_summary(con: duckdb.DuckDBPyConnection,
                   offload: Offload | None = None) -> list[dict[str, Any]]:
    """Summary records of a matrix run, one per group, in a stable order.

    Per-game statistics come from ``game_scores`` (computed by each shard from its trials),
    combined in ``game_id`` order: the same numbers on any number of DuckDB threads. Only the
    median reads every trial (an exact median is order-free). The per-game figures come to
    Python for the bootstrap and the pooled variance.

    Args:
        con: A connection with the run's views (:func:`distbench.store.catalog.open_run`).
        offload: Where the bootstraps run (a run's driver passes its cluster's workers, and
            the DuckDB scan for the medians runs meanwhile); default: in this process.
    """
    has_games = bool(con.execute(
        "SELECT count(*) FROM (SELECT table_name FROM duckdb_tables() UNION ALL "
        "SELECT view_name FROM duckdb_views()) WHERE table_name = 'games'").fetchone()[0])
    sql = _GAMES_SQL.format(honest=HONEST_SUMS_SQL if has_games else _NO_GAMES,
                            join=_GAMES_JOIN if has_games else "")
    groups = cursor_records(con.execute(sql))
    cis = [start_bootstrap_ci(r["sums"], r["counts"], offload) if r["valid"] else None
           for r in groups]
    honest_cis = [tuple(start_bootstrap_ci(r[key], r["answered_counts"], offload)
                        if _known(r[key]) else None
                        for key in ("honest_gap_sums", "honest_expl_sums")) for r in groups]
    # The headline (quality over answered trials), the valid rate, the quality of valid answers.
    head_cis = [tuple(start_bootstrap_ci(r[sums], r[counts], offload)
                      if _known(r["quality_sums"]) else None
                      for sums, counts in (("quality_sums", "answered_counts"),
                                           ("counts", "answered_counts"),
                                           ("quality_sums", "counts"))) for r in groups]
    if any(r["valid"] > MEDIAN_IN_MEMORY for r in groups):
        medians = {}
        for r in groups:
            key = tuple(r[k] for k in GROUP_KEYS)
            medians[key] = _median_by_counts(con, key, int(r["valid"]))
    elif len(groups) == 1:
        medians = {tuple(groups[0][k] for k in GROUP_KEYS): con.execute(_MEDIAN_SQL).fetchone()[0]}
    else:
        medians = {tuple(row[:5]): row[5] for row in con.execute(_MEDIANS_SQL).fetchall()}
    invalid: dict[tuple, dict[str, int]] = {}
    for row in con.execute(_INVALID_SQL).fetchall():
        invalid.setdefault(tuple(row[:5]), {})[row[5]] = int(row[6])
    records = []
    for r, ci, (gap_ci, expl_ci), heads in zip(groups, cis, honest_cis, head_cis, strict=True):
        key = tuple(r[k] for k in GROUP_KEYS)
        r["median_gap"] = medians.get(key)
        record = _record(r, ci() if ci else None)
        statuses = invalid.get(key, {})
        record["call_failed"] = statuses.get("call_failed", 0)
        record["invalid_answers"] = sum(n for st, n in statuses.items() if st != "call_failed")
        record["invalid_by_status"] = statuses
        record.update(_headline(r, [h() if h else None for h in heads]))
        record.update(_honest(r, gap_ci() if gap_ci else None, expl_ci() if expl_ci else None))
        records.append(record)
    add_invariance(con, records)
    return records


def _headline(r: dict[str, Any], cis: list[tuple[float, float] | None]) -> dict[str, Any]:
    """The headline of a group (README, "The headline"): ``quality``, the mean quality over the
    answered trials (an invalid answer 0, failed calls left out), ``valid_rate`` (valid /
    answered) and ``quality_of_valid``, each with its bootstrap interval over games; None
    (no interval) when nothing was answered or the run has no games table."""
    answered = int(sum(r["answered_counts"]))
    valid = int(r["valid"])
    known = _known(r["quality_sums"]) and answered > 0
    total_q = math.fsum(r["quality_sums"]) if known else None
    values = (total_q / answered if known else None,
              valid / answered if answered else None,
              total_q / valid if known and valid else None)
    out: dict[str, Any] = {"answered_trials": answered, "missing_trials": int(r["failed"])}
    for name, value, ci in zip(("quality", "valid_rate", "quality_of_valid"), values, cis,
                               strict=True):
        out[name] = _num(value) if value is not None else None
        out[f"{name}_ci95"] = [_num(ci[0]), _num(ci[1])] if value is not None and ci else None
    return out


def _known(values: list[float | None] | None) -> bool:
    """Every game has a finite value (the chance baselines could be read)."""
    return bool(values) and all(v is not None and math.isfinite(v) for v in values)


def headline_metric(bucket: str, degenerate_share: float) -> str:
    """The honest aggregate to read first: ``"exploitability"`` for a mixed bucket or when
    some game's gap is degenerate, ``"nash_gap"`` otherwise."""
    try:
        mixed = get_bucket(bucket).kind == "mixed"
    except UnknownBucketError:
        mixed = False
    return "exploitability" if mixed or degenerate_share > 0 else "nash_gap"


def _honest(r: dict[str, Any], gap_ci: tuple[float, float] | None,
            expl_ci: tuple[float, float] | None) -> dict[str, Any]:
    """The honest aggregates of a group (module docstring), with their intervals."""
    total = float(sum(r["answered_counts"]))
    out: dict[str, Any] = {"headline_metric": headline_metric(r["bucket"], float(r["deg_share"]))}
    for name, key, ci in (("honest_nash_gap", "honest_gap_sums", gap_ci),
                          ("honest_exploitability", "honest_expl_sums", expl_ci)):
        known = _known(r[key]) and total > 0
        out[name] = _num(math.fsum(r[key]) / total) if known else None
        out[f"{name}_ci95"] = [_num(ci[0]), _num(ci[1])] if known and ci else None
    return out


def _record(r: dict[str, Any], ci: tuple[float, float] | None) -> dict[str, Any]:
    """One summary record from a group's per-game figures, its median and its CI."""
    total, valid = int(r["total"]), int(r["valid"])
    record: dict[str, Any] = {k: r[k] for k in GROUP_KEYS}
    record.update(
        num_games=int(r["num_games"]),
        num_trials_per_game=int(r["per_game"]),
        total_trials=total,
        valid_trials=valid,
        degenerate_game_share=float(r["deg_share"]),
        mean_label_mass=float(r["sum_lm"] / r["n_lm"]) if r["n_lm"] else None,
    )
    if not valid:
        for key in _STAT_KEYS:
            record[key] = None
        return record
    sums = np.asarray(r["sums"], dtype=np.float64)
    counts = np.asarray(r["counts"], dtype=np.float64)
    mean_gap = float(sums.sum() / valid)
    # Pooled population variance: within-game plus between-game parts.
    played = counts > 0
    within = float((counts * np.asarray(r["variances"], dtype=np.float64)).sum())
    between = float((counts[played] * (sums[played] / counts[played] - mean_gap) ** 2).sum())
    mean_abs_br = r["sum_abs_br"] / valid
    record.update(
        mean_nash_gap=mean_gap,
        median_nash_gap=float(r["median_gap"]),
        std_nash_gap=math.sqrt(max(within + between, 0.0) / valid),
        min_nash_gap=float(r["min_gap"]),
        max_nash_gap=float(r["max_gap"]),
        mean_llm_value=float(r["sum_llm"] / valid),
        mean_br_value=float(r["sum_br"] / valid),
        gap_ratio=_num(mean_gap / mean_abs_br) if mean_abs_br else None,
        mean_exploitability=float(r["sum_expl"] / valid),
        nash_gap_ci95=list(ci) if ci else None,
    )
    return record


_STAT_KEYS = (
    "mean_nash_gap", "median_nash_gap", "std_nash_gap", "min_nash_gap", "max_nash_gap",
    "mean_llm_value", "mean_br_value", "gap_ratio", "mean_exploitability", "nash_gap_ci95",
)


def format_summary(records: list[dict[str, Any]], width: int | None = None) -> str:
    """A compact plain-text table of summary records for the terminal: the headline first
    (mean quality over the answered trials, an invalid answer 0, failed calls left out) with
    its interval, then its components (valid rate, quality of the valid answers) and the
    figures over the valid answers; numbers rounded to what their intervals support. With
    ``width``, every line fits it (the table cut into blocks of columns, the notes wrapped)."""
    from distbench.report.document import fit_lines

    if not records:
        return "no trials"
    header = ["bucket", "model", "mode", "games", "trials", "missing", "quality [95% CI]",
              "valid", "quality of valid", "mean gap", "mean expl.", "degenerate"]
    masses = any(r.get("mean_label_mass") is not None for r in records)
    if masses:
        header.append("label mass")
    rows = []

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.4g}"

    def with_ci(r: dict[str, Any], key: str) -> str:
        ci = r.get(f"{key}_ci95") or [None, None]
        return rounded(r.get(key), *ci)

    for r in records:
        rows.append([
            r["bucket"], f"{r['provider']}:{r['model']}", r["mode"], str(r["num_games"]),
            str(r["total_trials"]), str(r.get("missing_trials", 0)), headline_cell(r, "quality"),
            with_ci(r, "valid_rate"), with_ci(r, "quality_of_valid"), fmt(r["mean_nash_gap"]), fmt(r["mean_exploitability"]),
            f"{100 * r['degenerate_game_share']:.0f}%",
        ])
        if masses:
            rows[-1].append(fmt(r.get("mean_label_mass")))
    lines = fit_lines(header, rows, width, keys=3)
    notes = []
    for r in records:
        name = f"{r['bucket']} {r['provider']}:{r['model']} {r['mode']}"
        statuses = r.get("invalid_by_status") or {}
        if not r.get("answered_trials"):
            notes.append(f"{name}: no answer (every call failed): no headline")
        if statuses:
            answers = ", ".join(f"{st} {n}" for st, n in statuses.items() if st != "call_failed")
            failed = r.get("call_failed", 0)
            notes.append(f"{name}: invalid answers (the model's, quality 0) "
                         f"{r.get('invalid_answers', 0)}{': ' + answers if answers else ''}; "
                         f"failed calls (not the model's, left out) {failed}"
                         f"{' (--retry-failed plays them again)' if failed else ''}")
    notes.append("quality (the headline): 1 - exploitability / the worst pure action's "
                 "exploitability on the game, an invalid answer 0, over the answered trials "
                 "(missing: failed calls, left out); = valid x quality of valid. mean gap, "
                 "mean expl.: over valid answers only.")
    for note in notes:
        if not width or len(note) <= width:
            lines.append(note)
            continue
        # one clause a line ("; "), so a count stays beside its words; a long clause wrapped
        first, *rest = note.split("; ")
        for k, part in enumerate([first, *rest]):
            lines += textwrap.wrap(part, width, initial_indent="  " if k else "",
                                   subsequent_indent="  ")
    lines += format_invariance(records)
    return "\n".join(lines)


# --- Invariance (``--perturb``): the base presentation (``trials``) against the others
# (``perturb_trials``), per summary group. The figures are defined in
# ``distbench.games.answers.invariance``; the per-trial score compared across presentations
# is :func:`presentation_score_sql`'s.

def presentation_score_sql() -> str:
    """The per-trial score compared across presentations (SQL over a trial ``t`` and its
    game ``g``): the headline quality (``matrix_scored``'s: an invalid answer 0, a failed call
    NULL, so left out)."""
    from distbench.games.matrix.schema import QUALITY_EXPR

    return QUALITY_EXPR


_PRESENTED_SQL = """
SELECT t.game_id, t.presentation, t.decision, t.strategy, t.position, t.row_order,
       t.parse_status = 'ok' AS ok, {score} AS score
FROM (SELECT run_id, game_id, mode, trial, 'none' AS presentation, decision, strategy,
             decision AS position, NULL::INTEGER[] AS row_order, parse_status, nash_gap,
             exploitability, bucket, provider, model, tier
      FROM trials WHERE family = 'matrix'
      UNION ALL
      SELECT run_id, game_id, mode, trial, presentation, decision, strategy, position,
             row_order, parse_status, nash_gap, exploitability, bucket, provider, model, tier
      FROM perturb_trials WHERE family = 'matrix') AS t
LEFT JOIN (SELECT DISTINCT run_id, game_id, worst_pure_exploitability FROM games) AS g
    USING (run_id, game_id)
WHERE t.bucket = ? AND t.provider = ? AND t.model = ? AND t.tier IS NOT DISTINCT FROM ?
      AND t.mode = ?
ORDER BY t.presentation, t.game_id, t.trial
"""


def _has_view(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM (SELECT table_name FROM duckdb_tables() UNION ALL "
        "SELECT view_name FROM duckdb_views()) WHERE table_name = ?", [name]).fetchone()[0])


def add_invariance(con: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> None:
    """Adds ``perturbation`` (a list, one entry per presentation other than the base) to
    each group record of a run with ``perturb_trials``: consistency, position bias (see
    ``games.answers.invariance``) and the headline score by presentation, paired with the
    base presentation over the games both have. Runs without presentations are left as
    they are."""
    if not (_has_view(con, "perturb_trials") and _has_view(con, "games")):
        return
    if con.execute("SELECT count(*) FROM (SELECT 1 FROM perturb_trials LIMIT 1)").fetchone()[0] == 0:
        return  # no presentation played: no scan of the trials
    for record in records:
        sql = _PRESENTED_SQL.format(score=presentation_score_sql())
        rows = con.execute(sql, [record[k] for k in GROUP_KEYS]).fetchall()
        if any(r[1] != "none" for r in rows):
            record["perturbation"] = invariance_of_rows(rows, record["mode"], "quality")


def invariance_of_rows(rows: list[tuple], mode: str, metric: str) -> list[dict[str, Any]]:
    """The ``perturbation`` entries of one group from its trial rows (game_id, presentation,
    decision, strategy, position, row_order, ok, score), base rows included."""
    from distbench.games.answers.invariance import invariance_records
    from distbench.report.stats import paired_bootstrap

    m = next(len(r[5]) for r in rows if r[5] is not None)
    total = len(rows)
    under = np.zeros((total, m))
    shown = np.zeros((total, m))
    orders = np.tile(np.arange(m), (total, 1))
    ok = np.zeros(total, dtype=bool)
    for k, (_, _, decision, strategy, position, order, valid, _) in enumerate(rows):
        if order is not None:
            orders[k] = order
        if not valid:
            continue
        if mode == "pure":
            if decision is None or position is None:
                continue
            under[k, decision] = 1.0
            shown[k, position] = 1.0
        else:
            if strategy is None:
                continue
            under[k] = strategy
            shown[k] = under[k, orders[k]]
        ok[k] = True
    games = [r[0] for r in rows]
    names = [r[1] for r in rows]
    entries = invariance_records(games, names, under, shown, orders, ok,
                                 kind="pure" if mode == "pure" else "mixed")
    means: dict[tuple[str, str], list[float]] = {}
    answered: dict[tuple[str, str], list[float]] = {}
    for k, (g, name, score) in enumerate(zip(games, names, (r[7] for r in rows), strict=True)):
        answered.setdefault((name, g), []).append(float(ok[k]))
        if score is not None and math.isfinite(score):
            means.setdefault((name, g), []).append(score)
    for entry in entries:
        name = entry["presentation"]
        mine = [k for k in range(total) if names[k] == name]
        entry["trials"] = len(mine)
        entry["valid_rate"] = float(ok[mine].mean()) if mine else None
        shared = sorted({g for (p, g) in means if p == name} & {g for (p, g) in means
                                                                 if p == "none"})
        here = np.array([np.mean(means[(name, g)]) for g in shared])
        base = np.array([np.mean(means[("none", g)]) for g in shared])
        diff = paired_bootstrap(here, base, labels=(name, "none")) if shared else None
        entry["headline_metric"] = metric
        entry["paired_games"] = len(shared)
        entry["headline"] = _num(diff.mean_a) if diff else None
        entry["headline_base"] = _num(diff.mean_b) if diff else None
        entry["headline_diff"] = _num(diff.diff) if diff else None
        entry["headline_diff_ci95"] = ([_num(diff.ci_low), _num(diff.ci_high)]
                                       if diff and diff.n >= 2 else None)
        both = sorted({g for (p, g) in answered if p == name}
                      & {g for (p, g) in answered if p == "none"})
        rates = paired_bootstrap(np.array([np.mean(answered[(name, g)]) for g in both]),
                                 np.array([np.mean(answered[("none", g)]) for g in both]),
                                 labels=(name, "none")) if both else None
        entry["valid_rate_base"] = _num(rates.mean_b) if rates else None
        entry["valid_rate_diff"] = _num(rates.diff) if rates else None
        entry["valid_rate_diff_ci95"] = ([_num(rates.ci_low), _num(rates.ci_high)]
                                         if rates and rates.n >= 2 else None)
    return entries


def format_invariance(records: list[dict[str, Any]]) -> list[str]:
    """Terminal lines of the ``perturbation`` entries (none when the run has none)."""
    lines: list[str] = []

    def fmt(x: float | None, digits: str = ".3f") -> str:
        return "-" if x is None else format(x, digits)

    def interval(ci: list | None, digits: str = ".3f") -> str:
        return "-" if not ci or ci[0] is None else f"[{ci[0]:{digits}}, {ci[1]:{digits}}]"

    for r in records:
        entries = r.get("perturbation")
        if not entries:
            continue
        name = {"exploitability": "expl.", "nash_gap": "gap"}.get(entries[0]["headline_metric"],
                                                                 entries[0]["headline_metric"])
        lines.append(f"invariance, {r['bucket']} {r['provider']}:{r['model']} {r['mode']} "
                     f"(against the base presentation, paired over games):")
        header = ["presentation", "games", "valid", "consistency", "95% CI", "position-only",
                  "position-1 bias", "95% CI", f"{name} (base)", f"diff {name}", "95% CI"]
        rows = [[e["presentation"], str(e["games"]),
                 "-" if e["valid_rate"] is None else f"{100 * e['valid_rate']:.1f}%",
                 fmt(e["consistency"]), interval(e["consistency_ci95"]),
                 fmt(e["position_only_consistency"]), fmt(e.get("position_bias")),
                 interval(e.get("position_bias_ci95")),
                 f"{fmt(e['headline'], '.4g')} ({fmt(e['headline_base'], '.4g')})",
                 fmt(e["headline_diff"], "+.4g"), interval(e["headline_diff_ci95"], ".4g")]
                for e in entries]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
                  for row in rows]
        for e in entries:
            if e.get("position_shares"):
                shares = ", ".join(f"{k + 1}: {fmt(o, '.2f')} vs {fmt(p, '.2f')}" for k, (o, p)
                                   in enumerate(zip(e["position_shares"],
                                                    e["predicted_shares"], strict=True)))
                lines.append(f"  {e['presentation']}: share of each position, observed vs "
                             f"predicted by the base answers: {shares}")
    if lines:
        lines.append("consistency: same underlying action as in the base presentation (1 = "
                     "invariant; position-only: what answering by position alone scores); "
                     "position-1 bias: 0 = as the base answers predict, 1 = always the first "
                     "label; diff: headline score of the presentation minus the base's.")
    return lines
