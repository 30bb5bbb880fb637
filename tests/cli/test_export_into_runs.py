"""No command but a resume changes a committed run: ``export`` refuses an output folder inside a
run (another run's, or its own tables), and clembench trees merge or refuse, never overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_server import distbench


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _negotiation(cwd: Path, run_id: str, seed: str) -> None:
    out = distbench("run", "--family", "negotiation", "--llm-type", "scripted:fair",
                    "--opponent", "scripted:random", "--num-games", "2", "--mode", "semi",
                    "--lang", "en", "--seed", seed, "--no-parallel", "--run-id", run_id, cwd=cwd)
    assert out.returncode == 0, out.stderr


def _refused(result, fragment: str) -> None:
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    cwd = tmp_path_factory.mktemp("runs")
    for run_id in ("m1", "m2"):
        out = distbench("run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
                        "--no-parallel", "--run-id", run_id, cwd=cwd)
        assert out.returncode == 0, out.stderr
    _negotiation(cwd, "n1", "1")
    _negotiation(cwd, "n2", "2")
    return cwd


@pytest.mark.parametrize("run, fmt, out", [
    ("m1", "json", "results/m2"), ("m1", "json", "results/m1/trials"),
    ("m1", "json", "results/m1"), ("m1", "seed", "results/m2/export"),
    ("n1", "clembench", "results/n1"), ("n1", "clembench", "results/m1/tree"),
    ("n1", "json", "results/n2/episodes"),
])
def test_export_into_a_run_is_refused_in_one_line(runs, run, fmt, out):
    before = _snapshot(runs / "results")
    result = distbench("export", f"results/{run}", "--format", fmt, "--out", out, cwd=runs)
    _refused(result, "inside the run")
    assert _snapshot(runs / "results") == before


def test_a_run_exported_into_its_own_export_folder_still_works(runs):
    result = distbench("export", "results/m1", "--out", "results/m1/export/again", cwd=runs)
    assert result.returncode == 0, result.stderr
    assert (runs / "results" / "m1" / "export" / "again" / "trials.json").is_file()


def test_a_second_clembench_export_into_one_tree_merges_or_refuses(runs, tmp_path):
    tree = tmp_path / "tree"
    first = distbench("export", "results/n1", "--format", "clembench", "--out", str(tree),
                      cwd=runs)
    assert first.returncode == 0, first.stderr
    written = _snapshot(tree)
    assert len(written) == 12  # 2 episodes x 2 seat orders x 3 files
    again = distbench("export", "results/n1", "--format", "clembench", "--out", str(tree),
                      cwd=runs)  # the same run again: nothing changes
    assert again.returncode == 0, again.stderr
    assert _snapshot(tree) == written
    other = distbench("export", "results/n2", "--format", "clembench", "--out", str(tree),
                      cwd=runs)  # the same pair and experiment, other episodes: refused
    _refused(other, "nothing was written")
    assert _snapshot(tree) == written
