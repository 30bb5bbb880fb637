"""The seed tool's files, folders and suite command lines (``--output-format seed``,
``export --format seed``, space-separated list flags, built-in tiers), as its users run them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from distbench.cli.sweep import join_list_flags
from distbench.spec import SpecError, parse_spec

# The seed tool's keys, written out here (not imported) so that a change of the writer fails.
GAME = ["game_id", "payoff_matrix", "nash_equilibrium_row", "nash_equilibrium_col"]
TRIAL = ["game_id", "trial_id", "llm_decision", "llm_value", "best_response_value", "nash_gap",
         "decision_source"]
STATS = ["mean_nash_gap", "median_nash_gap", "std_nash_gap", "min_nash_gap", "max_nash_gap",
         "mean_llm_value"]
PURE_SUMMARY = ["num_games", "num_trials_per_game", "total_trials", *STATS, "mean_br_value",
                "decision_source_counts", "parse_success_rate"]
MIXED_SUMMARY = ["num_games", "num_trials_per_game", "total_trials", "mode", *STATS,
                 "mean_nash_value", "decision_source_counts", "parse_success_rate"]
COMBINED = ["games.json", "summary_mixed_strategy.json", "summary_pure_actions.json",
            "trials_mixed_strategy.json", "trials_pure_actions.json"]
RUN_ARGS = ["--combined", "--num-games", "3", "--num-trials", "2", "--llm-type", "dummy",
            "--no-parallel"]


def distbench(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    for key in ("OPENAI_API_KEY", "TOGETHER_API_KEY"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _load(path):
    return json.loads(path.read_text())


def test_a_combined_seed_run_leaves_the_five_seed_files_with_exactly_the_seeds_keys(tmp_path):
    run = distbench("run", *RUN_ARGS, "--overwrite", "--output-format", "seed", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    top = tmp_path / "results" / "pure_and_mixed_latest"
    assert sorted(p.name for p in top.iterdir() if p.is_file()) == COMBINED
    games = _load(top / "games.json")
    assert [list(g) for g in games] == [GAME] * 3
    assert [g["game_id"] for g in games] == [0, 1, 2]
    pure, mixed = _load(top / "trials_pure_actions.json"), _load(top / "trials_mixed_strategy.json")
    assert [list(t) for t in pure + mixed] == [TRIAL] * 12
    assert [(t["game_id"], t["trial_id"]) for t in pure] == [(g, t) for g in range(3) for t in range(2)]
    assert all(isinstance(t["llm_decision"], int) and 0 <= t["llm_decision"] < 3 for t in pure)
    for t in mixed:  # mixed mode: the probability list
        assert isinstance(t["llm_decision"], list) and len(t["llm_decision"]) == 3
        assert sum(t["llm_decision"]) == pytest.approx(1.0)
        assert t["nash_gap"] == pytest.approx(t["best_response_value"] - t["llm_value"])
    pure_summary = _load(top / "summary_pure_actions.json")
    mixed_summary = _load(top / "summary_mixed_strategy.json")
    assert list(pure_summary) == PURE_SUMMARY and list(mixed_summary) == MIXED_SUMMARY
    assert mixed_summary["mode"] == "mixed_strategy"
    assert (pure_summary["num_games"], pure_summary["num_trials_per_game"],
            pure_summary["total_trials"]) == (3, 2, 6)
    assert pure_summary["mean_nash_gap"] == pytest.approx(sum(t["nash_gap"] for t in pure) / 6)
    # distbench's own run, untouched, in the folder of the same name inside.
    inner = top / "pure_and_mixed_latest"
    assert "groups" in _load(inner / "summary.json")
    assert _load(inner / "manifest.json")["run_id"] == "pure_and_mixed_latest"

    # export --format seed on a plain run of the same games writes the same files.
    plain = distbench("run", *RUN_ARGS, "--run-id", "plain", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    export = distbench("export", "results/plain", "--format", "seed", "--out", "exp", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == COMBINED
    for name in COMBINED:
        assert (tmp_path / "exp" / name).read_text() == (top / name).read_text(), name
    # ... and on a seed folder, whose run it finds inside.
    again = distbench("export", str(top), "--format", "seed", "--out", "exp2", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "exp2" / "games.json").read_text() == (top / "games.json").read_text()


def test_a_single_mode_seed_run_is_a_run_folder_with_games_trials_and_summary(tmp_path):
    run = distbench("run", "--num-games", "2", "--num-trials", "3", "--llm-type", "dummy",
                    "--mode", "mixed", "--no-parallel", "--output-format", "seed", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (top,) = (tmp_path / "results").iterdir()
    assert re.fullmatch(r"run_\d{8}_\d{6}", top.name)
    assert sorted(p.name for p in top.iterdir() if p.is_file()) == [
        "games.json", "summary.json", "trials.json"]
    trials = _load(top / "trials.json")
    assert len(trials) == 6 and all(list(t) == TRIAL for t in trials)
    assert all(isinstance(t["llm_decision"], list) for t in trials)
    assert list(_load(top / "summary.json")) == MIXED_SUMMARY
    assert "groups" in _load(top / top.name / "summary.json")


def test_export_seed_of_a_folder_that_is_no_run_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = distbench("export", "empty", "--format", "seed", cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "empty" in lines[0], lines


def test_the_seed_suite_command_line_runs_with_space_separated_lists(tmp_path):
    args = ["sweep", "run", "--use-dummy", "--providers", "dummy", "--bucket-ids",
            "2x2_lowVar_pure", "3x3_midVar_mixed", "--seeds", "42", "43",
            "--num-games-per-bucket", "2", "--num-trials", "2", "--no-parallel"]
    run = distbench(*args, "--run-id", "s", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    report = tmp_path / "results" / "s" / "report"
    rows = (report / "big_table_all_runs.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 2 * 2 * 2  # header + buckets x seeds x modes
    meta = _load(report / "suite_metadata.json")
    assert meta["seeds"] == [42, 43] and meta["buckets"] == ["2x2_lowVar_pure", "3x3_midVar_mixed"]

    seed = distbench(*args, "--output-format", "seed", cwd=tmp_path)
    assert seed.returncode == 0, seed.stderr
    (top,) = (tmp_path / "results").glob("tiered_suite_*")
    assert re.fullmatch(r"tiered_suite_\d{8}_\d{6}", top.name)
    for name in ("big_table_all_runs.csv", "big_table_aggregated.csv", "big_table_aggregated.md",
                 "suite_metadata.json"):
        assert (top / name).is_file(), name  # the suite tables in the run folder itself
    games = _load(top / "games" / "seed_43" / "3x3_midVar_mixed.json")
    assert [g["game_id"] for g in games] == [0, 1]
    assert list(games[0]) == ["game_id", "bucket_id", "seed", "payoff_matrix",
                              "nash_equilibrium_row", "nash_equilibrium_col", "equilibrium_type",
                              "payoff_std"]
    (model,) = (top / "model_runs" / "seed_43" / "3x3_midVar_mixed" / "dummy").iterdir()
    assert sorted(p.name for p in model.iterdir()) == [
        "summary_mixed.json", "summary_pure.json", "trials_mixed.json", "trials_pure.json"]
    assert list(_load(model / "summary_pure.json")) == PURE_SUMMARY
    assert all(isinstance(t["llm_decision"], list) for t in _load(model / "trials_mixed.json"))


def test_sweep_plan_takes_the_seeds_tier_examples_and_prints_built_in_tiers(tmp_path):
    plan = distbench("sweep", "plan", "--providers", "together", "openai",
                     "--openai-model-tiers-json", '{"A":["x"],"B":["y"],"C":[]}',
                     "--bucket-ids", "2x2_lowVar_pure", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "openai tier A: x" in plan.stdout and "openai tier B: y" in plan.stdout
    assert "openai tier C" not in plan.stdout  # an empty tier is skipped
    assert ("together tier A (built-in): meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo, "
            "Qwen/Qwen2.5-72B-Instruct-Turbo") in plan.stdout
    assert "together tier C (built-in): meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo" in plan.stdout
    default = distbench("sweep", "plan", "--providers", "openai", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert "openai tier A (built-in): gpt-4o\n" in default.stdout
    assert "openai tier B (built-in): gpt-4o-mini\n" in default.stdout


@pytest.mark.parametrize(
    "args, joined",
    [
        (["--seeds", "42", "43"], ["--seeds", "42,43"]),
        (["--seeds", "42,43", "44"], ["--seeds", "42,43,44"]),
        (["--providers", "together", "openai", "--seeds", "1"],
         ["--providers", "together,openai", "--seeds", "1"]),
        (["--bucket-ids", "2x2_lowVar_pure", "spec.toml"], ["--bucket-ids", "2x2_lowVar_pure",
                                                            "spec.toml"]),
        (["--seeds", "42", "my-spec"], ["--seeds", "42", "my-spec"]),
        (["--seeds", "--use-dummy"], ["--seeds", "--use-dummy"]),
        (["--", "--seeds", "1", "2"], ["--", "--seeds", "1", "2"]),
    ],
)
def test_list_flags_take_the_words_up_to_the_next_flag(args, joined):
    assert join_list_flags(args) == joined


def test_an_empty_tier_is_skipped_and_a_spec_without_any_model_is_refused():
    spec = parse_spec({"providers": {"dummy": {"tiers": {"A": ["random"], "C": []}}}})
    assert [(m.tier, m.spec.model) for m in spec.models] == [("A", "random")]
    with pytest.raises(SpecError, match="every tier is empty"):
        parse_spec({"providers": {"dummy": {"tiers": {"A": [], "C": []}}}})


# The seed suite's tables and metadata, as run_tiered_research_suite.py (github.com/zehao-zhao/
# reasoning_in_game, commit 7b3d251) writes them; written out here, not imported.
SUITE_ROW = ["seed", "provider", "bucket_id", "equilibrium_target", "num_rows", "num_cols",
             "payoff_min", "payoff_max", "tier", "model", "mode", "num_games",
             "num_trials_per_game", "total_trials", "mean_nash_gap", "median_nash_gap",
             "std_nash_gap", "min_nash_gap", "max_nash_gap", "mean_llm_value",
             "reference_value", "parse_success_rate", "decision_source_counts"]
SUITE_AGG = ["provider", "bucket_id", "equilibrium_target", "num_rows", "num_cols",
             "payoff_min", "payoff_max", "tier", "model", "mode",
             "mean_nash_gap_mean", "mean_nash_gap_std_across_seeds",
             "median_nash_gap_mean", "median_nash_gap_std_across_seeds",
             "std_nash_gap_mean", "std_nash_gap_std_across_seeds",
             "mean_llm_value_mean", "mean_llm_value_std_across_seeds",
             "reference_value_mean", "reference_value_std_across_seeds",
             "parse_success_rate_mean", "parse_success_rate_std_across_seeds", "seeds"]
SUITE_MD = ["provider", "bucket_id", "mode", "tier", "model", "mean_nash_gap_mean",
            "mean_nash_gap_std_across_seeds", "mean_llm_value_mean", "reference_value_mean",
            "parse_success_rate_mean"]
SUITE_METADATA = ["created_at", "num_games_per_bucket", "num_trials", "seeds", "temperature",
                  "num_workers", "providers", "buckets", "together_model_tiers",
                  "openai_model_tiers"]
SUITE_BUCKET = ["bucket_id", "num_rows", "num_cols", "payoff_range", "nash_type"]


def _csv(path):
    import csv

    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_a_seed_format_sweep_writes_the_seed_suites_tables_and_metadata_exactly(tmp_path):
    run = distbench("sweep", "run", "--use-dummy", "--providers", "together", "openai",
                    "--openai-model-tiers-json", '{"A": ["gpt-4o"], "B": ["gpt-4o-mini"]}',
                    "--bucket-ids", "2x2_lowVar_pure", "3x3_midVar_mixed", "--seeds", "42",
                    "43", "--num-games-per-bucket", "2", "--num-trials", "2", "--payoffs",
                    "seed", "--no-parallel", "--output-format", "seed", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (top,) = (tmp_path / "results").glob("tiered_suite_*")

    header, rows = _csv(top / "big_table_all_runs.csv")
    assert header == SUITE_ROW
    together = [f"dummy_tier_{t}_{k}" for t in "ABC" for k in (1, 2)]  # two models a tier
    models = [("together", m) for m in together] + [("openai", "dummy_tier_A"),
                                                     ("openai", "dummy_tier_B")]
    # The seed's loops: seed, bucket, model (providers and tiers in order), mode.
    assert [(r["seed"], r["bucket_id"], r["provider"], r["model"], r["mode"]) for r in rows] == [
        (s, b, p, m, mode) for s in ("42", "43") for b in ("2x2_lowVar_pure", "3x3_midVar_mixed")
        for p, m in models for mode in ("pure", "mixed")]
    first = rows[0]
    assert (first["equilibrium_target"], first["num_rows"], first["payoff_min"],
            first["payoff_max"], first["tier"]) == ("pure", "2", "-10", "10", "A")
    # Each row is its model folder's summary (the seed's provider folder, not 'dummy').
    for r in rows:
        folder = (top / "model_runs" / f"seed_{r['seed']}" / r["bucket_id"] / r["provider"]
                  / r["model"])
        summary = _load(folder / f"summary_{r['mode']}.json")
        assert float(r["mean_nash_gap"]) == pytest.approx(summary["mean_nash_gap"])
        reference = summary.get("mean_br_value", summary.get("mean_nash_value"))
        assert float(r["reference_value"]) == pytest.approx(reference)
        assert json.loads(r["decision_source_counts"]) == summary["decision_source_counts"]
    assert not (top / "model_runs" / "seed_42" / "2x2_lowVar_pure" / "dummy").exists()

    header, agg = _csv(top / "big_table_aggregated.csv")
    assert header == SUITE_AGG
    assert len(agg) == 2 * len(models) * 2  # buckets x models x modes
    keys = [(a["provider"], a["bucket_id"], a["mode"], a["tier"], a["model"]) for a in agg]
    assert keys == sorted(keys)
    a = agg[0]
    pair = [float(r["mean_nash_gap"]) for r in rows
            if (r["provider"], r["bucket_id"], r["mode"], r["model"])
            == (a["provider"], a["bucket_id"], a["mode"], a["model"])]
    assert len(pair) == 2 and a["seeds"] == "42,43"
    assert float(a["mean_nash_gap_mean"]) == pytest.approx(sum(pair) / 2)
    assert float(a["mean_nash_gap_std_across_seeds"]) == pytest.approx(abs(pair[0] - pair[1]) / 2)
    md = (top / "big_table_aggregated.md").read_text().splitlines()
    assert md[0] == "| " + " | ".join(SUITE_MD) + " |" and len(md) == 2 + len(agg)

    meta = _load(top / "suite_metadata.json")
    assert list(meta) == SUITE_METADATA
    assert re.fullmatch(r"\d{8}_\d{6}", meta["created_at"]) and top.name.endswith(meta["created_at"])
    assert (meta["num_games_per_bucket"], meta["num_trials"], meta["seeds"]) == (2, 2, [42, 43])
    assert meta["providers"] == ["together", "openai"]
    assert [list(b) for b in meta["buckets"]] == [SUITE_BUCKET] * 2
    assert meta["buckets"][1] == {"bucket_id": "3x3_midVar_mixed", "num_rows": 3, "num_cols": 3,
                                  "payoff_range": [-50, 50], "nash_type": "mixed"}
    assert meta["openai_model_tiers"] == {"A": ["gpt-4o"], "B": ["gpt-4o-mini"], "C": []}
    assert meta["together_model_tiers"]["C"] == ["meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
                                                 "Qwen/Qwen2.5-7B-Instruct-Turbo"]

    # --payoffs seed: the seed's real payoffs in the bucket's range, under the seed's bucket name.
    games = _load(top / "games" / "seed_42" / "3x3_midVar_mixed.json")
    payoffs = [x for g in games for row in g["payoff_matrix"] for x in row]
    assert all(-50 <= x <= 50 for x in payoffs) and any(x != round(x) for x in payoffs)
    assert {g["bucket_id"] for g in games} == {"3x3_midVar_mixed"}
    inner = top / top.name
    assert (inner / "report" / "big_table_all_runs.csv").is_file()  # distbench's own tables
    assert "3x3_midVarFloat_mixed" in (inner / "report" / "big_table_all_runs.csv").read_text()

    # export --format seed of the run writes the same tables.
    export = distbench("export", str(top), "--format", "seed", "--out", "exp", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    for name in ("big_table_all_runs.csv", "big_table_aggregated.csv", "big_table_aggregated.md"):
        assert (tmp_path / "exp" / name).read_text() == (top / name).read_text(), name


def test_payoffs_seed_draws_the_seed_tools_floats_in_a_plain_run(tmp_path):
    run = distbench("run", "--num-games", "3", "--num-trials", "1", "--llm-type", "dummy",
                    "--payoffs", "seed", "--no-parallel", "--run-id", "f", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    export = distbench("export", "results/f", "--format", "seed", "--out", "exp", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    payoffs = [x for g in _load(tmp_path / "exp" / "games.json") for row in g["payoff_matrix"]
               for x in row]
    assert len(payoffs) == 27 and all(-100 <= x <= 100 for x in payoffs)
    assert any(x != round(x) for x in payoffs) and max(map(abs, payoffs)) > 50
    manifest = _load(tmp_path / "results" / "f" / "manifest.json")
    assert "3x3_highVarFloat_any" in json.dumps(manifest)
    bad = distbench("run", "--bucket", "3x3_midVar_mixd", "--payoffs", "seed", "--llm-type",
                    "dummy", cwd=tmp_path)
    assert bad.returncode != 0 and bad.stderr.strip().startswith("error: ")
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
