"""Budgets with ``--execution batch``: against the mock server's Batch API, a run estimated
well above its ``--max-cost`` submits only the requests of the shards the budget admits, stops
at or below the cap by the server's own token counts at the batch price (``budget_reached``,
exit 4, committed rows intact), and the command its last line gives finishes it with each
trial once and no request submitted twice; and the admission of a wave on a resume."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from distbench.engine.batching import FOLDER, BatchLimits, BatchRun
from distbench.engine.budget import Budget
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run
from distbench.store.writer import write_json

PRICE = 155.0  # USD per million tokens, in and out: 10 shards, $4.26 at most at the batch price


def _argv(url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", "40", "--num-trials", "5",
            "--shard-trials", "20", "--max-tokens", "16", "--max-n", "1", "--no-cache",
            "--price", f"{PRICE},{PRICE}", "--run-id", "b", "-y", "--execution", "batch",
            *extra]


def _run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _billed(server) -> float:
    """What the server's batches billed, at half the price."""
    batches = server.stats()["batches"]
    return (batches["prompt_tokens"] + batches["completion_tokens"]) * PRICE / 1e6 * 0.5


def test_max_cost_with_batches_stops_under_the_cap_and_a_larger_budget_finishes_once(tmp_path):
    with start_server(ServerConfig(seed=6)) as server:
        first = _run(_argv(server.url, "--max-cost", "0.50"), tmp_path)
        billed_first = _billed(server)
        sent_first = server.stats()["batches"]["requests"]
        assert first.returncode == 4, first.stderr
        assert "at most $4.26 at the batch price" in first.stderr  # estimated well above
        last = first.stderr.strip().splitlines()[-1]
        assert last.startswith("error: budget reached: spent $"), last
        assert 0 < billed_first <= 0.50
        manifest = json.loads((tmp_path / "results" / "b" / "manifest.json").read_text())
        assert manifest["state"] == "budget_reached"
        committed = manifest["shards"]["committed"]
        assert 0 < committed < 10 and manifest["budget"]["shards_left"] == 10 - committed
        assert manifest["budget"]["spent_usd"] == pytest.approx(billed_first, abs=1e-6)
        assert sent_first == 20 * committed  # no request of a shard not admitted was sent
        con = open_run(tmp_path / "results" / "b")
        assert con.execute("select count(*), count(distinct (game_id, trial_id)), "
                           "count(*) filter (where parse_status = 'call_failed'), "
                           "count(*) filter (where call_id is null) from trials"
                           ).fetchone() == (20 * committed, 20 * committed, 0, 0)
        assert con.execute("select count(*) filter (where batch_id is null) from calls"
                           ).fetchone() == (0,)
        con.close()

        command = shlex.split(last.split("continue with a new budget: ", 1)[1])
        assert command[:2] == ["distbench", "run"] and "--max-cost" in command
        second = _run([sys.executable, "-m", *command], tmp_path)
        assert second.returncode == 0, second.stderr
        stats = server.stats()
    assert stats["batches"]["requests"] == 200  # every request once, over both calls
    assert stats["by_path"].get("/v1/chat/completions", 0) == 0  # no live call
    con = open_run(tmp_path / "results" / "b")
    assert con.execute("select count(*), count(distinct (game_id, trial_id)) from trials"
                       ).fetchone() == (200, 200)
    con.close()
    manifest = json.loads((tmp_path / "results" / "b" / "manifest.json").read_text())
    assert manifest["state"] == "complete"
    total = (stats["batches"]["prompt_tokens"] + stats["batches"]["completion_tokens"]) \
        * PRICE / 1e6 * 0.5
    assert manifest["budget"]["spent_usd"] == pytest.approx(total, abs=1e-6)
    assert total <= manifest["budget"]["max_cost_usd"]


def test_max_tokens_total_with_batches_stops_the_run_too(tmp_path):
    with start_server(ServerConfig(seed=6)) as server:
        out = _run(_argv(server.url, "--max-tokens-total", "12000"), tmp_path)
        batches = server.stats()["batches"]
    assert out.returncode == 4, out.stderr
    assert 0 < batches["prompt_tokens"] + batches["completion_tokens"] <= 12000
    assert "--max-tokens-total" in out.stderr.strip().splitlines()[-1]


def _shards(url: str):
    from distbench.llm.registry import make_spec, resolve_spec

    spec = resolve_spec(make_spec("llamacpp", "mock", None, base_url=url, max_n=1,
                                  price_in=PRICE, price_out=PRICE))
    config = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(42,), num_games=40,
                             num_trials=5, modes=("pure",), llm=spec, max_tokens=16,
                             shard_trials=20)
    plan = config.plan("w")
    return plan, spec


def test_a_wave_holds_every_shard_a_recorded_batch_covers_whatever_the_budget(tmp_path):
    # the recording pass needs no server; a record covering shard 5 (a driver killed after
    # submitting it) puts that shard in the wave first, whatever the budget: it is paid for.
    # Each shard is $0.43 at most at the batch price: with $1.00, shard 0 fits beside it, 1 not
    plan, spec = _shards("http://127.0.0.1:9")
    budget = Budget(max_cost=1.0, max_tokens=None, specs=[spec],
                    estimate=plan.shard_estimate, execution="batch")
    run = BatchRun(plan.shards, tmp_path, BatchLimits(), budget=budget)
    assert all(len(run.keys[s.shard_id]) == 20 for s in plan.shards)
    write_json(tmp_path / FOLDER / "000000.json", {
        "number": 0, "batch_id": "batch_x", "input_file_id": "file_x", "spec": "s",
        "round": 0, "endpoint": "/v1/chat/completions",
        "ids": run.keys[plan.shards[5].shard_id], "status": "in_progress"})
    run.records = [json.loads((tmp_path / FOLDER / "000000.json").read_text())]
    wave = run._admit()
    ids = [s.shard_id for s in wave]
    assert plan.shards[5].shard_id in ids  # held, whatever the budget
    assert ids[0] == plan.shards[0].shard_id  # then the budget admits in plan order
    assert len(wave) == 2 and budget.refused == 1
    held_cost = budget.shard_estimate(plan.shards[5])[1]
    assert held_cost == pytest.approx(plan.shard_estimate(plan.shards[5])[2] * 0.5)


def test_without_a_budget_one_wave_holds_every_shard(tmp_path):
    plan, _ = _shards("http://127.0.0.1:9")
    run = BatchRun(plan.shards, tmp_path, BatchLimits())
    assert [s.shard_id for s in run._admit()] == [s.shard_id for s in plan.shards]
