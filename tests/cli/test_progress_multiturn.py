"""The ETA of the multi-turn families (issue 37, item 5): negotiation, fog and repeated plans state the
model calls their shards make at most (``RunPlan.shard_calls``: every turn (round) of every
model seat), so the progress line shows an ETA from the first answers instead of only
``calls N (k in flight)``; the bound is lowered as shards commit with the calls they made."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from distbench.mockserver import ServerConfig, start_server

FAMILY_ARGS = {
    "negotiation": ["--family", "negotiation", "--opponent", "scripted:fair", "--num-games", "6"],
    "fog": ["--family", "fog", "--opponent", "tier1", "--num-games", "2", "--max-tokens", "200"],
    "repeated": ["--family", "repeated", "--opponent", "self,TitForTat", "--num-games", "2",
                 "--continuation", "0.8"],
}


@pytest.mark.parametrize("family", list(FAMILY_ARGS))
def test_a_slow_run_of_a_multi_turn_family_shows_an_eta_before_it_ends(tmp_path, family):
    """stderr not a terminal, a server answering in 250 ms: progress lines carry an ETA while
    calls are still coming, and the run made no more calls than the bound it announced."""
    with start_server(ServerConfig(seed=3, latency_ms=250)) as server:
        out = subprocess.run(
            [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
             "mock", "--base-url", server.url, "--run-id", "p", "--no-parallel", "--no-cache",
             "-y", "--seed", "1", *FAMILY_ARGS[family]],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    assert out.returncode == 0, out.stderr
    bound = int(out.stderr.split("at most ")[1].split(" model calls")[0].replace(",", ""))
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("progress: ")]
    with_eta = [ln for ln in lines[:-1] if "ETA " in ln]
    assert with_eta, out.stderr
    calls = int(lines[-1].split("calls ")[1].split()[0].replace(",", ""))
    assert 0 < calls <= bound, out.stderr
    if family == "repeated":  # the rounds are drawn from the seed: the bound is exact
        assert calls == bound, out.stderr
