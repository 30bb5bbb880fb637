"""The openspiel family in a tournament: seats (player ids 0 and 1), players (models, random,
equilibrium/solver, mcts), paired pairings, the game's return per seat, forfeits, a planted
order through the real engine, the CLI and its resume."""

from __future__ import annotations

import duckdb
import pytest
from cli_server import distbench

from distbench.cli.tournament import run_tournament
from distbench.engine.tournament import Tournament, plan_tournament
from distbench.games.base import PairingSettings
from distbench.games.openspiel.plan import OpenSpielRunConfig
from distbench.games.openspiel.plan import plan_shards as match_shards
from distbench.games.openspiel.runner import run_shard
from distbench.games.openspiel.tournament import outcomes, pairing, player, seat_scores
from distbench.games.registry import get_family
from distbench.llm.base import Response
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

TTT = {"game": "tic_tac_toe"}


def test_quick_openspiel_declares_its_seats_and_players():
    family = get_family("openspiel")
    assert family.pairable and family.seats == ("0", "1")
    assert player("solver") == ("equilibrium", "equilibrium")
    assert player("mcts") == ("mcts", "mcts")
    spec, label = player("dummy")
    assert spec.provider == "dummy" and label == "dummy:random"
    with pytest.raises(ValueError, match="random|equilibrium|mcts") as err:
        player("nosuch:thing")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="perfect-information"):
        pairing("mcts", "random", PairingSettings(num_instances=2))  # kuhn_poker by default


def test_quick_ordinary_runs_keep_their_shards():
    """Letting a scripted player sit in player_a changes no existing run's identity."""
    config = OpenSpielRunConfig(game="kuhn_poker", seeds=(1,), num_games=30,
                                player=make_spec("dummy"), opponent="random")
    assert [s.shard_id for s in match_shards(config)] == ["o-cd286bb774b70d31",
                                                          "o-6d4128f0a42ac07f"]
    with pytest.raises(ValueError, match="player must be a model"):
        OpenSpielRunConfig(game="kuhn_poker", seeds=(1,), num_games=2, player="random",
                           mode="logprob")


def test_quick_pairing_is_paired_and_stable():
    family = get_family("openspiel")
    tour = Tournament.build(family, ["random", "solver", "dummy"],
                            PairingSettings(num_instances=5, options=TTT))
    plan = plan_tournament(tour, "r")
    assert len(plan.shards) == 3 and sum(s.num_units for s in plan.shards) == 3 * 5 * 2
    assert all(s.seat_orders == (0, 1) and s.game == "tic_tac_toe" for s in plan.shards)
    assert plan_tournament(tour, "r").identity == plan.identity


def test_quick_seat_scores_are_returns_and_a_forfeit_loses_the_most():
    assert seat_scores("kuhn_poker", [1.0, -1.0], None) == (1.0, -1.0)
    assert seat_scores("kuhn_poker", None, 0) == (-2.0, 2.0)
    assert seat_scores("tic_tac_toe", None, 1) == (1.0, -1.0)


class _Backend:
    """Stands in for a model in this unit test: answers every request with ``text``."""

    def __init__(self, text: str | None, status: str = "ok") -> None:
        self.text, self.status = text, status

    async def generate(self, requests):
        return [Response(text=self.text, status=self.status, latency_ms=1.0,
                         error=None if self.status == "ok" else "boom") for _ in requests]


def test_quick_outcomes_score_forfeits_and_leave_failed_calls_out():
    model = make_spec("openai:gpt-4o-mini")
    config = pairing(model, "random", PairingSettings(num_instances=2, seed=3))
    shard = config.plan("r").shards[0]
    con = duckdb.connect()
    for name, backend in (("bad", _Backend("I fold? maybe")), ("failed", _Backend(None, "x"))):
        con.register("matches", run_shard(shard, {model: backend}).tables["matches"][1])
        got = outcomes(con)
        if name == "failed":
            assert got == []
            continue
        assert len(got) == 4
        for o in got:
            mine = 0 if o.player_a == "openai:gpt-4o-mini" else 1
            scores = (o.score_a, o.score_b)
            assert scores[mine] == -2.0 and scores[1 - mine] == 2.0
        con.unregister("matches")
    con.close()


def test_the_solver_beats_random_play(tmp_path):
    """Tic-tac-toe: the minimax player never loses, so it ranks first, separated; Kuhn poker:
    the equilibrium wins chips from a uniform player (its return is the chips)."""
    family = get_family("openspiel")
    tour = Tournament.build(family, ["random", "dummy", "solver"],
                            PairingSettings(num_instances=12, options=TTT), resamples=200)
    outcome, result = run_tournament(tour, tmp_path / "ttt", parallel=False)
    assert outcome.executed == 3
    top, second, third = result.ratings
    assert top["player"] == "equilibrium" and top["bt_low"] > second["bt_high"]
    con = open_run(tmp_path / "ttt")
    assert con.execute("select count(*) from ratings").fetchone() == (3,)
    assert con.execute("select count(*), sum(matches) from pairings").fetchone() == (3, 72)
    lost = con.execute("select count(*) from matches where (player_a = 'equilibrium' and "
                       "outcome_a = 'loss') or (player_b = 'equilibrium' and "
                       "outcome_a = 'win')").fetchone()
    assert lost == (0,)
    assert set(con.execute(
        "select count(*), count(distinct seat_a) from matches group by game_index, "
        "least(player_a, player_b), greatest(player_a, player_b)").fetchall()) == {(2, 2)}
    con.close()
    kuhn = Tournament.build(family, ["random", "solver"], PairingSettings(num_instances=30),
                            resamples=100)
    _, chips = run_tournament(kuhn, tmp_path / "kuhn", parallel=False)
    (pair,) = chips.pairings
    assert (pair["player_i"], pair["player_j"]) == ("random", "equilibrium")
    assert pair["score_diff"] < 0
    assert chips.ratings[0]["player"] == "equilibrium"
    assert chips.ratings[0]["nash_mass"] == pytest.approx(1.0)


def test_cli_prints_the_ranking_and_a_rerun_plays_nothing(tmp_path):
    args = ("tournament", "--family", "openspiel", "--players", "solver,random,dummy",
            "--num-instances", "6", "--run-id", "o", "--resamples", "100", "--no-parallel")
    first = distbench(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "95% interval" in first.stdout and "equilibrium" in first.stdout
    assert "3 shard(s) run, 0 already committed" in first.stderr
    again = distbench(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 shard(s) run, 3 already committed" in again.stderr
    assert again.stdout == first.stdout
    con = open_run(tmp_path / "results" / "o")
    assert con.execute("select count(*), count(distinct match_id) from matches").fetchone() \
        == (36, 36)
    con.close()
