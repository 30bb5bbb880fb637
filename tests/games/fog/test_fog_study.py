"""The fog study: conditions, and the four benchmark metrics."""

from __future__ import annotations

import json
import math

from click.testing import CliRunner

from distbench.cli.services import CliServices
from distbench.games.fog.commands import commands
from distbench.games.fog.study import study_configs, study_metrics

fog = commands(CliServices())  # distbench fog, the fog family's own commands


def test_quick_study_plans_one_round_robin_per_condition_plus_scouting_off():
    configs = study_configs(10, 0, (0.5, 1.0))
    assert [(c.scouting, c.scout_accuracy) for c in configs] == [(True, 0.5), (True, 1.0), (False, 0.7)]


def test_quick_study_metrics_on_hand_made_games():
    def game(a, b, winner, acc, scouting, brier_a=0.5, brier_b=0.5):
        return {"agent_a": a, "agent_b": b, "winner": winner, "scout_accuracy": acc,
                "scouting": scouting, "brier_a": brier_a, "brier_b": brier_b}

    rows = (
        [game("tier4", "tier3", "a", 1.0, True)] * 3 + [game("tier4", "tier3", "b", 1.0, True)]
        + [game("tier4", "tier3", "a", 0.5, True), game("tier4", "tier3", "b", 0.5, True)]
        + [game("tier4", "tier3", "b", 0.7, False)] * 2
    )
    m = study_metrics(rows, reference_accuracy=1.0)
    assert m["scouting_value"]["tier4"] == 0.75 - 0.0
    assert m["scouting_value"]["tier3"] == 0.25 - 1.0
    anti = m["anti_calculability"]
    assert anti["accuracies"] == [0.5, 1.0] and anti["tier4_edge_over_tier3"] == [0.0, 0.25]
    assert math.isclose(anti["slope"], 0.5)
    assert math.isnan(m["belief_quality_vs_winning"])  # every Brier score equal: undefined


def test_the_study_command_runs_and_writes_its_metrics(tmp_path):
    result = CliRunner().invoke(fog, ["study", "--games-per-pairing", "4", "--accuracies",
                                      "0.5,1.0", "--run-id", "s", "--output-dir", str(tmp_path),
                                      "--no-parallel"])
    assert result.exit_code == 0, result.output
    for text in ("scouting on, accuracy 0.5", "scouting off", "scouting value",
                 "belief quality vs winning", "anti-calculability"):
        assert text in result.output
    metrics = json.loads((tmp_path / "s" / "study.json").read_text())
    assert set(metrics) == {"tier_gradient", "scouting_value", "belief_quality_vs_winning",
                            "anti_calculability"}
    assert len(metrics["tier_gradient"]) == 3
