"""Matrix runs against the real bundled model: in process, through Ray's endpoint actor, and
over HTTP through ``distbench serve local``."""

from __future__ import annotations

import numpy as np
import pytest
from cli_server import start_cli_server, stop_cli_server
from test_local import INSTALL_HINT

from distbench.engine.driver import run_config
from distbench.games.answers.parse import ParseStatus
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.local import local_available
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

pytestmark = pytest.mark.skipif(
    not local_available(), reason=f"the bundled model is not installed: {INSTALL_HINT}"
)

STATUSES = {s.value for s in ParseStatus} - {"call_failed"}


def _config(spec, modes=("pure", "logprob")) -> MatrixRunConfig:
    return MatrixRunConfig(buckets=("2x2_lowVar_mixed",), seeds=(7,), num_games=2, num_trials=2,
                           modes=modes, llm=spec, max_tokens=8)


def _check(run_dir, expected_trials: int) -> None:
    con = open_run(run_dir)
    rows = con.execute("select mode, parse_status, raw_text, strategy, label_mass, call_id "
                       "from trials").fetchall()
    assert len(rows) == expected_trials
    for mode, status, raw, strategy, mass, call_id in rows:
        assert status in STATUSES and raw is not None and call_id is not None
        if mode == "logprob" and status == "ok":
            assert abs(sum(strategy) - 1) < 1e-9 and 0 < mass <= 1 + 1e-9
    # One first call per trial, or per request of several samples (``samples`` trials);
    # logprob readings may follow white space with more calls ('<call id>.<n>').
    calls = con.execute("select sum(samples) filter (where call_id not like '%.%'), count(*), "
                        "bool_and(status = 'ok'), sum(completion_tokens) from calls").fetchone()
    assert calls[0] == expected_trials and calls[1] >= calls[0] / 2
    assert calls[2] and calls[3] > 0
    joined = con.execute("select count(*) from trials join calls using (call_id)").fetchone()[0]
    assert joined == expected_trials


def test_in_process_local_model_plays_pure_and_logprob(tmp_path):
    out = run_config(_config(make_spec("local", cache=False)), tmp_path / "r", parallel=False)
    _check(out.run_dir, 2 * 2 + 2)
    # The logprob strategies come from the real model: they are not all the same.
    con = open_run(out.run_dir)
    strategies = [s for (s,) in con.execute(
        "select strategy from trials where mode = 'logprob' and strategy is not null").fetchall()]
    assert strategies and all(len(s) == 2 for s in strategies)


def test_local_model_through_the_ray_endpoint_actor_is_deterministic(tmp_path, ray_session):
    spec = make_spec("local", cache=False)
    a = run_config(_config(spec, modes=("pure",)), tmp_path / "a", parallel=True, num_workers=2)
    b = run_config(_config(spec, modes=("pure",)), tmp_path / "b", parallel=False)
    _check(a.run_dir, 4)
    q = "select trial_id, raw_text, parse_status from trials order by trial_id"
    assert open_run(a.run_dir).execute(q).fetchall() == open_run(b.run_dir).execute(q).fetchall()


def test_serve_local_over_http_plays_a_matrix_run(tmp_path):
    proc, url = start_cli_server("local", "--port", "0", timeout=120)
    try:
        spec = make_spec("llamacpp", "smollm2", "completion", base_url=url, cache=False)
        out = run_config(_config(spec), tmp_path / "r", parallel=False)
    finally:
        code, _ = stop_cli_server(proc)
    assert code == 0
    _check(out.run_dir, 2 * 2 + 2)
    endpoints = open_run(out.run_dir).execute("select distinct endpoint from calls").fetchall()
    assert endpoints == [(f"llamacpp:{url}",)]
    masses = np.array([m for (m,) in open_run(out.run_dir).execute(
        "select label_mass from trials where mode = 'logprob'").fetchall()])
    assert (masses > 0).all()
