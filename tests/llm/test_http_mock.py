"""The real HTTP client against the real mock server over loopback, through the engine."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.http import AuthenticationFailed
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def _config(url: str, *, modes=("pure",), games=10, trials=4, style="chat", **opts) -> MatrixRunConfig:
    # One request per trial (max_n=1): these tests count requests, retries and faults per
    # trial; several samples per request are tested in test_samples.py.
    base = dict(base_url=url, rpm=None, max_concurrency=8, timeout=10.0, max_retries=8,
                cache=False, max_n=1)
    base.update(opts)
    return MatrixRunConfig(
        buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=games, num_trials=trials,
        modes=modes, llm=make_spec("llamacpp", "mock", style, **base), shard_trials=20,
    )


def _count(run_dir: Path, sql: str):
    return open_run(run_dir).execute(sql).fetchall()


def test_20_percent_429_loses_no_trial_and_never_retries_early(tmp_path, ray_session):
    with start_server(ServerConfig(fail_429=0.2, retry_after=1.0, seed=3)) as server:
        out = run_config(_config(server.url), tmp_path / "r", parallel=True, num_workers=2)
        stats = server.stats()
    run = out.run_dir
    assert _count(run, "select count(*), count(*) filter (where parse_status = 'ok') from trials") == [(40, 40)]
    calls = _count(run, "select attempts, queue_ms, status, http_status from calls")
    assert len(calls) == 40 and all(s == "ok" and h == 200 for _, _, s, h in calls)
    retried = [(a, ms) for a, ms, _, _ in calls if a > 1]
    assert retried, "the server should have answered some calls with 429"
    # Every retry waited for the announced Retry-After (1 s) at least: time in the queue, not
    # on the wire (latency_ms is the last attempt's, a fast answer from the mock).
    assert all(ms >= 1000.0 * (a - 1) for a, ms in retried)
    wire = _count(run, "select max(latency_ms) from calls where attempts > 1")[0][0]
    assert wire < 1000.0
    total_attempts = sum(a for a, _, _, _ in calls)
    assert stats["requests"] >= total_attempts
    assert sum(a - 1 for a, _, _, _ in calls) == stats["faults"].get("fail_429", 0)


def test_always_500_makes_exactly_the_configured_attempts_then_failed_rows(tmp_path):
    with start_server(ServerConfig(fail_500=1.0)) as server:
        out = run_config(_config(server.url, games=3, trials=2, max_retries=2), tmp_path / "r",
                         parallel=False)
        stats = server.stats()
    run = out.run_dir
    assert _count(run, "select distinct parse_status from trials") == [("call_failed",)]
    assert _count(run, "select distinct attempts, status, http_status from calls") == [(3, "failed", 500)]
    assert _count(run, "select count(*) from trials") == [(6,)]
    posts = sum(v for k, v in stats["by_path"].items() if k.startswith("/v1/chat"))
    assert posts == 6 * 3


def test_401_stops_the_run_before_work_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("LLAMACPP_API_KEY", "canary-wrong-key-0001")
    with start_server(ServerConfig(api_key="the-right-key")) as server:
        with pytest.raises(AuthenticationFailed) as info:
            run_config(_config(server.url), tmp_path / "r", parallel=False)
        stats = server.stats()
    message = str(info.value)
    assert "401" in message and "LLAMACPP_API_KEY" in message
    assert "canary" not in message and "the-right-key" not in message
    assert stats["requests"] <= 3


def test_401_in_the_middle_of_a_run_stops_it_within_a_few_calls(tmp_path, monkeypatch):
    # The key is accepted by the pre-flight check, then revoked: the run must stop quickly.
    monkeypatch.setenv("LLAMACPP_API_KEY", "canary-key-0002")
    with start_server(ServerConfig(api_key="canary-key-0002")) as server:
        from distbench.engine import driver

        real = driver.preflight
        monkeypatch.setattr(driver, "preflight", lambda spec, styles=(): None)
        monkeypatch.setenv("LLAMACPP_API_KEY", "canary-revoked-0003")
        with pytest.raises(AuthenticationFailed):
            run_config(_config(server.url, games=20, trials=5, max_concurrency=4),
                       tmp_path / "r", parallel=False)
        monkeypatch.setattr(driver, "preflight", real)
        assert server.stats()["requests"] <= 4
    assert _count(tmp_path / "r", "select count(*) from trials") == [(0,)]


def test_a_hanging_server_fails_each_call_at_its_timeout(tmp_path):
    with start_server(ServerConfig(hang=1.0, hang_seconds=30)) as server:
        out = run_config(_config(server.url, games=2, trials=2, timeout=1.0, max_retries=0),
                         tmp_path / "r", parallel=False)
    rows = _count(out.run_dir, "select status, error, latency_ms from calls")
    assert len(rows) == 4
    for status, error, ms in rows:
        assert status == "failed" and "timeout" in error
        assert 900 <= ms < 5000


def test_garbage_truncated_and_html_answers_become_statuses_not_crashes(tmp_path):
    cfg = ServerConfig(garbage=0.5, truncate=0.1, non_json=0.1, seed=1)
    with start_server(cfg) as server:
        out = run_config(_config(server.url, modes=("pure", "mixed"), games=10, trials=5,
                                 max_retries=1), tmp_path / "r", parallel=False)
    statuses = dict(_count(out.run_dir, "select parse_status, count(*) from trials group by all"))
    assert sum(statuses.values()) == 100
    assert statuses.get("ok", 0) > 0
    assert set(statuses) - {"ok"}, "garbage answers must show up as parse statuses"
    raw = _count(out.run_dir, "select count(*) from trials where parse_status not in ('ok', 'call_failed') and raw_text is null")
    assert raw == [(0,)]


def test_logprob_mode_makes_one_call_per_game_and_reads_a_distribution(tmp_path):
    with start_server(ServerConfig()) as server:
        out = run_config(_config(server.url, modes=("logprob", "mixed"), games=6, trials=5,
                                 style="completion"), tmp_path / "r", parallel=False)
        stats = server.stats()
    rows = _count(out.run_dir, "select strategy, label_mass, parse_status from trials where mode = 'logprob'")
    assert len(rows) == 6
    for strategy, mass, status in rows:
        assert status == "ok" and abs(sum(strategy) - 1) < 1e-9 and 0.5 < mass <= 1.0 + 1e-9
    assert stats["by_path"]["/v1/completions"] == 6 + 6 * 5


def test_a_rerun_is_answered_from_the_cache(tmp_path):
    with start_server(ServerConfig()) as server:
        cfg = _config(server.url, games=4, trials=3, cache=True)
        run_config(cfg, tmp_path / "a", parallel=False)
        first = server.stats()["requests"]
        run_config(cfg, tmp_path / "b", parallel=False)
        assert server.stats()["requests"] == first + 1  # the pre-flight check only
    hits = _count(tmp_path / "b", "select bool_and(cache_hit), sum(attempts) from calls")
    assert hits == [(True, 0)]
    a = _count(tmp_path / "a", "select trial_id, raw_text from trials order by trial_id")
    b = _count(tmp_path / "b", "select trial_id, raw_text from trials order by trial_id")
    assert a == b


def test_a_canary_key_reaches_no_file_log_or_exception(tmp_path, monkeypatch, caplog):
    canary = "canary-sk-3f9a1c7e5b2d"
    monkeypatch.setenv("LLAMACPP_API_KEY", canary)
    caplog.set_level(logging.DEBUG)
    errors = []
    with start_server(ServerConfig(api_key=canary, fail_500=0.3, garbage=0.2, seed=5)) as server:
        run_config(_config(server.url, games=5, trials=4, max_retries=1, cache=True),
                   tmp_path / "r", parallel=False)
    with start_server(ServerConfig(api_key="other")) as server:
        try:
            run_config(_config(server.url), tmp_path / "r2", parallel=False)
        except AuthenticationFailed as exc:
            errors.append(repr(exc) + str(exc))
    assert errors
    for path in list(tmp_path.rglob("*")):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path
    # The session's response cache is read by another process (grep): opening and closing an
    # SQLite file in a process that holds a connection to it drops that process's locks on it
    # (https://sqlite.org/howtocorrupt.html, section 2.2), which corrupted the cache for the
    # rest of a CI run.
    import os
    import subprocess

    cache_dir = Path(os.environ["DISTBENCH_CACHE_DIR"])
    found = subprocess.run(["grep", "-rlF", canary, str(cache_dir)], capture_output=True,
                           text=True)
    assert found.returncode == 1 and not found.stdout, found.stdout + found.stderr
    assert canary not in caplog.text
    assert all(canary not in e for e in errors)
