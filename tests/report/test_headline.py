"""The headline cannot be gamed: replacing any valid answer by an invalid one never raises it, in
every family (property tests over real shards, scored by the real views and summaries); calls
that failed are left out; two runs of the same random policy are not told apart by
``distbench compare`` after Holm's correction (at least 90 of 100 seeded repetitions)."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from distbench.games.fog.plan import FogRunConfig, plan_fog_shards
from distbench.games.fog.runner import run_shard as fog_shard
from distbench.games.fog.summary import fog_summary
from distbench.games.matrix.plan import MatrixRunConfig, plan_matrix
from distbench.games.matrix.runner import run_shard as matrix_shard
from distbench.games.matrix.schema import VIEWS as MATRIX_VIEWS
from distbench.games.matrix.summary import matrix_summary
from distbench.games.negotiation import runner as negotiation_runner
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards
from distbench.games.negotiation.summary import negotiation_summary
from distbench.games.registry import compare_units
from distbench.kernels.zero_sum import solve_zero_sum
from distbench.llm.registry import build_backend, make_spec
from distbench.report.compare import compare_connection
from distbench.report.headline import headline, holm, matrix_quality, paired_difference
from distbench.store.catalog import _select_list

FAMILIES = compare_units()  # every family's comparison units, as compare gets them

EPS = 1e-12


def _views(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table]) -> None:
    """Each table as the catalog's view of it (derived columns computed), plus the family
    views over them."""
    from distbench.store.writer import with_harness

    for name, table in tables.items():
        if "harness_hash" not in table.column_names:  # as the writer stores it (NULL here)
            table = with_harness(table, None)
        con.register("_arrow", table)  # a table, not a registration: cursors see it too
        con.execute(f"CREATE OR REPLACE TABLE _raw_{name} AS SELECT * FROM _arrow")
        con.unregister("_arrow")
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {_select_list(name)} "
                    f"FROM _raw_{name}")
    for name, (sql, needs) in MATRIX_VIEWS.items():
        if all(t in tables for t in needs):
            con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")


# ---- the quality and the helpers --------------------------------------------------------


def test_matrix_quality_is_one_at_nash_zero_at_the_worst_pure_action_and_for_invalid():
    payoff = np.array([[3.0, -1.0, 0.0], [1.0, 2.0, -4.0], [-2.0, 0.5, 1.0]])
    sol = solve_zero_sum(payoff[None])
    value = float(sol.value[0])
    pure_expl = value - payoff.min(axis=1)  # exploitability of each pure action
    worst = np.full(5, pure_expl.max())
    nash = value - float((sol.row[0] @ payoff).min())
    e = np.array([nash, pure_expl.max(), pure_expl.min(), np.nan, 0.0])
    q = matrix_quality(e, worst, np.array([True, True, True, False, False]))
    assert q[0] == pytest.approx(1.0, abs=1e-9) and q[1] == 0.0
    assert 0.0 <= q[2] <= 1.0 and q[3] == q[4] == 0.0
    # every action optimal (worst pure exploitability 0): any valid answer is 1
    assert matrix_quality(np.zeros(2), np.zeros(2), np.array([True, False])).tolist() == [1, 0]


def test_holm_multiplies_the_kth_smallest_by_m_minus_k_and_keeps_the_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert holm([]) == [] and holm([0.9, 0.8]) == [1.0, 1.0]


def test_a_group_with_nothing_answered_has_no_headline_and_no_interval():
    h = headline([0.0, 0.0], [0, 0], [0, 0], missing=6)
    assert (h.quality, h.quality_ci95, h.valid_rate, h.answered, h.missing) == \
        (None, None, None, 0, 6)
    h = headline([1.5, 0.0], [2, 0], [3, 2], missing=1)  # headline = valid x quality of valid
    assert h.quality == pytest.approx(h.valid_rate * h.quality_of_valid) == 0.3


def test_paired_difference_of_identical_values_is_zero_with_p_one():
    d = paired_difference([0.2, 0.4, 0.9], [0.2, 0.4, 0.9])
    assert (d.diff, d.ci_low, d.ci_high, d.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert paired_difference([1.0] * 40, [0.0] * 40).p_value == 0.0


# ---- matrix: monotone through the view and the run summary ------------------------------

_GAME_SCORES_SQL = """
SELECT run_id, shard_id, bucket, seed, provider, model, tier, mode, game_id, game_index,
       CAST(count(*) AS INTEGER) AS trials,
       CAST(count(*) FILTER (WHERE parse_status = 'ok') AS INTEGER) AS valid,
       avg(nash_gap) FILTER (WHERE parse_status = 'ok') AS mean_nash_gap,
       var_pop(nash_gap) FILTER (WHERE parse_status = 'ok') AS var_nash_gap,
       min(nash_gap) FILTER (WHERE parse_status = 'ok') AS min_nash_gap,
       max(nash_gap) FILTER (WHERE parse_status = 'ok') AS max_nash_gap,
       avg(llm_value) FILTER (WHERE parse_status = 'ok') AS mean_llm_value,
       avg(br_value) FILTER (WHERE parse_status = 'ok') AS mean_br_value,
       avg(abs(br_value)) FILTER (WHERE parse_status = 'ok') AS mean_abs_br_value,
       avg(exploitability) FILTER (WHERE parse_status = 'ok') AS mean_exploitability,
       avg(label_mass) AS mean_label_mass, bool_or(gap_degenerate) AS gap_degenerate
