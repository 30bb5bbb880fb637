"""Budgets against a server that misreports ``usage`` (issue 33, item 1): usage 0, null,
negative, absent or 99,999,999 per answer, live and through batches. Each such answer counts
at its request's ceiling, so ``--max-cost`` and ``--max-tokens-total`` hold by the server's
own bill (the mock bills the true tokens), the run says its spend is partly estimated, a huge
report is not taken as a $400,000 spend, and a run whose answers reported 0 teaches the
expected-cost estimate nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

PRICE = 155.0  # USD per million tokens, in and out: 10 shards, $8.52 at most live


def _argv(url: str, execution: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", "40", "--num-trials", "5",
            "--shard-trials", "20", "--max-tokens", "16", "--max-n", "1", "--no-cache",
            "--price", f"{PRICE},{PRICE}", "--run-id", "u", "-y", "--execution", execution,
            "--no-parallel", *extra]


def _run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _billed_tokens(server, execution: str) -> int:
    """The tokens the server billed (its true counts, whatever it reported)."""
    stats = server.stats()
    usage = stats["batches"] if execution == "batch" else stats["usage"]
    return usage["prompt_tokens"] + usage["completion_tokens"]


@pytest.mark.parametrize("execution,usage", [
    ("batch", "zero"), ("batch", "absent"), ("batch", "huge"),
    ("live", "null"), ("live", "negative"), ("live", "zero"),
])
def test_max_cost_holds_by_the_servers_bill_when_usage_is_misreported(tmp_path, execution,
                                                                      usage):
    cap = 0.50 if execution == "batch" else 2.00  # a shard is $0.43 / $0.85 at most
    with start_server(ServerConfig(seed=6, usage=usage)) as server:
        out = _run(_argv(server.url, execution, "--max-cost", f"{cap:.2f}"), tmp_path)
        tokens = _billed_tokens(server, execution)
    factor = 0.5 if execution == "batch" else 1.0
    billed = tokens * PRICE / 1e6 * factor
    assert out.returncode == 4, out.stderr
    assert 0 < billed <= cap
    manifest = json.loads((tmp_path / "results" / "u" / "manifest.json").read_text())
    spent = manifest["budget"]["spent_usd"]
    assert billed <= spent + 1e-9 and spent <= cap  # counted at least what was billed
    assert manifest["budget"]["estimated_calls"] > 0
    last = out.stderr.strip().splitlines()[-1]
    assert "partly estimated" in last, last
    con = open_run(tmp_path / "results" / "u")
    assert con.execute("select count(*) filter (where estimated_prompt_tokens is null), "
                       "count(*) filter (where estimated_completion_tokens <> 16) from calls "
                       "where status = 'ok'").fetchone() == (0, 0)
    con.close()
    if usage == "zero" and execution == "live":  # 0 reported teaches no answer length
        from distbench.engine.estimate import observed_completion

        assert observed_completion(tmp_path / "results") == {}


def test_max_tokens_total_holds_when_usage_is_null_in_batches(tmp_path):
    with start_server(ServerConfig(seed=6, usage="null")) as server:
        out = _run(_argv(server.url, "batch", "--max-tokens-total", "12000"), tmp_path)
        tokens = _billed_tokens(server, "batch")
    assert out.returncode == 4, out.stderr
    assert 0 < tokens <= 12000
    assert "partly estimated" in out.stderr


def test_a_run_with_honest_usage_is_not_said_to_be_estimated(tmp_path):
    with start_server(ServerConfig(seed=6)) as server:
        out = _run(_argv(server.url, "live", "--num-games", "4"), tmp_path)
    assert out.returncode == 0, out.stderr
    assert "partly estimated" not in out.stderr
    con = open_run(tmp_path / "results" / "u")
    assert con.execute("select count(estimated_prompt_tokens) from calls").fetchone() == (0,)
    con.close()
