"""``sweep plan``, the run's announcement and the ``calls`` table count the same model requests
and samples: a request of several samples (``--max-n``) is one request, as it is sent and
stored; the dummy's answers are free and counted apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_server import distbench as _cli

from distbench.llm.local import local_available
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

REPO = Path(__file__).resolve().parents[2]
QUICK_START = ["run", "--num-games", "10", "--num-trials", "10", "--seed", "42",
               "--run-id", "demo"]


def _ints(match: re.Match) -> tuple[int, ...]:
    return tuple(int(g.replace(",", "")) for g in match.groups())


def _announced(stderr: str) -> tuple[int, int, int]:
    """(requests, samples, prompt tokens) the run announced before it started."""
    found = re.search(r"about ([\d,]+) model requests \(([\d,]+) samples; ~([\d,]+) prompt "
                      r"tokens", stderr)
    assert found, stderr
    return _ints(found)  # type: ignore[return-value]


def _stored(run_dir: Path) -> dict[str, tuple[int, int, int]]:
    """Per model: (calls rows, samples, prompt tokens) of the ``calls`` table."""
    con = open_run(run_dir)
    rows = con.execute("select model, count(*), sum(samples), sum(prompt_tokens) from calls "
                       "group by model").fetchall()
    return {model: (n, samples, tokens) for model, n, samples, tokens in rows}


def _example(tmp_path: Path, url: str, extra: str = "") -> Path:
    """``examples/tiered.toml`` as shipped, its mock provider pointed at ``url``."""
    text = (REPO / "examples" / "tiered.toml").read_text()
    assert "http://127.0.0.1:8000" in text
    spec = tmp_path / "tiered.toml"
    spec.write_text(text.replace("http://127.0.0.1:8000", url).replace(
        "cache = false\n", f"cache = false\n{extra}"))
    return spec


@pytest.mark.parametrize("max_n, per_game", [(None, 1), (3, 2)], ids=["as-shipped", "max-n-3"])
def test_sweep_plan_run_and_calls_table_agree_on_the_example(tmp_path, max_n, per_game):
    # 2 seeds x 4 buckets x 8 games x 2 modes, 4 trials a game: one request of 4 samples per
    # game and mode (max_n 128, the llamacpp provider's), or two of 2 with max_n = 3
    cells = 2 * 4 * 8 * 2
    requests, samples = cells * per_game, cells * 4
    with start_server(ServerConfig()) as server:
        spec = _example(tmp_path, server.url, f"max_n = {max_n}\n" if max_n else "")
        plan = _cli("sweep", "plan", str(spec), cwd=tmp_path)
        run = _cli("sweep", "run", str(spec), "--run-id", "t", "--no-parallel", cwd=tmp_path)
        if max_n is None:
            # one mock shard (a bucket and seed: 8 games x 2 modes) set to be played again
            commits = tmp_path / "results" / "t" / "_commits"
            marker = next(p for p in sorted(commits.glob("*.json"))
                          if "mock-nash90" in p.read_text())
            marker.unlink()
            again = _cli("sweep", "run", str(spec), "--run-id", "t", "--no-parallel",
                         cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert run.returncode == 0, run.stderr
    # the plan: the two mock models' requests and samples, the dummy's free answers apart
    totals = re.search(r"model requests ([\d,]+) \(([\d,]+) samples\) \| free answers ([\d,]+)",
                       plan.stdout)
    assert totals and _ints(totals) == (2 * requests, 2 * samples, samples), plan.stdout
    for model in ("mock-nash90", "mock-nash50"):
        line = re.search(rf":llamacpp:{model}: ([\d,]+) requests \(([\d,]+) samples\)",
                         plan.stdout)
        assert line and _ints(line) == (requests, samples), plan.stdout
    assert "C:dummy:random: 512 free answers" in plan.stdout
    # the run says the same before it starts ...
    announced = _announced(run.stderr)
    assert announced[:2] == (2 * requests, 2 * samples)
    if max_n is None:  # ... and a resume what it still sends: that shard's 16 requests
        assert again.returncode == 0, again.stderr
        assert _announced(again.stderr)[:2] == (8 * 2, 8 * 2 * 4)
    # ... and the calls table holds exactly that: a row per request, its samples summed (the
    # replayed shard's requests once)
    stored = _stored(tmp_path / "results" / "t")
    assert sorted(stored) == ["mock-nash50", "mock-nash90"]  # the dummy makes no call
    assert all(v[:2] == (requests, samples) for v in stored.values()), stored
    # the prompt is billed once per request: the estimate is of the tokens the server reports
    reported = sum(v[2] for v in stored.values())
    assert 0.5 * reported <= announced[2] <= 1.5 * reported, (announced, reported)
    plan_tokens = re.search(r"tokens: about ([\d,]+) prompt", plan.stdout)
    assert plan_tokens and _ints(plan_tokens)[0] == announced[2]
    if max_n is None:
        _check_the_example_shows_the_tiers_apart(run.stdout)


def _check_the_example_shows_the_tiers_apart(stdout: str) -> None:
    """The terminal gets the leaderboard's essential columns (the files hold every column);
    in mixed mode the tiers rank in their order of skill, none tied: A (mock-nash90), B
    (mock-nash50), C (the dummy)."""
    lines = stdout.strip().splitlines()
    assert lines[1].split() == ["mode", "rank", "tier", "model", "quality", "[95%", "CI]",
                                "valid", "exploitability", "tied", "with"]
    assert len(lines) == 2 + 1 + 6 + 1  # title, header, rule, 2 modes x 3 models, count
    mixed = [ln.split()[:4] for ln in lines if ln.startswith("mixed")]
    assert mixed == [["mixed", "1", "A", "llamacpp:mock-nash90"],
                     ["mixed", "2", "B", "llamacpp:mock-nash50"],
                     ["mixed", "3", "C", "dummy:random"]]


def test_the_quick_start_with_the_dummy_announces_no_model_call(tmp_path):
    out = _cli(*QUICK_START, "--llm-type", "dummy", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "model requests" not in out.stderr and "model calls" not in out.stderr
    con = open_run(tmp_path / "results" / "demo")
    assert con.execute("select count(*) from trials").fetchone()[0] == 100
    assert con.execute("select count(*) from calls").fetchone()[0] == 0


@pytest.mark.skipif(not local_available(), reason="the bundled model is not installed")
def test_the_quick_start_announces_the_requests_it_sends(tmp_path):
    """The README's quick start, as written (the bundled model, 32 samples a request at most):
    10 requests of 10 samples, and about the prompt tokens the model counts."""
    out = _cli(*QUICK_START, cwd=tmp_path, timeout=900)
    assert out.returncode == 0, out.stderr
    requests, samples, tokens = _announced(out.stderr)
    stored = _stored(tmp_path / "results" / "demo")
    assert list(stored.values())[0][:2] == (requests, samples) == (10, 100)
    reported = list(stored.values())[0][2]
    assert 0.5 * reported <= tokens <= 1.5 * reported, (tokens, reported)
