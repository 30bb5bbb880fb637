"""Sweep specs, planning and the sweep commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.engine.driver import run_plan
from distbench.engine.sweep import describe_plan, plan_sweep
from distbench.mockserver import ServerConfig, start_server
from distbench.spec import DEFAULT_SUITE, SpecError, load_spec, parse_spec
from distbench.store.catalog import open_run
from distbench.store.writer import COMMITS

REPO = Path(__file__).resolve().parents[2]


def _spec(**kw):
    data = {"seeds": [1, 2], "games_per_bucket": 3, "trials_per_game": 2, "modes": ["pure"],
            "buckets": ["2x2_lowVar_mixed", {"rows": 3, "cols": 2, "spread": "midVar", "kind": "any"}],
            "providers": {"dummy": {"tiers": {"A": ["m1"], "B": ["m2"]}}}}
    data.update(kw)
    return parse_spec(data, "t.toml")


def test_a_spec_expands_inline_buckets_and_tiers():
    spec = _spec()
    assert spec.buckets == ("2x2_lowVar_mixed", "3x2_midVar_any")
    assert [(m.tier, m.spec.model) for m in spec.models] == [("A", "m1"), ("B", "m2")]
    assert spec.tiers() == {"dummy": {"A": ["m1"], "B": ["m2"]}}


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"seedz": [1]}, "t.toml: seedz: unknown key (did you mean 'seeds'?)"),
        ({"seeds": []}, "t.toml: seeds: must be a non-empty list"),
        ({"seeds": ["x"]}, "t.toml: seeds: must be an integer"),
        ({"games_per_bucket": 0}, "t.toml: games_per_bucket: must be >= 1"),
        ({"trials_per_game": 1.5}, "t.toml: trials_per_game: must be an integer"),
        ({"modes": ["both"]}, "t.toml: modes: unknown mode 'both'"),
        ({"buckets": []}, "t.toml: buckets: must be a non-empty list"),
        ({"buckets": ["3x3_midVar_mixd"]}, "t.toml: buckets[0]: unknown equilibrium kind"),
        ({"buckets": [{"rows": 3}]}, "t.toml: buckets[0]: an inline bucket needs"),
        ({"providers": {}}, "t.toml: providers: needs at least one provider"),
        ({"providers": {"openia": {"tiers": {"A": ["x"]}}}}, "Did you mean 'openai'"),
        ({"providers": {"dummy": {"tiers": {}}}}, "providers.dummy.tiers: needs at least one tier"),
        ({"providers": {"dummy": {"tiers": {"A": "m"}}}}, "providers.dummy.tiers.A: must be a list of model names"),
        ({"providers": {"dummy": {"rpmm": 1, "tiers": {"A": ["m"]}}}}, "providers.dummy.rpmm: unknown key"),
        ({"temperature": -1}, "t.toml: temperature: must be a finite number >= 0"),
    ],
)
def test_bad_specs_name_the_file_and_the_key(kw, message):
    with pytest.raises(SpecError) as info:
        _spec(**kw)
    assert message in str(info.value)


def test_bad_toml_and_missing_files_are_clear(tmp_path):
    (tmp_path / "bad.toml").write_text("seeds = [1,\n")
    with pytest.raises(SpecError, match="bad.toml: not valid TOML"):
        load_spec(tmp_path / "bad.toml")
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "missing.toml")


def test_models_share_the_games_of_each_bucket_and_seed():
    plan = plan_sweep(_spec(), "r")
    by_model: dict[str, set[str]] = {}
    for shard in plan.shards:
        by_model.setdefault(shard.llm.model, set()).add(shard.chunk_id)
    assert by_model["m1"] == by_model["m2"]
    assert len({s.shard_id for s in plan.shards}) == len(plan.shards)
    info = describe_plan(_spec())
    assert info["cells"] == 2 * 2 * 2 * 1
    # dummies: free answers, apart from the models' requests
    assert (info["requests"], info["free_answers"]) == (0, 2 * 2 * 3 * 2 * 2)


def test_the_example_spec_runs_against_the_mock_server(tmp_path):
    data = load_spec(REPO / "examples" / "tiered.toml")
    with start_server(ServerConfig()) as server:
        data["providers"]["mock"]["base_url"] = server.url
        spec = parse_spec(data, "examples/tiered.toml")
        out = run_plan(plan_sweep(spec, "t"), tmp_path / "t", parallel=False)
    con = open_run(out.run_dir)
    expected = 2 * 4 * 8 * 4 * 2 * 3  # seeds x buckets x games x trials x modes x models
    assert con.execute("select count(*), count(distinct (model, trial_id)) from trials").fetchone() == (expected, expected)
    assert con.execute("select count(distinct game_id) from games").fetchone()[0] == 2 * 4 * 8
    tiers = con.execute("select tier, model from trials group by all order by tier").fetchall()
    assert tiers == [("A", "mock-nash90"), ("B", "mock-nash50"), ("C", "random")]


def test_a_shard_run_twice_leaves_no_duplicates_and_no_visible_temp_files(tmp_path):
    spec = _spec()
    run_plan(plan_sweep(spec, "r"), tmp_path / "r", parallel=False)
    first = open_run(tmp_path / "r").execute("select * exclude (latency_ms) from trials order by all").fetchall()
    # Crash simulation: a shard's marker is lost after its files were written, and a temp file
    # of an interrupted write is left behind; the shard then runs again.
    markers = sorted((tmp_path / "r" / COMMITS).glob("*.json"))
    markers[0].unlink()
    (tmp_path / "r" / "trials" / ".tmp-deadbeef-x.parquet").write_bytes(b"PAR1 partial")
    again = run_plan(plan_sweep(spec, "r"), tmp_path / "r", parallel=False)
    assert again.executed == 1
    second = open_run(tmp_path / "r").execute("select * exclude (latency_ms) from trials order by all").fetchall()
    assert first == second


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_default_suite_needs_no_file(tmp_path):
    result = _cli("sweep", "run", "--use-dummy", "--num-games-per-bucket", "5", "--num-trials",
                  "3", "--seeds", "42", "--run-id", "s", "--no-parallel", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = tmp_path / "results" / "s" / "report"
    rows = (report / "big_table_all_runs.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 6 * 2  # header + 6 buckets x 2 modes (one seed, one model)
    meta = json.loads((report / "suite_metadata.json").read_text())
    assert meta["buckets"] == DEFAULT_SUITE["buckets"] and meta["seeds"] == [42]
    again = _cli("sweep", "report", "results/s", "--out", "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "big_table_aggregated.md").read_text() == (
        report / "big_table_aggregated.md").read_text()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["sweep", "run", "nope.toml"], "no such spec file"),
        (["sweep", "plan", "--seeds", "a,b"], "--seeds"),
        (["sweep", "plan", "--openai-model-tiers-json", "{bad"], "not valid JSON"),
        (["sweep", "plan", "--providers", "mock"], "not in the spec"),
        (["sweep", "plan", "--bucket-ids", "9x9_lowVar_pur"], "buckets[0]"),
        (["sweep", "run", "--resume", "nowhere"], "--resume"),
    ],
)
def test_bad_sweep_input_is_one_line(tmp_path, args, fragment):
    result = _cli(*args, cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr


def test_a_sweep_can_add_negotiation_and_fog_cells(tmp_path):
    data = {"seeds": [3], "games_per_bucket": 2, "trials_per_game": 2, "modes": ["pure"],
            "buckets": ["2x2_lowVar_mixed"],
            "negotiation": {"games": 1, "opponents": ["scripted:fair"], "max_messages": 1,
                            "max_tokens": 32},
            "fog": {"games": 1, "opponents": ["tier1", "distbench.games.fog.agents:GreedyAgent"],
                    "max_turns": 2, "max_tokens": 32}}
    with start_server(ServerConfig()) as server:
        data["providers"] = {
            "mock": {"type": "llamacpp", "base_url": server.url, "cache": False,
                     "tiers": {"A": ["mock-a"]}},
            "dummy": {"tiers": {"C": ["random"]}},
        }
        spec = parse_spec(data, "t.toml")
        out = run_plan(plan_sweep(spec, "t"), tmp_path / "t", parallel=False)
    con = open_run(out.run_dir)
    # Both seat orders; the dummy skips the negotiation and fog cells.
    assert con.execute("select count(*), count(distinct player_a) from episodes").fetchone() == (2, 2)
    assert con.execute("select count(*) from fog_games").fetchone()[0] == 4  # 2 opponents
    opponents = {r[0] for r in con.execute("select agent_b from fog_games union "
                                          "select agent_a from fog_games").fetchall()}
    assert "distbench.games.fog.agents:GreedyAgent" in opponents
    assert con.execute("select count(distinct model) from trials").fetchone()[0] == 2
    families = {r["family"] for r in out.summary}
    assert families == {"matrix", "negotiation", "fog"}
    with pytest.raises(SpecError, match="negotiation.opponents"):
        parse_spec({**data, "negotiation": {"opponents": ["scripted:nice"]}}, "t.toml")
    with pytest.raises(SpecError, match="fog.opponents.*nomodule"):
        parse_spec({**data, "fog": {"opponents": ["tier1", "nomodule:Nope"]}}, "t.toml")
    with pytest.raises(SpecError, match="fog.gamez"):
        parse_spec({**data, "fog": {"gamez": 1}}, "t.toml")
