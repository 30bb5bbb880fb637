"""``distbench compare`` of two tournaments: per shared player the difference of its
Bradley–Terry strength and Nash-averaging rating with bootstrap bands over the games of both
runs, the players of one run listed; one line when the runs are not two tournaments of one
family."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.cli.compare import compare
from distbench.cli.tournament import tournament
from distbench.errors import UserError
from distbench.report.ratings import compare_ratings


def _matches(theta: dict[str, float], labels: list[str], per_pair: int, seed: int):
    rng = np.random.default_rng(seed)
    a, b, o = [], [], []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            p = 1.0 / (1.0 + math.exp(-(theta[labels[i]] - theta[labels[j]])))
            for k in range(per_pair):
                first, second = (i, j) if k % 2 == 0 else (j, i)
                win_i = rng.random() < p
                a.append(first)
                b.append(second)
                o.append(float(win_i if first == i else not win_i))
    o = np.array(o)
    return np.array(a), np.array(b), o, 2.0 * o - 1.0


def test_a_player_who_got_stronger_is_found_and_the_others_are_not():
    before = {"x": 1.0, "y": 0.0, "z": -1.0}
    after = {"x": 1.0, "y": 2.0, "z": -1.0, "w": 0.0}  # y improved; w joined
    la, lb = ["x", "y", "z"], ["w", "x", "y", "z"]
    cmp = compare_ratings(la, _matches(before, la, 60, 1), lb, _matches(after, lb, 60, 2),
                          seed=3, resamples=200)
    assert cmp.players == ["x", "y", "z"] and cmp.only_a == [] and cmp.only_b == ["w"]
    y = cmp.players.index("y")
    assert cmp.bt_low[y] > 0  # y's gain is outside the band
    # re-centred over the shared players: the true differences are -2/3, +4/3, -2/3
    assert np.all((cmp.bt_low <= [-2 / 3, 4 / 3, -2 / 3]) & ([-2 / 3, 4 / 3, -2 / 3] <= cmp.bt_high))
    assert abs(cmp.bt_a.sum()) < 1e-9 and abs(cmp.bt_b.sum()) < 1e-9
    assert np.all(cmp.bt_low <= cmp.bt_diff) and np.all(cmp.bt_diff <= cmp.bt_high)
    assert cmp.matches_a.tolist() == [120, 120, 120] and cmp.matches_b.tolist() == [180] * 3
    # the same data twice: every difference 0, inside its band
    same = compare_ratings(la, _matches(before, la, 30, 1), la, _matches(before, la, 30, 1),
                           seed=3, resamples=100)
    assert np.allclose(same.bt_diff, 0) and np.allclose(same.nash_diff, 0)
    assert np.all(same.bt_low <= 0) and np.all(same.bt_high >= 0)
    with pytest.raises(ValueError, match="no player in common"):
        compare_ratings(["p"] * 1 + ["q"], _matches({"p": 0, "q": 0}, ["p", "q"], 4, 0),
                        ["r", "s"], _matches({"r": 0, "s": 0}, ["r", "s"], 4, 0), seed=0,
                        resamples=0)


def _tournament(tmp_path, run_id: str, family: str, players: str, seed: int):
    result = CliRunner().invoke(tournament, [
        "--family", family, "--players", players, "--num-instances", "3", "--seed", str(seed),
        "--resamples", "50", "--run-id", run_id, "--output-dir", str(tmp_path),
        "--no-parallel"])
    assert result.exit_code == 0, result.output


def test_compare_two_negotiation_tournaments(tmp_path):
    _tournament(tmp_path, "t1", "negotiation", "scripted:fair,scripted:greedy", 0)
    _tournament(tmp_path, "t2", "negotiation",
                "scripted:fair,scripted:greedy,scripted:random", 1)
    out = CliRunner().invoke(compare, [str(tmp_path / "t1"), str(tmp_path / "t2")])
    assert out.exit_code == 0, out.output
    assert "negotiation tournaments: a = t1, b = t2" in out.output
    assert "only in a (t1): none; only in b (t2): scripted:random" in out.output
    assert "95% simultaneous bands" in out.output
    as_json = CliRunner().invoke(compare, [str(tmp_path / "t1"), str(tmp_path / "t2"),
                                           "--format", "json", "--out", str(tmp_path / "o")])
    rows = json.loads(as_json.output)
    assert [r["player"] for r in rows] == ["scripted:fair", "scripted:greedy"]
    assert all(r["games_a"] == 6 and r["games_b"] == 12 for r in rows)
    assert all(r["bt_low"] <= r["bt_diff"] <= r["bt_high"] for r in rows)
    assert (tmp_path / "o" / "ratings.csv").read_text().startswith("player,games_a")


def test_runs_that_are_not_two_tournaments_of_one_family_get_one_line(tmp_path):
    _tournament(tmp_path, "n", "negotiation", "scripted:fair,scripted:greedy", 0)
    _tournament(tmp_path, "f", "fog", "tier1,tier2", 0)
    out = CliRunner().invoke(compare, [str(tmp_path / "n"), str(tmp_path / "f")])
    assert isinstance(out.exception, UserError)
    message = str(out.exception)
    assert "\n" not in message
    assert "n is a negotiation tournament, f is a fog tournament" in message
    _tournament(tmp_path, "n2", "negotiation", "scripted:fair,scripted:random", 2)
    three = CliRunner().invoke(compare, [str(tmp_path / p) for p in ("n", "n2", "f")])
    assert isinstance(three.exception, UserError) and "two tournaments" in str(three.exception)


def test_a_tournament_and_a_plain_run_are_compared_by_family_with_a_note(tmp_path):
    from distbench.engine.driver import run_plan
    from distbench.games.fog.plan import FogRunConfig, plan_fog

    _tournament(tmp_path, "f", "fog", "tier1,tier2", 0)
    run_plan(plan_fog(FogRunConfig(pairings=(("tier2", "tier1"),), num_games=2), "p"),
             tmp_path / "p", parallel=False)
    out = CliRunner().invoke(compare, [str(tmp_path / "f"), str(tmp_path / "p")])
    assert out.exit_code == 0, out.output
    assert ("note: no rating comparison: it takes two tournaments of one family (f is a fog "
            "tournament, p is not a tournament)") in out.output
    assert "fog: leaderboard" in out.output
