"""``distbench compare`` on two openspiel runs: the headline first, paired over the same deals
(game, seed, match index and seat), then regret over valid moves."""

from __future__ import annotations

import pytest
from cli_server import distbench

pytest.importorskip("pyspiel")


def test_compare_pairs_two_openspiel_runs_on_the_headline(tmp_path):
    for name, seed in (("a", "1"), ("b", "2")):
        out = distbench("run", "--family", "openspiel", "--game", "kuhn_poker", "--llm-type",
                        "dummy", "--llm-seed", seed, "--num-games", "6", "--run-id", name,
                        "--no-parallel", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    out = distbench("compare", "results/a", "results/b", "--format", "csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # the paired table: family,group,metric,subset,a,b,shared,... (after the leaderboard)
    paired = [row for row in (line.split(",") for line in out.stdout.splitlines())
              if row[:2] == ["openspiel", "kuhn_poker vs random"]
              and row[3] in ("all trials", "valid only in both runs")]
    metrics = [row[2] for row in paired]
    assert metrics[0] == "quality" and "regret" in metrics
    quality = paired[0]
    assert quality[3] == "all trials" and quality[6] == "12"  # 6 deals x 2 seats, shared
