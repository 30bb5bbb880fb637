"""Every family's console summary of ``distbench run`` fits 100 columns by default (the table
cut into blocks of columns, the notes wrapped), with one interval style and no raw SQL column
names; ``--wide`` prints today's single table."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

RUNS = {
    "matrix": ["--llm-type", "dummy", "--combined", "--num-games", "4",
               "--num-trials", "2"],
    "bimatrix": ["--llm-type", "dummy", "--class", "stag_hunt", "--class", "chicken",
                 "--num-games", "3", "--num-trials", "2", "--opponent", "eq,self"],
    "repeated": ["--llm-type", "dummy", "--opponent", "TitForTat", "--rounds", "3",
                 "--num-games", "3"],
    "negotiation": ["--llm-type", "scripted:fair", "--opponent", "scripted:greedy",
                    "--num-games", "3"],
    "fog": ["--agent", "tier2", "--opponent", "tier1", "--num-games", "3"],
    "openspiel": ["--llm-type", "dummy", "--game", "kuhn_poker", "--num-games", "4"],
    "gama": ["--llm-type", "dummy", "--game", "guessing", "--num-games", "3", "--option",
             "rounds=3"],
}
# the headline's name in each summary: GAMA's own score where the family reproduces GAMA-Bench
HEADLINE = {"gama": "GAMA score"}
_INTERVAL = re.compile(r"-?\d[\d.]* \[-?\d[\d.]*, -?\d[\d.]*\]")


def _run(cwd, family: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "distbench", "run", "--family", family, *RUNS[family],
         "--no-parallel", "--run-id", f"{family}{len(extra)}", *extra],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, "RAY_AUTH_MODE": "disabled", "COLUMNS": "100",
             "DISTBENCH_CACHE_DIR": str(cwd / "cache")})


@pytest.mark.parametrize("family", list(RUNS))
def test_the_run_summary_fits_100_columns(tmp_path, family):
    if family == "openspiel":
        pytest.importorskip("pyspiel")
    out = _run(tmp_path, family)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 100, out.stdout
    assert HEADLINE.get(family, "quality") in out.stdout, out.stdout
    assert "ci95" not in out.stdout, out.stdout
    assert not re.search(r"\b[a-z]+_[a-z_]+\b \[95% CI\]", out.stdout), out.stdout
    assert _INTERVAL.search(out.stdout), out.stdout  # value [low, high]
    wide = _run(tmp_path, family, "--wide")
    assert wide.returncode == 0, wide.stderr
    assert max(len(line) for line in wide.stdout.splitlines()) > 100


def test_compare_fits_100_columns_in_words(tmp_path):
    """``distbench compare`` on the console (issue 37): every line within 100 columns, each
    value and its interval one cell under a header in words, no raw column name."""
    for extra in ((), ("--llm-seed", "2")):  # run ids matrix0 and matrix2
        out = _run(tmp_path, "matrix", *extra)
        assert out.returncode == 0, out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "distbench", "compare", "results/matrix0", "results/matrix2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "RAY_AUTH_MODE": "disabled", "COLUMNS": "100"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100, out.stdout
    for raw in ("ci95", "p_holm", "mean_a", "run_id", "same_run"):
        assert raw not in out.stdout, out.stdout
    assert "diff [95% CI]" in out.stdout and "mean [95% CI]" in out.stdout
    assert _INTERVAL.search(out.stdout), out.stdout


def test_the_tournament_ranking_fits_100_columns_in_one_interval_style(monkeypatch):
    """A tournament's ratings printout (issue 37): within 100 columns even with long player
    names, Bradley–Terry's strength and its interval one cell ``+0.52 [+0.10, +0.90]``."""
    from distbench.cli.tournament import format_ranking

    monkeypatch.setenv("COLUMNS", "100")
    row = {"confidence": 0.95, "matches": 40, "wins": 25.5, "bt_strength": 0.52,
           "bt_low": 0.1, "bt_high": 0.9, "elo": 1540.0, "nash_mass": 0.5, "nash_rating": 0.0}
    ratings = [{**row, "rank": 1, "player": "openai:a-rather-long-model-name-2026-11-28-preview"},
               {**row, "rank": 2, "player": "scripted:fair", "bt_strength": -0.52,
                "bt_low": -0.9, "bt_high": -0.1, "nash_rating": None}]
    text = format_ranking(ratings)
    assert max(len(line) for line in text.splitlines()) <= 100, text
    assert "+0.52 [+0.10, +0.90]" in text and "95% interval" in text, text
    assert "openai:a-rather-long-model-name-2026-11-28-preview" in text
