"""End to end through the driver: real Ray, real Parquet, real DuckDB."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.engine.driver import RunConfigMismatch, run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run
from distbench.store.schema import TIMING_COLUMNS


def _config(**kw) -> MatrixRunConfig:
    base = dict(buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=12, num_trials=5,
                modes=("pure", "mixed"), llm=make_spec("dummy"), shard_trials=40)
    base.update(kw)
    return MatrixRunConfig(**base)


def _rows(run_dir, table="trials"):
    con = open_run(run_dir)
    cols = [d[0] for d in con.execute(f"select * from {table} limit 0").description]
    keep = [c for c in cols if c not in TIMING_COLUMNS and c != "run_id"]
    order = "bucket, seed, game_index" + (", mode, trial" if table == "trials" else "")
    return con.execute(f"select {', '.join(keep)} from {table} order by {order}").fetchall()


def test_ray_run_writes_every_trial_once_and_matches_a_serial_run(tmp_path, ray_session):
    cfg = _config()
    par = run_config(cfg, tmp_path / "par", parallel=True, num_workers=2, command=["t"])
    ser = run_config(cfg, tmp_path / "ser", parallel=False, command=["t"])
    assert par.shards > 1 and par.executed == par.shards
    con = open_run(par.run_dir)
    assert con.execute("select count(*) from trials").fetchone()[0] == 12 * 5 * 2
    assert con.execute("select count(distinct trial_id) from trials").fetchone()[0] == 120
    assert con.execute("select count(*) from games").fetchone()[0] == 12
    assert _rows(par.run_dir) == _rows(ser.run_dir)
    assert _rows(par.run_dir, "games") == _rows(ser.run_dir, "games")
    assert par.summary == ser.summary


def test_scores_in_the_table_agree_with_the_games(tmp_path):
    out = run_config(_config(), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    rows = con.execute(
        """select g.payoff, g.nash_col, g.value, t.decision, t.strategy, t.llm_value,
                  t.br_value, t.nash_gap, t.exploitability
           from trials t join games g using (game_id) where t.parse_status = 'ok'"""
    ).fetchall()
    assert len(rows) == 120
    for payoff, col, value, decision, strategy, llm, br, gap, expl in rows:
        u, y = np.array(payoff), np.array(col)
        x = np.eye(u.shape[0])[decision] if decision is not None else np.array(strategy)
        assert llm == pytest.approx(x @ u @ y, abs=1e-9)
        assert br == pytest.approx((u @ y).max(), abs=1e-9)
        assert gap == pytest.approx(br - llm, abs=1e-9) and gap >= 0
        assert expl == pytest.approx(value - (x @ u).min(), abs=1e-9) and expl >= -1e-12


def test_rerunning_a_run_skips_committed_shards(tmp_path):
    first = run_config(_config(), tmp_path / "r", parallel=False)
    again = run_config(_config(), tmp_path / "r", parallel=False)
    assert again.executed == 0 and again.skipped == first.shards
    con = open_run(tmp_path / "r")
    assert con.execute("select count(*) from trials").fetchone()[0] == 120


def test_a_different_config_in_the_same_folder_is_refused(tmp_path):
    run_config(_config(), tmp_path / "r", parallel=False)
    with pytest.raises(RunConfigMismatch, match="--overwrite"):
        run_config(_config(num_trials=6), tmp_path / "r", parallel=False)


def test_llm_seed_changes_answers_not_games(tmp_path):
    a = run_config(_config(), tmp_path / "a", parallel=False)
    b = run_config(_config(llm_seed=1), tmp_path / "b", parallel=False)
    assert _rows(a.run_dir, "games") == _rows(b.run_dir, "games")
    assert _rows(a.run_dir) != _rows(b.run_dir)


def test_the_dummy_array_fast_path_gives_the_rows_of_the_text_path(tmp_path):
    # The benchmarks' fast path answers as arrays; every scored column must agree with the
    # text path (pure and mixed in one shard), only the raw text and calls may differ.
    cfg = _config(num_games=9, num_trials=4)
    text = run_config(cfg, tmp_path / "text", parallel=False, command=["t"])
    fast_cfg = _config(num_games=9, num_trials=4, llm=make_spec("dummy", fast=True))
    fast = run_config(fast_cfg, tmp_path / "fast", parallel=False, command=["t"])
    cols = ("game_id, mode, trial, trial_id, decision, strategy, parse_status, llm_value, "
            "br_value, nash_gap, exploitability")
    query = f"select {cols} from trials order by game_id, mode, trial"
    text_rows = open_run(text.run_dir).execute(query).fetchall()
    fast_rows = open_run(fast.run_dir).execute(query).fetchall()
    assert len(fast_rows) == 9 * 4 * 2
    for a, b in zip(text_rows, fast_rows, strict=True):
        if a[1] == "pure":
            assert a == b
        else:  # the text carries the strategy rounded to a few decimals
            assert a[:5] + a[6:7] == b[:5] + b[6:7]
            assert a[5] == pytest.approx(b[5], abs=1e-3)
            assert a[7:] == pytest.approx(b[7:], abs=0.05)
    raw = open_run(fast.run_dir).execute(
        "select raw_text from trials where mode = 'pure' limit 1").fetchone()[0]
    assert raw.startswith("Action: ")


def test_trial_id_is_computed_by_the_view_and_not_stored(tmp_path):
    import pyarrow.parquet as pq

    out = run_config(_config(num_games=3, num_trials=2), tmp_path / "r", parallel=False,
                     command=["t"])
    con = open_run(out.run_dir)
    ids = con.execute("select trial_id, game_id, mode, trial from trials").fetchall()
    assert all(tid == f"{g}/{m}/t{t}" for tid, g, m, t in ids)
    assert len({tid for tid, *_ in ids}) == len(ids)
    stored = next((out.run_dir / "trials").glob("*.parquet"))
    assert "trial_id" not in pq.read_schema(stored).names


def test_the_matrix_summary_is_the_same_on_any_number_of_threads(tmp_path):
    from distbench.games.matrix.summary import matrix_summary

    out = run_config(_config(num_games=40, num_trials=7, shard_trials=60), tmp_path / "r",
                     parallel=False, command=["t"])
    results = []
    for threads in (1, 2, 4):
        con = open_run(out.run_dir, threads=threads)
        results.append(matrix_summary(con))
    assert results[0] == results[1] == results[2]
    # and equal to the plain numpy computation of the same statistics
    con = open_run(out.run_dir)
    for record in results[0]:
        gaps = np.array([r[0] for r in con.execute(
            "select nash_gap from trials where mode = ? and parse_status = 'ok'",
            [record["mode"]]).fetchall()])
        assert record["mean_nash_gap"] == pytest.approx(gaps.mean(), rel=1e-12)
        assert record["std_nash_gap"] == pytest.approx(gaps.std(), rel=1e-9)
        assert record["median_nash_gap"] == pytest.approx(np.median(gaps), rel=1e-12)


def test_game_scores_hold_the_statistics_of_each_games_valid_trials(tmp_path):
    out = run_config(_config(num_games=10, num_trials=6), tmp_path / "r", parallel=False,
                     command=["t"])
    con = open_run(out.run_dir)
    expected = con.execute("""
        select shard_id, mode, game_id, count(*), count(*) filter (where parse_status = 'ok'),
               avg(nash_gap) filter (where parse_status = 'ok'),
               var_pop(nash_gap) filter (where parse_status = 'ok'),
               min(nash_gap) filter (where parse_status = 'ok'),
               max(nash_gap) filter (where parse_status = 'ok'),
               avg(exploitability) filter (where parse_status = 'ok'),
               avg(abs(br_value)) filter (where parse_status = 'ok')
        from trials group by all order by all""").fetchall()
    got = con.execute("""
        select shard_id, mode, game_id, trials, valid, mean_nash_gap, var_nash_gap,
               min_nash_gap, max_nash_gap, mean_exploitability, mean_abs_br_value
        from game_scores order by all""").fetchall()
    assert len(got) == 10 * 2
    for e, g in zip(expected, got, strict=True):
        assert g[:5] == e[:5]
        assert g[5:] == pytest.approx(e[5:], rel=1e-9, abs=1e-12)
