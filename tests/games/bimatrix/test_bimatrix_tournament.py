"""The bimatrix family in a tournament: seats, players, paired pairings, the normalised seat
score, forfeits, a planted order through the real engine, the CLI and its resume."""

from __future__ import annotations

import numpy as np
import pytest
from cli_server import distbench

from distbench.cli.tournament import run_tournament
from distbench.engine.tournament import Tournament, plan_tournament
from distbench.games.base import PairingSettings
from distbench.games.bimatrix.plan import BimatrixRunConfig
from distbench.games.bimatrix.plan import plan_shards as trial_shards
from distbench.games.bimatrix.runner import normalised, run_pair_shard
from distbench.games.bimatrix.schema import BIMATRIX_DUELS
from distbench.games.bimatrix.tournament import BimatrixPairConfig, plan_shards, player
from distbench.games.registry import get_family
from distbench.llm.base import Response
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

PD = {"sets": ["class:prisoners_dilemma"]}


def test_quick_bimatrix_declares_its_seats_and_players():
    family = get_family("bimatrix")
    assert family.pairable and family.seats == ("row", "col")
    assert family.tournament_player("eq") == ("eq", "eq")
    assert player("equilibrium") == ("eq", "eq") and player("maxmin") == ("maxmin", "maxmin")
    spec, label = family.tournament_player("dummy:uniform")
    assert spec.provider == "dummy" and label == "dummy:uniform"
    with pytest.raises(ValueError, match="eq|uniform|maxmin|class") as err:
        player("nash")
    assert "\n" not in str(err.value)


def test_quick_ordinary_runs_keep_their_shards():
    """Making the family pairable changes no existing run's identity (ids from before)."""
    config = BimatrixRunConfig(sets=("class:prisoners_dilemma", "3x3_midVar"),
                               llm=make_spec("dummy"), num_games=30, shard_games=20)
    assert [s.shard_id for s in trial_shards(config)] == [
        "bm-ae3b64357dc2c559", "bm-be0a446e006459ec", "bm-7cd0f672c2731e7b",
        "bm-cfb06977d095e78b"]


def test_quick_pairing_spreads_instances_over_sets_in_both_orders():
    family = get_family("bimatrix")
    tour = Tournament.build(family, ["eq", "uniform", "maxmin"],
                            PairingSettings(num_instances=10, options={
                                "sets": ["class:stag_hunt", "class:chicken", "2x3_lowVar"]}))
    plan = plan_tournament(tour, "r")
    assert len(plan.shards) == 3  # one per pair
    assert plan.shards[0].games() == [("class:stag_hunt", 0, 4), ("class:chicken", 0, 3),
                                      ("2x3_lowVar", 0, 3)]
    assert sum(s.num_units for s in plan.shards) == 3 * 10 * 2
    assert plan_tournament(tour, "r").identity == plan.identity
    with pytest.raises(ValueError, match="class games"):
        BimatrixPairConfig("class", "eq", sets=("3x3_midVar",))


def test_quick_normalised_score_spans_the_seats_payoff_range():
    p = np.array([[3.0, 0.0], [5.0, 1.0]])
    assert normalised(5.0, p) == 1.0 and normalised(0.0, p) == 0.0
    assert normalised(2.5, p) == pytest.approx(0.5)
    assert normalised(7.0, np.full((2, 2), 7.0)) == 1.0


class _Backend:
    """Stands in for a model in this unit test: answers every request with ``text``."""

    def __init__(self, text: str | None, status: str = "ok") -> None:
        self.text, self.status = text, status

    async def generate(self, requests):
        return [Response(text=self.text, status=self.status, latency_ms=1.0,
                         error=None if self.status == "ok" else "boom") for _ in requests]


def test_quick_an_invalid_answer_forfeits_and_a_failed_call_is_left_out():
    model = make_spec("openai:gpt-4o-mini")
    config = BimatrixPairConfig(model, "uniform", sets=("class:prisoners_dilemma",),
                                num_games=2)
    shard = plan_shards(config, "r")[0]
    rows = run_pair_shard(shard, {model: _Backend("I would rather not say")}
                          ).tables["bimatrix_duels"][1].to_pylist()
    assert len(rows) == 4 and {r["status"] for r in rows} == {"forfeit"}
    for r in rows:
        mine = "row" if r["player_row"] == "openai:gpt-4o-mini" else "col"
        other = "col" if mine == "row" else "row"
        assert r[f"score_{mine}"] == 0.0 and r[f"score_{other}"] == 1.0
        assert r[f"raw_{mine}"] == "I would rather not say" and r[f"strategy_{mine}"] is None
        assert r[f"status_{mine}"] != "ok"
    failed = run_pair_shard(shard, {model: _Backend(None, "error")})
    rows = failed.tables["bimatrix_duels"][1].to_pylist()
    assert {r["status"] for r in rows} == {"call_failed"}
    assert all(r["score_row"] is None for r in rows)
    assert failed.tables["bimatrix_duels"][1].schema.equals(BIMATRIX_DUELS,
                                                            check_metadata=False)


def test_equilibrium_beats_uniform_beats_cooperation_in_the_prisoners_dilemma(tmp_path):
    """In a symmetric PD the player with more weight on the dominant action gets the higher
    payoff in every game, so eq (defect) > uniform > class (cooperate) by construction."""
    family = get_family("bimatrix")
    tour = Tournament.build(family, ["class", "uniform", "eq"],
                            PairingSettings(num_instances=12, options=PD), resamples=200)
    outcome, result = run_tournament(tour, tmp_path / "t", parallel=False)
    assert outcome.executed == 3
    assert [r["player"] for r in result.ratings] == ["eq", "uniform", "class"]
    top, mid, low = result.ratings
    assert top["wins"] == 48.0 and low["wins"] == 0.0  # 2 opponents x 12 games x 2 orders
    assert top["bt_low"] > mid["bt_high"] and mid["bt_low"] > low["bt_high"]
    assert top["nash_mass"] == pytest.approx(1.0)
    con = open_run(tmp_path / "t")
    assert con.execute("select count(*) from ratings").fetchone() == (3,)
    assert con.execute("select count(*), sum(matches) from pairings").fetchone() == (3, 72)
    # paired: every game of a pair in both seat orders
    assert set(con.execute(
        "select count(*), count(distinct player_row) from bimatrix_duels group by game_id, "
        "least(player_row, player_col), greatest(player_row, player_col)").fetchall()) == {(2, 2)}
    con.close()


def test_cli_prints_the_ranking_and_a_rerun_plays_nothing(tmp_path):
    args = ("tournament", "--family", "bimatrix", "--players", "eq,uniform,maxmin,dummy",
            "--num-instances", "8", "--run-id", "b", "--resamples", "100", "--no-parallel")
    first = distbench(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "95% interval" in first.stdout and "dummy:random" in first.stdout
    assert "6 shard(s) run, 0 already committed" in first.stderr  # 6 pairs, one set chunk each
    again = distbench(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 shard(s) run, 6 already committed" in again.stderr
    assert again.stdout == first.stdout
    con = open_run(tmp_path / "results" / "b")
    assert con.execute("select count(*), count(distinct duel_id) from bimatrix_duels"
                       ).fetchone() == (6 * 8 * 2, 6 * 8 * 2)
    con.close()
    bad = distbench("tournament", "--family", "bimatrix", "--players", "eq,nash", cwd=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "'nash'" in bad.stderr
