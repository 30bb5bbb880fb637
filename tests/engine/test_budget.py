"""Budgets (``--max-cost``, ``--max-tokens-total``): a run estimated at about $2 against the mock
server, stopped at $0.50 by the server's own token counts, its committed rows intact, then
finished by the command its last line gives, each trial once; the admission rule itself on
fixed estimates; the spec keys."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass

import pytest

from distbench.engine.budget import Budget, BudgetError, ShardQueue, Spend
from distbench.llm.base import BackendSpec
from distbench.mockserver import ServerConfig, start_server
from distbench.spec import SpecError, parse_spec
from distbench.store.catalog import open_run

PRICE = 155.0  # USD per million tokens, in and out: the run below is estimated at $2.10 at most


def _run(url: str, cwd, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", "40", "--num-trials", "5",
            "--shard-trials", "20", "--max-tokens", "16", "--price", f"{PRICE},{PRICE}",
            "--run-id", "r", "-y", *extra]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _billed(server) -> float:
    usage = server.stats()["usage"]
    return (usage["prompt_tokens"] + usage["completion_tokens"]) * PRICE / 1e6


@pytest.mark.parametrize("parallel", ["--no-parallel", "--parallel"])
def test_max_cost_stops_within_budget_and_a_larger_budget_finishes_each_trial_once(
        tmp_path, parallel):
    with start_server(ServerConfig(seed=5)) as server:
        first = _run(server.url, tmp_path, parallel, "--max-cost", "0.50")
        billed_first = _billed(server)
        assert first.returncode == 4, first.stderr
        assert "at most $2.10" in first.stderr  # the plan's estimate
        last = first.stderr.strip().splitlines()[-1]
        assert last.startswith("error: budget reached: spent $"), last
        assert 0 < billed_first <= 0.50
        manifest = json.loads((tmp_path / "results" / "r" / "manifest.json").read_text())
        assert manifest["state"] == "budget_reached"
        budget = manifest["budget"]
        assert budget["max_cost_usd"] == 0.5
        assert budget["spent_usd"] == pytest.approx(billed_first, abs=1e-6)  # the server's count
        assert budget["shards_left"] == 10 - manifest["shards"]["committed"] > 0
        assert "spent $" in first.stderr and "/$0.50" in first.stderr  # the progress line
        con = open_run(tmp_path / "results" / "r")
        committed = manifest["shards"]["committed"]
        assert con.execute("select count(*), count(distinct (game_id, trial_id)), "
                           "count(*) filter (where parse_status = 'call_failed') from trials"
                           ).fetchone() == (20 * committed, 20 * committed, 0)
        con.close()

        command = shlex.split(last.split("continue with a new budget: ", 1)[1])
        assert command[:2] == ["distbench", "run"] and "--max-cost" in command
        second = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path,
                                capture_output=True, text=True, timeout=300,
                                env={**os.environ, "RAY_AUTH_MODE": "disabled"})
        assert second.returncode == 0, second.stderr
        stats = server.stats()
    assert stats["by_path"]["/v1/chat/completions"] == 40  # one request a game, none twice
    con = open_run(tmp_path / "results" / "r")
    assert con.execute("select count(*), count(distinct (game_id, trial_id)) from trials"
                       ).fetchone() == (200, 200)
    con.close()
    manifest = json.loads((tmp_path / "results" / "r" / "manifest.json").read_text())
    assert manifest["state"] == "complete"
    assert manifest["budget"]["spent_usd"] == pytest.approx(_billed_total(stats), abs=1e-6)


def _billed_total(stats) -> float:
    return (stats["usage"]["prompt_tokens"] + stats["usage"]["completion_tokens"]) * PRICE / 1e6


def test_max_tokens_total_stops_the_run_too(tmp_path):
    with start_server(ServerConfig(seed=5)) as server:
        out = _run(server.url, tmp_path, "--no-parallel", "--max-tokens-total", "3000")
        usage = server.stats()["usage"]
    assert out.returncode == 4, out.stderr
    assert 0 < usage["prompt_tokens"] + usage["completion_tokens"] <= 3000
    assert "--max-tokens-total" in out.stderr.strip().splitlines()[-1]


def test_max_cost_without_a_price_is_one_line(tmp_path):
    with start_server(ServerConfig(seed=5)) as server:
        argv = [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp",
                "--llm-model", "mock", "--base-url", server.url, "--num-games", "2",
                "--no-parallel", "--max-cost", "1"]
        out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error: --max-cost needs the price")
    assert "Traceback" not in out.stderr


# --- the admission rule, on fixed estimates ---------------------------------------------


@dataclass(frozen=True)
class _Shard:
    shard_id: str
    llm: BackendSpec
    num_units: int = 1


def _budget(**kwargs) -> tuple[Budget, list[_Shard]]:
    spec = BackendSpec(provider="openai", model="m", options=(("price_in", 1e6),
                                                              ("price_out", 1e6)))
    shards = [_Shard(f"s{i}", spec) for i in range(6)]
    # every shard: 10 prompt + 20 completion tokens, $30 at $1 a token
    return Budget(specs=[spec], estimate=lambda s: (10, 20, 30.0), **kwargs), shards


def test_shards_are_admitted_while_spent_plus_in_flight_plus_next_fit():
    budget, shards = _budget(max_cost=100.0, max_tokens=None)
    queue = ShardQueue(shards, budget.admit)
    taken = [queue.take() for _ in range(4)]
    assert [s.shard_id if s else None for s in taken] == ["s0", "s1", "s2", None]  # 90 held
    budget.spent.add(Spend(5, 5, 10.0))  # s0 returned having spent $10 of its $30
    budget._reserved.pop("s0")
    assert queue.take().shard_id == "s3"  # 10 spent + 60 held + 30 = 100: fits
    assert queue.take() is None and len(queue) == 2


def test_estimates_are_scaled_up_when_shards_spend_more_than_estimated():
    budget, shards = _budget(max_cost=None, max_tokens=100)
    assert budget.admit(shards[0])
    budget._reserved.pop("s0")
    budget._est_done, budget._real_done = [30.0, 30.0], [60.0, 60.0]  # twice the estimate
    budget.spent.add(Spend(30, 30, 60.0))
    assert not budget.admit(shards[1])  # 60 + 2 x 30 > 100
    assert budget.rest(shards[1:]) == (300.0, 300.0)


def test_a_budget_needs_prices_of_paid_models():
    spec = BackendSpec(provider="openai", model="m")
    with pytest.raises(BudgetError, match="--max-cost needs the price"):
        Budget(max_cost=1.0, max_tokens=None, specs=[spec])
    Budget(max_cost=None, max_tokens=10, specs=[spec])  # tokens need no price


_DUMMY = {"providers": {"dummy": {"tiers": {"A": ["random"]}}}}


def test_spec_budget_keys_are_validated():
    spec = parse_spec({**_DUMMY, "max_cost": 2.5, "max_tokens_total": 1000})
    assert (spec.max_cost, spec.max_tokens_total) == (2.5, 1000)
    with pytest.raises(SpecError, match="max_cost"):
        parse_spec({**_DUMMY, "max_cost": -1})
    with pytest.raises(SpecError, match="max_tokens_total"):
        parse_spec({**_DUMMY, "max_tokens_total": 0})


def test_a_sweep_spec_budget_stops_the_sweep_and_the_flag_overrides_it(tmp_path):
    with start_server(ServerConfig(seed=5)) as server:
        spec = tmp_path / "s.toml"
        spec.write_text(f"""
