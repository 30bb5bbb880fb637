"""The bimatrix family through ``--execution batch``: single-turn, its plan is batchable; a
small run (pure, mixed and logprob, both seats, self-play and a model opponent) through the
mock server's Batch API gives the rows of the same run played live, with no live call; and
its estimates (tokens, cost at most and expected) count what the server bills."""

from __future__ import annotations

import pytest

from distbench.engine.batching import BatchLimits
from distbench.engine.driver import run_plan
from distbench.engine.estimate import expected_of
from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

TIMING = {"run_id", "latency_ms", "queue_ms", "batch_id"}


def _rows(run_dir, table: str) -> list[tuple]:
    con = open_run(run_dir)
    columns = [c for c in con.execute(f"select * from {table} limit 0").fetchdf().columns
               if c not in TIMING]
    rows = con.execute(f"select {', '.join(columns)} from {table} order by all").fetchall()
    con.close()
    return rows


def _config(url: str) -> BimatrixRunConfig:
    spec = make_spec("llamacpp", "mock", base_url=url, cache=False, max_n=1,
                     price_in=10.0, price_out=40.0)
    rival = make_spec("llamacpp", "mock-nash50", base_url=url, cache=False, max_n=1,
                      price_in=1.0, price_out=2.0)
    return BimatrixRunConfig(sets=("class:stag_hunt", "3x2_lowVar"), llm=spec, num_games=4,
                             num_trials=3, modes=("pure", "mixed", "logprob"),
                             opponents=("eq", "self", rival), shard_games=2, max_tokens=64)


def test_a_bimatrix_plan_is_batchable_with_per_shard_estimates():
    plan = plan_bimatrix(_config("http://127.0.0.1:9"), "p")
    assert plan.batchable and plan.shard_estimate is not None
    # per shard: 2 games x 2 seats x (3 + 3 trials + 1 reading) by the model, as many by the
    # rival in the other seat
    assert plan.expected_requests == 4 * 2 * 2 * 2 * 7
    prompt, most, cost = plan.shard_estimate(plan.shards[0])
    assert most == 2 * 2 * (3 * 64 + 3 * 64 + 1) * 2 and prompt > 0 and cost > 0
    assert plan.expected_cost == pytest.approx(sum(plan.shard_estimate(s)[2]
                                                   for s in plan.shards))


def test_a_bimatrix_batch_run_gives_the_rows_of_the_live_run(tmp_path):
    with start_server(ServerConfig(seed=7)) as server:
        config = _config(server.url)
        live = run_plan(plan_bimatrix(config, "live"), tmp_path / "live", parallel=False)
        sent_live = server.stats()["by_path"].get("/v1/chat/completions", 0)
        plan = plan_bimatrix(config, "batch")
        batch = run_plan(plan, tmp_path / "batch", parallel=False, execution="batch",
                         batch_limits=BatchLimits(max_requests=40))
        stats = server.stats()
    assert live.calls["failed"] == batch.calls["failed"] == 0
    assert stats["by_path"].get("/v1/chat/completions", 0) == sent_live  # no live call
    assert stats["batches"]["requests"] == plan.expected_requests == live.calls["calls"]
    assert stats["batches"]["created"] >= 4  # two models, batches of at most 40
    for table in ("bimatrix_trials", "bimatrix_games", "calls"):
        assert _rows(tmp_path / "batch", table) == _rows(tmp_path / "live", table), table
    con = open_run(tmp_path / "batch")
    assert con.execute("select count(*) filter (where batch_id is null) from calls"
                       ).fetchone() == (0,)
    con.close()
    # the estimates: prompts as rendered are the server's count; the ceiling holds
    billed = stats["batches"]["prompt_tokens"]
    assert plan.expected_tokens[0] == pytest.approx(billed, rel=0.05)
    expected = expected_of(plan)
    assert expected is not None and expected.sources == ("format",)
    assert expected.completion_tokens == pytest.approx(stats["batches"]["completion_tokens"],
                                                       rel=0.10)
    assert plan.expected_tokens[1] >= stats["batches"]["completion_tokens"]
