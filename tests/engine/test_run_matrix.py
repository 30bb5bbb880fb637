"""End to end through the driver: real Ray, real Parquet, real DuckDB."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.engine.driver import RunConfigMismatch, run_matrix
from distbench.engine.plan import MatrixRunConfig
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
    par = run_matrix(cfg, tmp_path / "par", parallel=True, num_workers=2, command=["t"])
    ser = run_matrix(cfg, tmp_path / "ser", parallel=False, command=["t"])
    assert par.shards > 1 and par.executed == par.shards
    con = open_run(par.run_dir)
    assert con.execute("select count(*) from trials").fetchone()[0] == 12 * 5 * 2
    assert con.execute("select count(distinct trial_id) from trials").fetchone()[0] == 120
    assert con.execute("select count(*) from games").fetchone()[0] == 12
    assert _rows(par.run_dir) == _rows(ser.run_dir)
    assert _rows(par.run_dir, "games") == _rows(ser.run_dir, "games")
    assert par.summary == ser.summary


def test_scores_in_the_table_agree_with_the_games(tmp_path):
    out = run_matrix(_config(), tmp_path / "r", parallel=False)
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
    first = run_matrix(_config(), tmp_path / "r", parallel=False)
    again = run_matrix(_config(), tmp_path / "r", parallel=False)
    assert again.executed == 0 and again.skipped == first.shards
    con = open_run(tmp_path / "r")
    assert con.execute("select count(*) from trials").fetchone()[0] == 120


def test_a_different_config_in_the_same_folder_is_refused(tmp_path):
    run_matrix(_config(), tmp_path / "r", parallel=False)
    with pytest.raises(RunConfigMismatch, match="--overwrite"):
        run_matrix(_config(num_trials=6), tmp_path / "r", parallel=False)


def test_llm_seed_changes_answers_not_games(tmp_path):
    a = run_matrix(_config(), tmp_path / "a", parallel=False)
    b = run_matrix(_config(llm_seed=1), tmp_path / "b", parallel=False)
    assert _rows(a.run_dir, "games") == _rows(b.run_dir, "games")
    assert _rows(a.run_dir) != _rows(b.run_dir)
