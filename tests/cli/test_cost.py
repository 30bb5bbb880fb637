"""Tokens and cost: the estimate before a run, the actual after it, prices only as given."""

from __future__ import annotations

import json
import textwrap

import pytest
from cli_server import distbench as _cli

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def test_a_run_states_its_estimate_and_its_cost_at_the_price_given(tmp_path):
    with start_server(ServerConfig()) as server:
        base = ["run", "--llm-type", "llamacpp", "--base-url", server.url, "--num-games", "3",
                "--num-trials", "4", "--no-parallel", "--no-cache"]
        priced = _cli(*base, "--price", "2.5,10", "--run-id", "p", cwd=tmp_path)
        free = _cli(*base, "--run-id", "f", cwd=tmp_path)
        bad = _cli(*base, "--price", "cheap", "--run-id", "b", cwd=tmp_path)
    assert priced.returncode == 0, priced.stderr
    assert "about 3 model requests (12 samples; ~" in priced.stderr and "at most $" in priced.stderr
    con = open_run(tmp_path / "results" / "p")
    pt, ct = con.execute("select sum(prompt_tokens), sum(completion_tokens) from calls").fetchone()
    health = json.loads((tmp_path / "results" / "p" / "summary.json").read_text())["calls"]
    assert (health["prompt_tokens"], health["completion_tokens"]) == (pt, ct)
    assert health["cost_usd"] == pytest.approx((pt * 2.5 + ct * 10) / 1e6, abs=1e-6)
    assert f"cost: ${health['cost_usd']:,.4f}" in priced.stderr
    assert free.returncode == 0, free.stderr
    assert "no price given (--price)" in free.stderr and "cost: unknown" in free.stderr
    assert json.loads((tmp_path / "results" / "f" / "summary.json").read_text())["calls"][
        "cost_usd"] is None
    assert bad.returncode == 2 and bad.stderr.startswith("error: --price: expected IN,OUT")


def test_sweep_plan_prices_the_models_that_have_one(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        games_per_bucket = 2
        trials_per_game = 5
        buckets = ["2x2_lowVar_pure"]
        modes = ["pure"]
        [providers.openai]
        tiers.A = ["gpt-4o", "gpt-4o-mini"]
        [providers.openai.models."gpt-4o"]
        price_in = 2.5
        price_out = 10.0
    """))
    out = _cli("sweep", "plan", str(spec), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "cost: at most $" in out.stdout and "no price for openai:gpt-4o-mini" in out.stdout
