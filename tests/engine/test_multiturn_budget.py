"""Budgets of the multi-turn families: negotiation and fog shards declare what they may spend
at most (``shard_estimate``), so ``--max-tokens-total`` holds for them too. Checked against the
mock server's own token counts: every shard's billed tokens stay under its ceiling, and a run
given a budget below the whole stops within it, keeps its rows, and finishes on a resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

SEEDS = (1, 2, 3)
FAMILY_ARGS = {
    "negotiation": ["--family", "negotiation", "--opponent", "scripted:fair", "--num-games", "2"],
    "fog": ["--family", "fog", "--opponent", "tier1", "--num-games", "2", "--max-tokens", "200"],
}
SEED_ARGS = [arg for seed in SEEDS for arg in ("--seed", str(seed))]


def _ceiling_per_shard(family: str) -> list[int]:
    """Tokens the run may spend at most: the shards' ceilings, rebuilt from the same settings
    (the model's spec does not enter a ceiling; only that a seat is a model)."""
    from distbench.llm.base import BackendSpec

    model = BackendSpec("llamacpp", "mock")
    if family == "negotiation":
        from distbench.games.negotiation.estimate import shard_estimate
        from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards

        shards = plan_shards(NegotiationRunConfig(
            seeds=SEEDS, num_games=2, modes=("semi",), langs=("en",), player_a=model,
            player_b="scripted:fair"))
    else:
        from distbench.games.fog.estimate import shard_estimate
        from distbench.games.fog.plan import FogRunConfig, plan_fog_shards

        shards = plan_fog_shards(FogRunConfig(pairings=((model, "tier1"),), seeds=SEEDS,
                                              num_games=2, max_tokens=200))
    return [p + c for p, c, _ in map(shard_estimate, shards)]


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distbench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _run(url: str, cwd, family: str, run_id: str, *extra: str) -> subprocess.CompletedProcess:
    return _cli(cwd, "run", "--llm-type", "llamacpp", "--llm-model", "mock", "--base-url", url,
                "--run-id", run_id, "--no-parallel", "--no-cache", "-y",
                *FAMILY_ARGS[family], *SEED_ARGS, *extra)


@pytest.mark.parametrize("family", list(FAMILY_ARGS))
def test_what_the_server_bills_stays_under_the_ceiling(tmp_path, family):
    with start_server(ServerConfig(seed=3)) as server:
        out = _run(server.url, tmp_path, family, "full")
        assert out.returncode == 0, out.stderr
        usage = server.stats()["usage"]
    billed = usage["prompt_tokens"] + usage["completion_tokens"]
    assert 0 < billed <= sum(_ceiling_per_shard(family))


@pytest.mark.parametrize("family", list(FAMILY_ARGS))
def test_a_budget_below_a_shard_spends_nothing_and_its_suggestion_finishes(tmp_path, family):
    """The ceilings are far above a typical spend (every answer at its full budget), so a
    budget under one shard's ceiling admits nothing: nothing is spent, the run says so, and
    the budget its last line suggests finishes it, each episode once."""
    cap = min(_ceiling_per_shard(family)) - 1
    with start_server(ServerConfig(seed=3)) as server:
        first = _run(server.url, tmp_path, family, "capped", "--max-tokens-total", str(cap))
        usage = server.stats()["usage"]
        assert first.returncode == 4, first.stderr
        assert usage["prompt_tokens"] + usage["completion_tokens"] == 0
        manifest = json.loads((tmp_path / "results" / "capped" / "manifest.json").read_text())
        assert manifest["state"] == "budget_reached"
        last = first.stderr.strip().splitlines()[-1]
        assert last.startswith("error: budget reached: spent 0 of"), last
        suggested = int(last.rsplit("--max-tokens-total ", 1)[1].split()[0])
        assert suggested > cap
        again = _run(server.url, tmp_path, family, "capped", "--max-tokens-total", str(suggested))
        assert again.returncode == 0, again.stderr
        usage = server.stats()["usage"]
        assert 0 < usage["prompt_tokens"] + usage["completion_tokens"] <= suggested
    main, key = {"negotiation": ("episodes", "episode_id"), "fog": ("fog_games", "game_id")}[family]
    con = open_run(tmp_path / "results" / "capped")
    try:
        rows, distinct = con.execute(f"select count(*), count(distinct {key}) from {main}").fetchone()
    finally:
        con.close()
    assert rows == distinct == len(SEEDS) * 2 * 2  # seeds x instances x seat orders