name = "b"
seeds = [1]
buckets = ["3x3_midVar_any"]
modes = ["pure"]
games_per_bucket = 40
trials_per_game = 5
max_tokens = 16
shard_trials = 20
max_tokens_total = 3000
[providers.mock]
type = "llamacpp"
base_url = "{server.url}"
price_in = {PRICE}
price_out = {PRICE}
tiers.A = ["mock"]
""")
        env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
        base = [sys.executable, "-m", "distbench", "sweep", "run"]
        first = subprocess.run([*base, str(spec), "--run-id", "sw", "--no-parallel", "-y"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=300,
                               env=env)
        usage = server.stats()["usage"]
        assert first.returncode == 4, first.stderr
        assert 0 < usage["prompt_tokens"] + usage["completion_tokens"] <= 3000
        last = first.stderr.strip().splitlines()[-1]
        assert "sweep run --resume" in last and "--max-tokens-total" in last
        run = tmp_path / "results" / "sw"
        second = subprocess.run([*base, "--resume", str(run), "--no-parallel", "-y",
                                 "--max-tokens-total", "100000"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=300, env=env)
        assert second.returncode == 0, second.stderr
        assert server.stats()["by_path"]["/v1/chat/completions"] == 40
    con = open_run(run)
    assert con.execute("select count(*), count(distinct (game_id, trial_id)) from trials"
                       ).fetchone() == (200, 200)
    con.close()
