"""Comparing separate runs: `distbench compare` and `distbench query` over several runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from distbench.report.sql import QUERIES_DIR, run_sql
from distbench.report.stats import pairwise_differences
from distbench.store.catalog import NotARunError, find_runs


def distbench(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)

_MATRIX = ("--num-games", "5", "--num-trials", "3", "--mode", "pure", "--no-parallel")


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """results/ with a, b (two models, seed 1), c (seed 2), two negotiation runs (two scripted
    players in self-play, same seed) and two fog runs (two tiers against tier1)."""
    cwd = tmp_path_factory.mktemp("compare")
    runs = [
        ("run", *_MATRIX, "--llm-type", "dummy", "--seed", "1", "--run-id", "a"),
        ("run", *_MATRIX, "--llm-type", "constant", "--llm-model", "Action: 1", "--seed", "1",
         "--run-id", "b"),
        ("run", *_MATRIX, "--llm-type", "constant", "--llm-model", "Action: 1", "--seed", "2",
         "--run-id", "c"),
        ("run", "--family", "negotiation", "--llm-type", "scripted:fair", "--num-games", "3",
         "--no-parallel", "--run-id", "n1"),
        ("run", "--family", "negotiation", "--llm-type", "scripted:greedy", "--num-games", "3",
         "--no-parallel", "--run-id", "n2"),
        ("run", "--family", "fog", "--agent", "tier3", "--opponent", "tier1", "--num-games", "3",
         "--no-parallel", "--run-id", "f1"),
        ("run", "--family", "fog", "--agent", "tier2", "--opponent", "tier1", "--num-games", "3",
         "--no-parallel", "--run-id", "f2"),
    ]
    for args in runs:
        result = distbench(*args, cwd=cwd)
        assert result.returncode == 0, result.stderr
    return cwd


def _json(work: Path, *args: str) -> dict:
    result = distbench("compare", *args, "--format", "json", cwd=work)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_two_models_on_the_same_seeds_get_paired_differences_with_cis(work):
    result = distbench("compare", "results/a", "results/b", cwd=work)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "matrix: a/dummy:random and b/constant:Action: 1 share 5 games (pure)" in out
    assert "paired comparisons" in out and "diff [95% CI]" in out
    # the headline first, with the units it rests on, the subset and the correction stated
    assert out.index("headline differences") < out.index("leaderboard")
    assert "matrix pure: headline quality a/dummy:random" in out
    assert "over 5 shared games (all trials)" in out
    assert "Holm's correction is applied across the 5 metrics" in out
    assert "warning: fewer than 30 shared games" in out
    assert "warning: 5 row(s) rest on fewer than 30 shared games" in out

    doc = _json(work, "results/a", "results/b")
    paired = {r["metric"]: r for r in doc["paired"]}
    assert list(paired) == ["quality", "valid_rate", "quality_of_valid", "exploitability",
                            "nash_gap"]
    assert {m: r["subset"] for m, r in paired.items()} == {
        "quality": "all trials", "valid_rate": "all trials",
        "quality_of_valid": "valid only in both runs",
        "exploitability": "valid only in both runs", "nash_gap": "valid only in both runs"}
    for r in paired.values():
        assert (r["a"], r["b"], r["group"], r["shared"]) == \
            ("a/dummy:random", "b/constant:Action: 1", "pure", 5)
        assert r["ci95_low"] <= r["diff"] <= r["ci95_high"]
        assert r["diff"] == pytest.approx(r["mean_a"] - r["mean_b"])
        assert r["verdict"] in ("a better", "b better", "no significant difference")
        assert r["p"] <= r["p_holm"] <= 1 and r["warning"] == "< 30 units"
    assert doc["shared"] == [{"family": "matrix", "a": "a/dummy:random",
                              "b": "b/constant:Action: 1", "same_run": False,
                              "shared": 5, "unit": "games", "groups": "pure"}]
    heads = [r for r in doc["leaderboard"] if r["metric"] == "quality"]
    assert doc["leaderboard"][:2] == heads  # ranked by the headline, the components after
    assert [(r["rank"], -r["mean"]) for r in heads] == sorted((r["rank"], -r["mean"])
                                                              for r in heads)
    board = [r for r in doc["leaderboard"] if r["metric"] == "exploitability"]
    assert [r["run_id"] for r in board] == [r["run_id"] for r in heads]  # the headline's order
    assert all(r["units"] == 5 and r["n"] == 15 for r in board)
    assert {r["run_id"]: r["mean"] for r in board} == \
        {"a": pytest.approx(paired["exploitability"]["mean_a"]),
         "b": pytest.approx(paired["exploitability"]["mean_b"])}


def test_paired_intervals_are_the_reports(work):
    """The per-game means of the report's SQL, paired with the report's bootstrap, give the
    numbers compare prints: the same units, the same seeded intervals."""
    sql = (QUERIES_DIR / "report_matrix_game_means.sql").read_text()
    labels, units, values = [], [], []
    for run in ("a", "b"):
        columns, rows = run_sql(work / "results" / run, sql)
        for row in rows:
            r = dict(zip(columns, row, strict=True))
            labels.append(f"{run}/{r['provider']}:{r['model']}")
            units.append(r["game_id"])
            values.append(r["mean_exploitability"])
    (expected,) = pairwise_differences(labels, units, values)
    (got,) = [r for r in _json(work, "results/a", "results/b")["paired"]
              if r["metric"] == "exploitability"]
    assert (got["shared"], got["diff"], got["ci95_low"], got["ci95_high"]) == \
        (expected.n, pytest.approx(expected.diff), pytest.approx(expected.ci_low),
         pytest.approx(expected.ci_high))


def test_runs_with_no_shared_instances_say_so(work):
    result = distbench("compare", "results/a", "results/c", cwd=work)
    assert result.returncode == 0, result.stderr
    assert "a/dummy:random and c/constant:Action: 1 share 0 games" in result.stdout
    assert "No two players share games" in result.stdout
    doc = _json(work, "results/a", "results/c")
    assert doc["paired"] == []
    assert [r["shared"] for r in doc["shared"]] == [0]


def test_a_folder_of_runs_compares_every_family_on_its_own_units(work, tmp_path):
    doc = _json(work, "results")
    assert {r["run_id"] for r in doc["runs"]} == {"a", "b", "c", "n1", "n2", "f1", "f2"}
    shared = {(r["family"], r["a"], r["b"]): r["shared"] for r in doc["shared"]}
    # Self-play of two players on the same instances; two tiers against the same opponent.
    assert shared[("negotiation", "n1/scripted:fair", "n2/scripted:greedy")] == 3
    assert shared[("fog", "f1/tier3", "f2/tier2")] == 3
    # A score against one opponent is not paired with a score against another.
    assert shared[("fog", "f1/tier1", "f2/tier1")] == 0
    groups = {(r["family"], r["group"]) for r in doc["paired"]}
    assert ("negotiation", "semi/en vs self") in groups
    assert any(f == "fog" and g.endswith("vs tier1") for f, g in groups)
    assert ("matrix", "pure") in groups

    written = distbench("compare", "results", "--out", str(tmp_path / "cmp"), cwd=work)
    assert written.returncode == 0, written.stderr
    for name in ("runs", "leaderboard", "shared", "paired"):
        assert (tmp_path / "cmp" / f"{name}.csv").read_text().startswith(
            {"runs": "run_id,", "leaderboard": "family,", "shared": "family,",
             "paired": "family,"}[name])


def test_query_over_a_folder_of_runs_has_a_run_id_per_row(work):
    result = distbench("query", "results", "select run_id, count(*) as n from trials "
                       "group by 1 order by 1", "--format", "csv", cwd=work)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["run_id,n", "a,15", "b,15", "c,15"]
    # Runs of different families together: a table a run lacks is absent from its union.
    mixed = distbench("query", "results/a", "results/n1", "select run_id, count(*) from "
                      "episodes group by 1", "--format", "csv", cwd=work)
    assert mixed.returncode == 0, mixed.stderr
    assert mixed.stdout.splitlines()[1:] == ["n1,6"]
    named = distbench("query", "results/a", "results/b", "--file", "leaderboard",
                      "--format", "csv", cwd=work)
    assert named.returncode == 0, named.stderr
    assert len(named.stdout.splitlines()) == 3


def test_a_multi_run_query_reads_the_given_runs_committed_files_only(work):
    other = work / "results" / "c" / "trials"
    (target,) = other.glob("*.parquet")
    for sql in (f"select count(*) from read_parquet('{target}')",
                "copy (select 1) to 'evil.csv'",
                "set enable_external_access = true"):
        with pytest.raises(Exception, match="query failed"):
            run_sql([work / "results" / "a", work / "results" / "b"], sql)
    assert not (work / "evil.csv").exists()


def test_find_runs_expands_folders_and_drops_repeats(work):
    results = work / "results"
    runs = find_runs([results / "b", results, results / "a"])
    assert [p.name for p in runs] == ["b", "a", "c", "f1", "f2", "n1", "n2"]
    with pytest.raises(NotARunError, match="no such run directory"):
        find_runs([results / "nope"])


def test_two_copies_of_one_run_are_refused_in_one_line(work, tmp_path):
    shutil.copytree(work / "results" / "a", tmp_path / "copy" / "a")
    result = distbench("compare", str(work / "results"), str(tmp_path / "copy" / "a"), cwd=work)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "same run id 'a'" in result.stderr


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["compare", "nowhere"], "no such run directory: nowhere"),
        (["compare", "empty"], "neither a distbench run directory nor a folder of runs"),
        (["compare"], "Missing argument"),
        (["query", "nowhere", "select 1"], "no such run directory: nowhere"),
        (["query", "empty", "select 1"], "neither a distbench run directory nor a folder"),
        (["query", "empty", "nowhere", "select 1"], "neither a distbench run directory"),
    ],
)
def test_bad_paths_are_one_line_with_exit_code_2(tmp_path, args, fragment):
    (tmp_path / "empty" / "not-a-run").mkdir(parents=True)
    result = distbench(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines
    assert "Traceback" not in result.stderr
