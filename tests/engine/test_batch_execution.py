"""``--execution batch`` against the mock server's Batch API, as a user runs it (the CLI in a
subprocess, real HTTP over loopback): the rows of the same run played live, the batches
counted at the server, a driver killed with SIGKILL that resumes without submitting again,
and expired or partly failed batches whose unanswered requests only are sent again, once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

TIMING = {"run_id", "latency_ms", "queue_ms", "batch_id"}  # and the run id


def _argv(url: str, run_id: str, *extra: str, games: int = 400) -> list[str]:
    return [sys.executable, "-m", "distbench", "run", "--llm-type", "llamacpp", "--llm-model",
            "mock", "--base-url", url, "--num-games", str(games), "--num-trials", "5",
            "--max-n", "1", "--no-cache", "--run-id", run_id, "-y", *extra]


def _run(url: str, cwd, run_id: str, *extra: str, games: int = 400
         ) -> subprocess.CompletedProcess:
    return subprocess.run(_argv(url, run_id, *extra, games=games), cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _rows(run_dir, table: str) -> list[tuple]:
    con = open_run(run_dir)
    columns = [c for c in con.execute(f"select * from {table} limit 0").fetchdf().columns
               if c not in TIMING]
    rows = con.execute(f"select {', '.join(columns)} from {table} order by all").fetchall()
    con.close()
    return rows


def _live_calls(server) -> int:
    return server.stats()["by_path"].get("/v1/chat/completions", 0)


def test_a_batch_run_gives_the_rows_of_the_live_run_in_four_batches(tmp_path):
    with start_server(ServerConfig(seed=4)) as server:
        live = _run(server.url, tmp_path, "live", "--no-parallel")
        assert live.returncode == 0, live.stderr
        sent_live = _live_calls(server)
        assert sent_live == 2000
        batch = _run(server.url, tmp_path, "batch", "--execution", "batch",
                     "--batch-max-requests", "500")
        assert batch.returncode == 0, batch.stderr
        stats = server.stats()
    assert stats["batches"]["created"] == 4 and stats["batches"]["requests"] == 2000
    assert _live_calls(server) == sent_live  # 0 live calls in the batch run
    for table in ("trials", "games", "game_scores"):
        assert _rows(tmp_path / "results" / "batch", table) == \
            _rows(tmp_path / "results" / "live", table)
    con = open_run(tmp_path / "results" / "batch")
    assert con.execute("select count(*), count(distinct batch_id) from calls "
                       "where batch_id is not null").fetchone() == (2000, 4)
    con.close()
    assert _rows(tmp_path / "results" / "batch", "calls") == \
        _rows(tmp_path / "results" / "live", "calls")
    manifest = json.loads((tmp_path / "results" / "batch" / "manifest.json").read_text())
    assert manifest["execution"]["mode"] == "batch"


def test_a_driver_killed_while_waiting_resumes_by_polling_without_submitting_again(tmp_path):
    with start_server(ServerConfig(seed=4, batch_delay=4.0)) as server:
        proc = subprocess.Popen(
            _argv(server.url, "k", "--execution", "batch", "--batch-max-requests", "100",
                  games=80),
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "RAY_AUTH_MODE": "disabled"})
        folder = tmp_path / "results" / "k" / "batches"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(folder.glob("*[0-9].json"))) < 4:
            time.sleep(0.05)
        assert len(list(folder.glob("*[0-9].json"))) == 4
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        submitted = server.stats()["batches"]["created"]
        assert submitted == 4
        assert not list(folder.glob("*.out.jsonl"))  # killed before any batch finished
        resumed = _run(server.url, tmp_path, "k", "--execution", "batch",
                       "--batch-max-requests", "100", games=80)
        assert resumed.returncode == 0, resumed.stderr
        assert server.stats()["batches"]["created"] == submitted  # none submitted again
        assert _live_calls(server) == 0
    con = open_run(tmp_path / "results" / "k")
    assert con.execute("select count(*), count(distinct (game_id, trial_id)), "
                       "count(*) filter (where parse_status = 'call_failed') from trials"
                       ).fetchone() == (400, 400, 0)
    con.close()


def test_an_expired_batch_sends_only_its_unanswered_half_again(tmp_path):
    with start_server(ServerConfig(seed=4, batch_expire=True, batch_faulty=1)) as server:
        out = _run(server.url, tmp_path, "e", "--execution", "batch",
                   "--batch-max-requests", "500", games=100)
        assert out.returncode == 0, out.stderr
        batches = server.stats()["batches"]
    assert batches["created"] == 2
    assert batches["requests"] == 500 + 250  # the expired half only, once
    assert "250 request(s) unanswered by their batch: sent again, once" in out.stderr
    con = open_run(tmp_path / "results" / "e")
    assert con.execute("select count(*), count(distinct (game_id, trial_id)), "
                       "count(*) filter (where parse_status = 'call_failed') from trials"
                       ).fetchone() == (500, 500, 0)
    con.close()


def test_a_batch_with_failed_lines_sends_those_lines_only_again(tmp_path):
    with start_server(ServerConfig(seed=4, batch_fail=0.1, batch_faulty=1)) as server:
        out = _run(server.url, tmp_path, "f", "--execution", "batch",
                   "--batch-max-requests", "500", games=100)
        assert out.returncode == 0, out.stderr
        batches = server.stats()["batches"]
    assert (batches["created"], batches["requests"]) == (2, 550)
    assert batches["completed"] == 500 and batches["failed"] == 50
    con = open_run(tmp_path / "results" / "f")
    assert con.execute("select count(*), count(distinct (game_id, trial_id)) from trials"
                       ).fetchone() == (500, 500)
    con.close()


def test_requests_failed_twice_are_failed_calls_and_never_sent_a_third_time(tmp_path):
    with start_server(ServerConfig(seed=4, batch_fail=1.0)) as server:
        out = _run(server.url, tmp_path, "t", "--execution", "batch", games=10)
        batches = server.stats()["batches"]
    assert out.returncode == 3, out.stderr  # the run ends with failed calls
    assert (batches["created"], batches["requests"]) == (2, 100)
    con = open_run(tmp_path / "results" / "t")
    assert con.execute("select count(*) filter (where status = 'failed'), "
                       "count(distinct batch_id) from calls").fetchone() == (50, 1)
    con.close()


def test_a_multi_turn_family_is_refused_in_one_line(tmp_path):
    argv = [sys.executable, "-m", "distbench", "run", "--family", "negotiation", "--llm-type",
            "scripted:fair", "--num-games", "2", "--execution", "batch", "--run-id", "n"]
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --execution batch: negotiation shards") and "live" in last
    assert "Traceback" not in out.stderr


def test_batch_answers_cost_the_batch_price_and_the_estimates_show_both_prices(tmp_path):
    with start_server(ServerConfig(seed=4)) as server:
        out = _run(server.url, tmp_path, "p", "--execution", "batch", "--price", "10,40",
                   "--max-tokens", "16", games=20)
        billed = server.stats()["batches"]
    assert out.returncode == 0, out.stderr
    # the start line: the batch price first, the live one beside it (20 games x 5 trials:
    # 100 requests of 259 prompt tokens as rendered, and at most 16 completion tokens, 3 by
    # the answer format: the bill, $0.1355)
    assert "~25,900 prompt tokens, at most 1,600 completion tokens" in out.stderr
    assert ("expected ~$0.14 at the batch price with ~300 completion tokens by the shortest "
            "valid answer of each mode; at most $0.16 at the batch price ($0.32 live)"
            in out.stderr)
    calls = json.loads((tmp_path / "results" / "p" / "summary.json").read_text())["calls"]
    cost = (billed["prompt_tokens"] * 10 + billed["completion_tokens"] * 40) / 1e6 * 0.5
    assert calls["cost_usd"] == round(cost, 6)  # the server's tokens at half price
    assert (calls["batch_calls"], calls["batch_price"]) == (100, 0.5)
    estimate = calls["estimate_cost_usd_max"]
    assert estimate["batch"] == estimate["live"] / 2 > 0
    likely = calls["estimate_cost_usd_expected"]
    assert likely["completion_by"] == "format"
    assert abs(likely["batch"] - calls["cost_usd"]) <= 0.10 * calls["cost_usd"]
    assert likely["batch"] < estimate["batch"]
    report = subprocess.run([sys.executable, "-m", "distbench", "report",
                             str(tmp_path / "results" / "p")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    text = "".join(p.read_text() for p in (tmp_path / "results" / "p").rglob("report.md"))
    assert "100 calls were answered through the provider's batch API" in text
    assert "at the batch price" in text
    assert "Expected (the prompts as rendered, completion tokens by the answer format)" in text


SPEC = """
name = "e"
seeds = [1, 2]
buckets = ["2x2_lowVar_pure", "3x3_midVar_any", "4x4_highVar_mixed"]
modes = ["pure", "mixed"]
games_per_bucket = 10
trials_per_game = 4
max_tokens = 256
[providers.mock]
type = "llamacpp"
base_url = "{url}"
max_n = 1
price_in = 25
price_out = 100
tiers.A = ["mock"]
"""


def _plan_costs(stdout: str) -> tuple[float, float, float, float]:
    """(expected live, expected batch, at most live, at most batch) of ``sweep plan``."""
    import re

    expected = re.search(r"cost expected: about \$([\d.]+) live, \$([\d.]+) at the batch "
                         r"price", stdout)
    ceiling = re.search(r"cost: at most \$([\d.]+) live, \$([\d.]+) at the batch price",
                        stdout)
    assert expected and ceiling, stdout
    return tuple(float(x) for x in expected.groups() + ceiling.groups())  # type: ignore


def test_the_sweep_plan_expected_batch_cost_is_within_ten_percent_of_the_bill(tmp_path):
    # max_tokens 256 (a chat default): the ceiling counts every answer at 256 tokens, about
    # four times the bill; the expected cost counts the prompts as rendered and the answers'
    # format, and is within 10% of what the server bills at the batch price.
    with start_server(ServerConfig(seed=4)) as server:
        spec = tmp_path / "s.toml"
        spec.write_text(SPEC.format(url=server.url))
        env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
        plan = subprocess.run([sys.executable, "-m", "distbench", "sweep", "plan", str(spec)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
        run = subprocess.run([sys.executable, "-m", "distbench", "sweep", "run", str(spec),
                              "--run-id", "s", "--no-parallel", "--execution", "batch", "-y"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
        billed = server.stats()["batches"]
        assert plan.returncode == 0 and run.returncode == 0, plan.stderr + run.stderr
        assert "completion by the shortest valid answer of each mode" in plan.stdout
        # a second plan of the same spec reads the first run's calls: the median answers
        again = subprocess.run([sys.executable, "-m", "distbench", "sweep", "plan", str(spec)],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120,
                               env=env)
    assert again.returncode == 0, again.stderr
    assert "completion by the median answer of earlier runs of the model" in again.stdout
    live, batch, live_max, batch_max = _plan_costs(plan.stdout)
    assert batch == pytest.approx(live / 2, abs=0.01)
    assert batch_max == pytest.approx(live_max / 2, abs=0.01)
    cost = (billed["prompt_tokens"] * 25 + billed["completion_tokens"] * 100) / 1e6 * 0.5
    assert billed["requests"] == 480 and _live_calls(server) == 0
    print(f"sweep plan: expected ${batch}, at most ${batch_max} at the batch price; billed "
          f"${cost:.4f} at the batch price")
    assert abs(batch - cost) <= 0.10 * cost, (batch, cost)
    assert batch_max >= cost and batch_max > 2 * cost  # the ceiling holds, far above
    _, again_batch, _, _ = _plan_costs(again.stdout)
    assert abs(again_batch - cost) <= 0.10 * cost, (again_batch, cost)
    summary = json.loads((tmp_path / "results" / "s" / "summary.json").read_text())
    assert summary["calls"]["cost_usd"] == pytest.approx(cost, abs=1e-6)
