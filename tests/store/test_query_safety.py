"""`distbench query` reads the run's committed files and nothing else."""

from __future__ import annotations

import pytest

from distbench.cli.errors import UserError
from distbench.cli.query import run_sql
from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("q") / "r"
    cfg = MatrixRunConfig(buckets=("2x2_lowVar_mixed",), seeds=(1,), num_games=3, num_trials=2,
                          modes=("pure",), llm=make_spec("dummy"))
    run_config(cfg, out, parallel=False)
    return out


def test_queries_over_the_run_work(run_dir):
    assert run_sql(run_dir, "select count(*) from trials")[1] == [(6,)]
    assert run_sql(run_dir, "select count(*) from games g join trials t using (game_id)")[1] == [(6,)]


@pytest.mark.parametrize(
    "sql",
    [
        "select * from read_csv('/etc/passwd')",
        "select * from read_text('/etc/passwd')",
        "select * from glob('/etc/*')",
        "copy (select 1) to '/tmp/distbench-evil.csv'",
        "copy trials to '{run}/evil.parquet'",
        "attach '/tmp/distbench-evil.db' as evil",
        "install httpfs",
        "load httpfs",
        "set enable_external_access = true",
        "reset enable_external_access",
        "set lock_configuration = false",
        "set allowed_directories = ['/']",
        "select * from read_parquet('{run}/manifest.json')",
    ],
)
def test_escapes_are_refused(run_dir, sql):
    with pytest.raises(UserError, match="query failed"):
        run_sql(run_dir, sql.format(run=run_dir))
    assert not (run_dir / "evil.parquet").exists()


def test_a_runaway_query_stops_at_the_timeout(run_dir):
    import time

    started = time.monotonic()
    with pytest.raises(UserError, match="--timeout"):
        run_sql(run_dir, "select count(*) from range(100000000000) a", timeout=0.5)
    assert time.monotonic() - started < 10
