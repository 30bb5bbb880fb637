"""The tournament section of ``distbench report``: ranking dot plot, pairwise heat map,
Nash-averaging mass, and the ratings and pairings tables as CSV and LaTeX."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")


def test_report_of_a_tournament_has_its_figures_and_tables(tmp_path):
    from distbench.cli.tournament import tournament
    from distbench.games.registry import report_parts
    from distbench.report.build import build_report

    result = CliRunner().invoke(tournament, [
        "--family", "fog", "--players", "tier1,tier2,tier3", "--num-instances", "2",
        "--resamples", "100", "--run-id", "t", "--output-dir", str(tmp_path), "--no-parallel"])
    assert result.exit_code == 0, result.output
    out = build_report(tmp_path / "t", tmp_path / "report", sections=report_parts())
    assert {"tournament_ranking", "tournament_pairwise", "tournament_nash_mass"} <= set(out.figures)
    assert {"tournament_ratings", "tournament_pairings"} <= set(out.tables)
    with open(tmp_path / "report" / "tables" / "tournament_ratings.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    assert {r["player"] for r in rows} == {"tier1", "tier2", "tier3"}
    assert (tmp_path / "report" / "tables" / "tournament_pairings.tex").read_text().count(
        "tier") >= 6
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Nash averaging" in html and "Tournament" in html


def test_report_of_a_plain_run_has_no_tournament_section(tmp_path):
    from distbench.engine.driver import run_plan
    from distbench.games.fog.plan import FogRunConfig, plan_fog
    from distbench.games.registry import report_parts
    from distbench.report.build import build_report

    config = FogRunConfig(pairings=(("tier2", "tier1"),), num_games=2)
    run_plan(plan_fog(config, "p"), tmp_path / "p", parallel=False)
    out = build_report(tmp_path / "p", tmp_path / "report", sections=report_parts())
    assert not any(f.startswith("tournament") for f in out.figures)
