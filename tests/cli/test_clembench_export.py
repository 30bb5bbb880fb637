"""``distbench export --format clembench``: clembench's results tree, read by clemcore's own
``clemeval`` (from PyPI) unchanged; its % played and quality score per pairing equal
distbench's.

clemcore's full requirements would downgrade packages of distbench's environment (pillow), so
it is installed in a folder of its own and clemeval runs in a subprocess with that folder on
its path: ``pip install --target .clemcore clemcore`` at the repository root (or anywhere, named
by ``DISTBENCH_CLEMCORE_PATH``); a clemcore importable from the environment itself serves too.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_server import distbench

ROOT = Path(__file__).resolve().parents[2]
_EVAL = """
import json, sys
from clemcore.clemeval import perform_evaluation
df = perform_evaluation(sys.argv[1], return_dataframe=True)
print("RESULT " + json.dumps({m: {"played": float(r["dond, % Played"]),
                                  "quality": float(r["dond, Quality Score"])}
                              for m, r in df.iterrows()}))
"""


def clemeval(results: Path) -> dict[str, dict[str, float]]:
    """clemeval's results table of ``results``: model folder -> % played, quality score."""
    env = {**os.environ}
    if importlib.util.find_spec("clemcore") is None:
        where = Path(os.environ.get("DISTBENCH_CLEMCORE_PATH") or ROOT / ".clemcore")
        if not (where / "clemcore" / "clemeval.py").is_file():
            missing = f"clemcore is not installed: pip install --target {where} clemcore"
            if os.environ.get("CI"):  # the README's test command installs it: never skip in CI
                pytest.fail(missing)
            pytest.skip(missing)
        env["PYTHONPATH"] = os.pathsep.join([str(where), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", _EVAL, str(results)], env=env,
                          cwd=results.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    return json.loads(line[len("RESULT "):])


def ours(run: Path, cwd: Path) -> dict[str, dict[str, float]]:
    """distbench's clembench figures per pairing (seat a -- seat b), from its episodes view."""
    sql = ("SELECT player_a || '--' || player_b AS pair, "
           "100.0 * avg(CASE WHEN aborted THEN 0.0 ELSE 1.0 END) AS played, "
           "avg(clem_quality) AS quality FROM episodes GROUP BY ALL")
    result = distbench("query", str(run), sql, "--format", "json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return {r["pair"]: {"played": r["played"],
                        "quality": math.nan if r["quality"] is None else r["quality"]}
            for r in json.loads(result.stdout)}


def test_clemeval_reads_the_exported_tree_and_agrees_with_distbench(tmp_path):
    from distbench.mockserver import ServerConfig, start_server

    played = distbench("run", "--family", "negotiation", "--llm-type", "scripted:fair",
                       "--opponent", "scripted:random", "--num-games", "3", "--mode", "semi",
                       "--mode", "coop", "--mode", "comp", "--lang", "en", "--lang", "de",
                       "--no-parallel", "--run-id", "played", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    with start_server(ServerConfig(seed=3)) as server:  # its answers abort every episode
        aborted = distbench("run", "--family", "negotiation", "--llm-type", "llamacpp",
                            "--base-url", server.url, "--opponent", "scripted:greedy",
                            "--num-games", "2", "--mode", "semi", "--no-parallel",
                            "--run-id", "aborted", cwd=tmp_path)
    assert aborted.returncode == 0, aborted.stderr
    tree = tmp_path / "tree"
    for run in ("played", "aborted"):  # one clembench results folder holds both runs' pairs
        export = distbench("export", f"results/{run}", "--format", "clembench", "--out",
                           str(tree), cwd=tmp_path)
        assert export.returncode == 0, export.stderr

    pairs = sorted(p.name for p in tree.iterdir())
    assert pairs == ["llamacpp:mock--scripted:greedy", "scripted:fair--scripted:random",
                     "scripted:greedy--llamacpp:mock", "scripted:random--scripted:fair"]
    experiments = sorted(p.name for p in (tree / pairs[1] / "dond").iterdir())
    assert experiments == ["comp_de", "comp_en", "coop_de", "coop_en", "semi_de", "semi_en"]
    episode = tree / pairs[1] / "dond" / "semi_en" / "instance_00000"
    assert sorted(p.name for p in episode.iterdir()) == ["instance.json", "interactions.json",
                                                         "scores.json"]
    interactions = json.loads((episode / "interactions.json").read_text())
    assert list(interactions["players"]) == ["GM", "Player 1", "Player 2"]
    assert interactions["players"]["Player 1"]["model_name"] == "scripted:fair"
    assert interactions["turns"] and all(e["from"] in ("GM", "Player 1", "Player 2")
                                         for r in interactions["turns"] for e in r)
    scores = json.loads((episode / "scores.json").read_text())["episode scores"]
    assert {"Aborted", "Lose", "Success", "Main Score"} <= set(scores)
    assert "Played" not in scores  # clemeval computes it and refuses a game's own

    theirs = clemeval(tree)
    expected = {**ours(tmp_path / "results" / "played", tmp_path),
                **ours(tmp_path / "results" / "aborted", tmp_path)}
    assert set(theirs) == set(expected) == set(pairs)
    for pair, figures in expected.items():
        assert theirs[pair]["played"] == pytest.approx(round(figures["played"], 2), abs=1e-9)
        if math.isnan(figures["quality"]):
            assert math.isnan(theirs[pair]["quality"]), pair
        else:
            assert theirs[pair]["quality"] == pytest.approx(round(figures["quality"], 2),
                                                            abs=1e-9), pair
    assert {theirs[p]["played"] for p in pairs} == {0.0, 100.0}  # both kinds of episode
    assert 0 < theirs["scripted:fair--scripted:random"]["quality"] < 100


def test_export_clembench_of_a_matrix_run_is_one_line(tmp_path):
    run = distbench("run", "--num-games", "1", "--num-trials", "1", "--llm-type", "dummy",
                    "--no-parallel", "--run-id", "m", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = distbench("export", "results/m", "--format", "clembench", cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "negotiation" in lines[0], lines