FROM trials GROUP BY ALL
"""


def _matrix_headlines(games: pa.Table, trials: pa.Table) -> tuple[dict, dict]:
    """(summary quality per group, the view's mean quality per group)."""
    con = duckdb.connect()
    _views(con, {"games": games, "trials": trials})
    con.register("_raw_game_scores", con.sql(_GAME_SCORES_SQL).to_arrow_table())
    con.execute("CREATE VIEW game_scores AS SELECT * FROM _raw_game_scores")
    summary = {(r["bucket"], r["mode"]): r for r in matrix_summary(con)}
    view = dict(((b, m), q) for b, m, q in con.execute(
        "select bucket, mode, avg(quality) from matrix_scored group by all").fetchall())
    con.close()
    return summary, view


def _matrix_case(case: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(case)
    bucket = ["2x2_lowVar_pure", "3x3_midVar_mixed", "3x3_midVar_any", "4x4_highVar_mixed",
              "2x3_midVar_any"][case % 5]
    modes = [("pure",), ("mixed",), ("pure", "mixed")][case % 3]
    spec = make_spec("dummy")
    config = MatrixRunConfig(buckets=(bucket,), seeds=(case,), num_games=int(rng.integers(2, 6)),
                             num_trials=int(rng.integers(1, 5)), modes=modes, llm=spec,
                             llm_seed=case)
    games, trials = [], []
    for shard in plan_matrix(config, "r"):
        tables = matrix_shard(shard, {spec: build_backend(spec)}).tables
        games.append(tables["games"][1])
        trials.append(tables["trials"][1])
    return pa.concat_tables(games), pa.concat_tables(trials)


def _with_statuses(trials: pa.Table, statuses: list[str]) -> pa.Table:
    i = trials.schema.get_field_index("parse_status")
    return trials.set_column(i, trials.schema.field(i), pa.array(statuses, pa.string()))


@pytest.mark.parametrize("case", range(30))
def test_matrix_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    games, trials = _matrix_case(case)
    rng = np.random.default_rng(1000 + case)
    statuses = trials["parse_status"].to_pylist()
    for i in range(len(statuses)):  # some invalid answers and failed calls to start with
        statuses[i] = rng.choice(["ok", "ok", "ok", "no_answer", "call_failed"])
    before, view = _matrix_headlines(games, _with_statuses(trials, statuses))
    for key, r in before.items():
        assert (r["quality"] is None) == (view.get(key) is None)
        if r["quality"] is not None:
            assert r["quality"] == pytest.approx(view[key], abs=1e-9)  # summary = view
    flips = 0
    while "ok" in statuses and flips < 4:
        i = int(rng.choice([k for k, s in enumerate(statuses) if s == "ok"]))
        statuses[i] = str(rng.choice(["no_answer", "out_of_range", "not_a_distribution"]))
        after, view_after = _matrix_headlines(games, _with_statuses(trials, statuses))
        for key, r in after.items():
            assert r["quality"] <= before[key]["quality"] + EPS, (key, statuses)
            assert view_after[key] <= view[key] + EPS
            assert r["answered_trials"] == before[key]["answered_trials"]  # still answered
        before, view, flips = after, view_after, flips + 1


def test_a_failed_call_is_left_out_not_scored():
    """Turning a valid answer into a failed call leaves the headline the mean of the others."""
    games, trials = _matrix_case(1)
    statuses = trials["parse_status"].to_pylist()
    statuses[0] = "call_failed"
    con = duckdb.connect()
    _views(con, {"games": games, "trials": _with_statuses(trials, statuses)})
    (q, n, missing), = con.execute("select avg(quality), count(quality), "
                                   "count(*) filter (where not answered) from matrix_scored"
                                   ).fetchall()
    others = con.execute("select quality from matrix_scored where answered").fetchall()
    assert missing == 1 and n == len(statuses) - 1
    assert q == pytest.approx(math.fsum(x for (x,) in others) / n)


# ---- negotiation -------------------------------------------------------------------------


def _negotiation_episodes(case: int) -> pa.Table:
    names = ["scripted:fair", "scripted:greedy", "scripted:random"]
    rng = np.random.default_rng(case)
    cfg = NegotiationRunConfig(seeds=(case,), num_games=int(rng.integers(3, 7)),
                               modes=(("semi", "coop", "comp")[case % 3],), langs=("en",),
                               player_a=names[case % 3], player_b=names[(case // 3) % 3],
                               llm_seed=case)
    return pa.concat_tables([negotiation_runner.run_shard(s, {}).tables["episodes"][1]
                             for s in plan_shards(cfg, "r")])


def _abort(episodes: pa.Table, i: int, reason: str) -> pa.Table:
    rows = episodes.to_pylist()
    rows[i].update(aborted=True, abort_reason=reason, abort_player="a", success=False,
                   lose=False, main_score=None, pareto_optimal=None, sum_score_ratio=None,
                   comp_score=None, score_a=0, score_b=0)
    return pa.Table.from_pylist(rows, schema=episodes.schema)


def _negotiation_headlines(episodes: pa.Table) -> dict:
    con = duckdb.connect()
    _views(con, {"episodes": episodes})
    out = {(r["player"], r["mode"]): r for r in negotiation_summary(con)}
    con.close()
    return out


@pytest.mark.parametrize("case", range(30))
def test_negotiation_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    episodes = _negotiation_episodes(case)
    rng = np.random.default_rng(2000 + case)
    if episodes.num_rows > 2 and rng.random() < 0.5:
        episodes = _abort(episodes, int(rng.integers(episodes.num_rows)), "call_failed")
    before = _negotiation_headlines(episodes)
    for _ in range(3):
        played = [i for i, a in enumerate(episodes["aborted"].to_pylist()) if not a]
        if not played:
            break
        episodes = _abort(episodes, int(rng.choice(played)),
                          str(rng.choice(["malformed", "unknown_item", "no_proposal"])))
        after = _negotiation_headlines(episodes)
        for key, r in after.items():
            assert r["quality"] <= before[key]["quality"] + EPS, key
            assert r["episodes"] == before[key]["episodes"]
        before = after


def test_a_negotiation_aborted_by_a_failed_call_is_missing_not_zero():
    episodes = _negotiation_episodes(0)
    full = _negotiation_headlines(episodes)
    failed = _negotiation_headlines(_abort(episodes, 0, "call_failed"))
    for key, r in failed.items():
        assert r["missing_episodes"] >= 1  # a seat per player in the episode (self-play: 2)
        assert r["episodes"] + r["missing_episodes"] == full[key]["episodes"]


# ---- fog ---------------------------------------------------------------------------------


def _fog_tables(case: int) -> tuple[pa.Table, pa.Table]:
    tiers = ["tier1", "tier2", "tier3"]
    cfg = FogRunConfig(pairings=((tiers[case % 3], tiers[(case // 3) % 3]),),
                       num_games=2, seeds=(case,), max_turns=10)
    games, reports = [], []
    for shard in plan_fog_shards(cfg, "r"):
        tables = fog_shard(shard, {}).tables
        games.append(tables["fog_games"][1])
        reports.append(tables["fog_reports"][1])
    return pa.concat_tables(games), pa.concat_tables(reports)


def _fog_headlines(games: pa.Table, reports: pa.Table) -> dict:
    con = duckdb.connect()
    _views(con, {"fog_games": games, "fog_reports": reports})
    out = {}
    for r in fog_summary(con):
        for seat in ("a", "b"):
            out[(r["agent_a"], r["agent_b"], r["scouting"], seat)] = r
    con.close()
    return out


def _set_status(reports: pa.Table, i: int, status: str) -> pa.Table:
    statuses = reports["report_status"].to_pylist()
    statuses[i] = status
    k = reports.schema.get_field_index("report_status")
    return reports.set_column(k, reports.schema.field(k), pa.array(statuses, pa.string()))


@pytest.mark.parametrize("case", range(12))
def test_fog_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    games, reports = _fog_tables(case)
    rng = np.random.default_rng(3000 + case)
    if rng.random() < 0.5:
        reports = _set_status(reports, int(rng.integers(reports.num_rows)), "call_failed")
    before = _fog_headlines(games, reports)
    for _ in range(4):
        ok = [i for i, s in enumerate(reports["report_status"].to_pylist()) if s == "ok"]
        reports = _set_status(reports, int(rng.choice(ok)),
                              str(rng.choice(["bad_orders", "no_json", "bad_beliefs"])))
        after = _fog_headlines(games, reports)
        for key, r in after.items():
            seat = key[-1]
            assert r[f"quality_{seat}"] <= before[key][f"quality_{seat}"] + EPS, key
            assert r[f"answered_{seat}"] == before[key][f"answered_{seat}"]
        before = after


# ---- compare: two runs of one random policy ----------------------------------------------


def _dummy_run(run_id: str, llm_seed: int, games: int = 40) -> dict[str, pa.Table]:
    spec = make_spec("dummy")
    config = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(7,), num_games=games,
                             num_trials=2, modes=("pure",), llm=spec, llm_seed=llm_seed)
    out: dict[str, list[pa.Table]] = {"games": [], "trials": []}
    backend = build_backend(spec)
    for shard in plan_matrix(config, run_id):
        tables = matrix_shard(shard, {spec: backend}).tables
        for name in out:
            out[name].append(tables[name][1])
    return {name: pa.concat_tables(parts) for name, parts in out.items()}


def test_two_runs_of_one_random_policy_do_not_differ_after_correction():
    """100 seeded repetitions of the dummy against itself with another sampling seed, on 40
    shared games: the real runner's tables, the real compare SQL and statistics (on the
    runs' views in memory, as ``compare_runs`` has them once the runs are open)."""
    (matrix,) = [f for f in FAMILIES if f.family == "matrix"]
    differ = 0
    for rep in range(100):
        a, b = _dummy_run("a", 2 * rep), _dummy_run("b", 2 * rep + 1)
        con = duckdb.connect()
        _views(con, {name: pa.concat_tables([a[name], b[name]]) for name in a})
        _, paired, _, present = compare_connection(con, [matrix])
        con.close()
        assert present == ["matrix"] and {r[2] for r in paired} == \
            {"quality", "valid_rate", "quality_of_valid", "exploitability", "nash_gap"}
        assert all(r[6] == 40 and r[-1] == "" for r in paired)  # 40 shared games, no warning
        differ += any(r[-2] != "no significant difference" for r in paired)
    assert differ <= 10, differ
