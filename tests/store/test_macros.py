"""The SQL macros every run connection has: the Wilson interval of the queries is the one of
``report.stats.wilson_interval``."""

from __future__ import annotations

import duckdb
import pytest

from distbench.report.stats import wilson_interval
from distbench.store.schema import MACROS

CASES = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (2.5, 7), (0.5, 1), (99, 100), (1, 1000),
         (500, 1000), (12345.5, 20000)]


def test_the_wilson_macros_are_the_wilson_interval():
    con = duckdb.connect()
    for name, body in MACROS.items():
        con.execute(f"CREATE MACRO {name} AS {body}")
    for successes, n in CASES:
        low, high = con.execute("select wilson_low(?::DOUBLE, ?::BIGINT), "
                                "wilson_high(?::DOUBLE, ?::BIGINT)",
                                [successes, n, successes, n]).fetchone()
        expected = wilson_interval(successes, n)
        assert (low, high) == pytest.approx(expected, rel=1e-14, abs=1e-15), (successes, n)
        assert 0.0 <= low <= successes / n <= high <= 1.0


def test_a_runs_connection_has_them(tmp_path):
    from distbench.engine.driver import run_config
    from distbench.games.matrix.plan import MatrixRunConfig
    from distbench.llm.registry import make_spec
    from distbench.store.catalog import open_run

    config = MatrixRunConfig(buckets=("2x2_lowVar_pure",), seeds=(1,), num_games=3,
                             num_trials=4, modes=("pure",), llm=make_spec("dummy"))
    out = run_config(config, tmp_path / "r", parallel=False)
    con = open_run(out.run_dir, safe=True)
    low, high = con.execute("select wilson_low(count(*) filter (where parse_status = 'ok'), "
                            "count(*)), wilson_high(1, 2) from trials").fetchone()
    assert low == pytest.approx(wilson_interval(12, 12)[0])
    assert high == pytest.approx(wilson_interval(1, 2)[1])


def test_the_share_macros_are_the_averaged_indicator_they_replace():
    """``share(c)`` and ``share_among(c, among)`` give what the queries wrote out before:
    ``avg(CASE WHEN c THEN 1.0 ELSE 0.0 END)`` (NULL counts as not), over the ``among`` rows."""
    con = duckdb.connect()
    for name, body in MACROS.items():
        con.execute(f"CREATE MACRO {name} AS {body}")
    con.execute("CREATE TABLE t AS SELECT i % 3 AS g, CASE WHEN i % 7 = 0 THEN NULL "
                "ELSE i % 2 = 0 END AS c, i % 5 <> 0 AS among FROM range(40) r(i)")
    got = con.execute("SELECT g, share(c), share_among(c, among) FROM t GROUP BY g "
                      "ORDER BY g").fetchall()
    written = con.execute("SELECT g, avg(CASE WHEN c THEN 1.0 ELSE 0.0 END), "
                          "avg(CASE WHEN c THEN 1.0 ELSE 0.0 END) FILTER (WHERE among) "
                          "FROM t GROUP BY g ORDER BY g").fetchall()
    assert got == written
    assert {type(v) for row in got for v in row[1:]} == {float}
