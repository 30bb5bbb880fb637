"""Several samples per request (OpenAI's ``n``): the mock server's ``n``, the matrix runner's
requests of several samples, the fallback to one request per trial (detected once per
endpoint), the calls rows, and the response cache and resume."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import httpx
import pytest

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.games.matrix.runner import sample_chunks
from distbench.llm.base import Request
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.answerers import MockAnswerer, sample_seed
from distbench.store.catalog import open_run

PROMPT_BODY = {"model": "mock", "max_tokens": 8, "seed": 7,
               "messages": [{"role": "user", "content": "Choose one of your 3 actions."}]}


def _config(url: str, *, max_n: int, games=5, trials=20, cache_path=None,
            modes=("pure",)) -> MatrixRunConfig:
    options = dict(base_url=url, rpm=None, max_concurrency=8, timeout=10.0, max_retries=3,
                   max_n=max_n)
    options.update(cache=False) if cache_path is None else options.update(cache_path=str(cache_path))
    return MatrixRunConfig(
        buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=games, num_trials=trials,
        modes=modes, llm=make_spec("llamacpp", "mock", "chat", **options), shard_trials=40)


def _posts(server) -> int:
    """Chat requests the server received (not /v1/models)."""
    return server.stats()["by_path"].get("/v1/chat/completions", 0)


def _rows(run: Path, sql: str):
    return open_run(run).execute(sql).fetchall()


# A cached answer differs from the fresh one in how it was fetched only (attempts, HTTP status).
TRIALS = ("select * exclude (latency_ms) from trials order by mode, game_index, trial")
CALLS = ("select * exclude (latency_ms, queue_ms, cache_hit, attempts, http_status) from calls "
         "order by call_id")


def test_mock_server_answers_n_choices_each_as_its_sample_seed():
    with start_server(ServerConfig()) as server:
        one = httpx.post(f"{server.url}/v1/chat/completions", json=PROMPT_BODY).json()
        many = httpx.post(f"{server.url}/v1/chat/completions", json={**PROMPT_BODY, "n": 4}).json()
    texts = [c["message"]["content"] for c in many["choices"]]
    assert [c["index"] for c in many["choices"]] == [0, 1, 2, 3]
    assert texts[0] == one["choices"][0]["message"]["content"]
    answerer = MockAnswerer()
    prompt = PROMPT_BODY["messages"][0]["content"]
    assert texts == [answerer.answer_text(prompt, sample_seed(7, i), completion=False)
                     for i in range(4)]
    assert many["usage"]["prompt_tokens"] == one["usage"]["prompt_tokens"]  # billed once


@pytest.mark.parametrize("mode, status, choices", [("ignore", 200, 1), ("reject", 400, None)])
def test_mock_server_without_n_ignores_or_rejects_it(mode, status, choices):
    with start_server(ServerConfig(n_mode=mode)) as server:
        resp = httpx.post(f"{server.url}/v1/chat/completions", json={**PROMPT_BODY, "n": 4})
    assert resp.status_code == status
    if choices is None:
        assert "Only one completion choice" in resp.json()["error"]["message"]
    else:
        assert len(resp.json()["choices"]) == choices


def test_sample_chunks_are_balanced_and_cover_every_trial():
    assert sample_chunks(5, 1) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    assert sample_chunks(20, 128) == [(0, 20)]
    assert sample_chunks(100, 32) == [(0, 25), (25, 50), (50, 75), (75, 100)]
    assert sample_chunks(1, 32) == [(0, 1)]


def test_request_split_gives_each_sample_its_trial_seed():
    req = Request(prompt="p", seed=11, samples=(11, 12, 13))
    assert req.n == 3 and [r.seed for r in req.split()] == [11, 12, 13]
    assert all(r.samples is None and r.n == 1 for r in req.split())


def test_n_requests_cut_requests_and_billed_prompts_keeping_rows_shape(tmp_path):
    with start_server(ServerConfig()) as server:
        one = run_config(_config(server.url, max_n=1), tmp_path / "one", parallel=False)
        per_trial = _posts(server)
        server.reset_stats()
        many = run_config(_config(server.url, max_n=128), tmp_path / "many", parallel=False)
        sampled = _posts(server)
    trials = 5 * 20
    assert per_trial == trials and sampled == 5  # one request per game: 0.05 per trial
    shape = "select count(*), count(distinct call_id), count(*) filter (where parse_status = 'ok') from trials"
    assert _rows(one.run_dir, shape) == [(trials, trials, trials)]
    assert _rows(many.run_dir, shape) == [(trials, 5, trials)]
    schema_one = open_run(one.run_dir).execute("select * from trials limit 0").description
    schema_many = open_run(many.run_dir).execute("select * from trials limit 0").description
    assert schema_one == schema_many
    calls = _rows(many.run_dir, "select samples, status, trial_id, call_id from calls order by call_id")
    assert [c[0] for c in calls] == [20] * 5 and all(c[1] == "ok" for c in calls)
    # a request's call id is its first trial's (trial k of the shard: <shard>/pure/<k>)
    assert all(c[2].endswith("/pure/t0") and int(c[3].rsplit("/", 1)[1]) % 20 == 0
               for c in calls)
    billed = [_rows(r.run_dir, "select sum(prompt_tokens) from calls")[0][0] for r in (one, many)]
    assert billed[1] <= 0.1 * billed[0]
    # every trial names the call that answered it, and its text is in that call's answer
    joined = _rows(many.run_dir, "select count(*) from trials t join calls c using (call_id) "
                                 "where contains(c.response_text, t.raw_text)")
    assert joined == [(trials,)]


@pytest.mark.parametrize("n_mode", ["ignore", "reject"])
def test_endpoint_without_n_falls_back_once_to_the_rows_of_one_request_per_trial(tmp_path, n_mode):
    with start_server(ServerConfig()) as plain:
        one = run_config(_config(plain.url, max_n=1), tmp_path / "one", parallel=False)
    with start_server(ServerConfig(n_mode=n_mode)) as server:
        fallback = run_config(_config(server.url, max_n=128), tmp_path / "fb", parallel=False)
        posts = _posts(server)
    assert posts == 1 + 100  # one probe, then one request per trial
    # the same rows but for the names a run's identity and its server's URL decide
    trials = TRIALS.replace("* exclude (", "* exclude (run_id, shard_id, call_id, ")
    calls = CALLS.replace("* exclude (", "* exclude (run_id, shard_id, call_id, endpoint, "
                                         "request_hash, ").replace("order by call_id",
                                                                   "order by trial_id")
    assert _rows(fallback.run_dir, trials) == _rows(one.run_dir, trials)
    assert _rows(fallback.run_dir, calls) == _rows(one.run_dir, calls)
    assert _rows(fallback.run_dir, "select distinct samples from calls") == [(1,)]


@pytest.mark.parametrize("n_mode", ["serve", "ignore"])
def test_cache_and_resume_give_identical_rows(tmp_path, n_mode):
    cache = tmp_path / "cache.sqlite"
    with start_server(ServerConfig(n_mode=n_mode)) as server:
        config = _config(server.url, max_n=8, cache_path=cache, games=4, trials=20,
                         modes=("pure", "mixed"))
        first = run_config(config, tmp_path / "a", parallel=False)
        before = _posts(server)
        trials_a, calls_a = _rows(first.run_dir, TRIALS), _rows(first.run_dir, CALLS)
        again = run_config(config, tmp_path / "b", parallel=False)
        assert _posts(server) == before  # every answer from the cache
        # resume: forget one shard of the first run, run it again into the same folder
        commits = sorted((first.run_dir / "_commits").glob("*.json"))
        commits[0].unlink()
        for table in ("trials", "calls", "game_scores"):
            for path in (first.run_dir / table).glob(f"{commits[0].stem}*"):
                path.unlink() if path.is_file() else shutil.rmtree(path)
        resumed = run_config(config, first.run_dir, parallel=False)
        assert _posts(server) == before
    assert resumed.executed == 1
    assert _rows(resumed.run_dir, TRIALS) == trials_a
    assert _rows(resumed.run_dir, CALLS) == calls_a
    other_run = "* exclude (run_id, "
    assert (_rows(again.run_dir, TRIALS.replace("* exclude (", other_run))
            == _rows(first.run_dir, TRIALS.replace("* exclude (", other_run)))
    assert _rows(again.run_dir, "select bool_and(cache_hit) from calls") == [(True,)]
    assert _rows(again.run_dir, "select max(samples) from calls")[0][0] == (
        1 if n_mode == "ignore" else 7)  # 20 trials in chunks of at most 8: 7, 7, 6


def test_a_priced_runs_spend_counts_the_n_probe_though_it_has_no_calls_row(tmp_path):
    """Issue 33: the request that found the endpoint not to take ``n`` is paid; its tokens
    are in the summary's totals and cost and in the budget's spend, not in a calls row."""
    import json

    from distbench.engine.budget import Budget
    from distbench.llm.base import cost_usd

    with start_server(ServerConfig(n_mode="ignore")) as server:
        config = _config(server.url, max_n=128)
        spec = make_spec("llamacpp", "mock", "chat", price_in=2.0, price_out=8.0,
                         **dict(config.llm.options))
        config = dataclasses.replace(config, llm=spec)
        budget = Budget(max_cost=100.0, max_tokens=10**9, specs=[spec])
        out = run_config(config, tmp_path / "p", parallel=False, budget=budget)
        assert _posts(server) == 1 + 100
    rows = _rows(out.run_dir, "select count(*), sum(prompt_tokens), sum(completion_tokens) "
                              "from calls")[0]
    assert rows[0] == 100  # one row per trial, none for the probe
    calls = json.loads((out.run_dir / "summary.json").read_text())["calls"]
    assert calls["probe_requests"] == 1 and calls["calls"] == 100
    probe_prompt = calls["prompt_tokens"] - rows[1]
    probe_completion = calls["completion_tokens"] - rows[2]
    assert probe_prompt > 0 and probe_completion > 0
    rows_only = cost_usd(spec, rows[1], rows[2])
    assert calls["cost_usd"] == pytest.approx(
        rows_only + cost_usd(spec, probe_prompt, probe_completion), abs=2e-6)
    assert calls["cost_usd"] > rows_only
    assert budget.spent.tokens == calls["prompt_tokens"] + calls["completion_tokens"]
    assert budget.spent.cost == pytest.approx(calls["cost_usd"], abs=2e-6)
