"""The repeated family in a tournament: seats, players (axelrod strategies, models), paired
pairings, the mean payoff per round, forfeits, the iterated prisoner's dilemma population
through the real engine (in process and on Ray), the CLI and its resume."""

from __future__ import annotations

import pytest
from cli_server import distbench

from distbench.cli.tournament import run_tournament
from distbench.engine.tournament import Tournament, plan_tournament
from distbench.games.base import PairingSettings
from distbench.games.registry import get_family
from distbench.games.repeated.plan import RepeatedRunConfig
from distbench.games.repeated.plan import plan_shards as match_shards
from distbench.games.repeated.runner import run_pair_shard, seat_scores
from distbench.games.repeated.schema import REPEATED_DUELS
from distbench.games.repeated.strategies import get_machine, play
from distbench.games.repeated.tournament import RepeatedPairConfig, plan_shards, player
from distbench.llm.base import Response
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

IPD = ["TitForTat", "axelrod:Defector", "Cooperator"]


def test_quick_repeated_declares_its_seats_and_players():
    family = get_family("repeated")
    assert family.pairable and family.seats == ("row", "col")
    assert player("axelrod:TitForTat") == ("TitForTat", "TitForTat")
    assert player("Grudger") == ("Grudger", "Grudger")
    spec, label = player("dummy")
    assert spec.provider == "dummy" and label == "dummy:random"
    for bad, needle in (("axelrod:TitForTwoTats", "TitFor2Tats"), ("nosuch:model", "nosuch")):
        with pytest.raises(ValueError, match=needle) as err:
            player(bad)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="twice"):
        Tournament.build(family, ["TitForTat", "axelrod:TitForTat"], PairingSettings(2))


def test_quick_ordinary_runs_keep_their_shards():
    """Making the family pairable changes no existing run's identity (ids from before)."""
    config = RepeatedRunConfig(llm=make_spec("dummy"), opponents=("TitForTat", "self"),
                               num_games=12, shard_games=10)
    assert [s.shard_id for s in match_shards(config)] == [
        "rp-d97220e5d9078f50", "rp-0071faa8d2362c72", "rp-070ad15f2aac4188",
        "rp-df8fd9e7f69c6c18"]


def test_quick_machines_play_each_other_as_the_strategies_module_does():
    config = RepeatedPairConfig("TitForTat", "Alternator", num_games=3, rounds=7)
    rows = run_pair_shard(plan_shards(config)[0], {}).tables["repeated_duels"][1]
    assert rows.schema.equals(REPEATED_DUELS, check_metadata=False)
    rows = rows.to_pylist()
    assert len(rows) == 6 and {r["status"] for r in rows} == {"complete"}
    tft, alt = play(get_machine("TitForTat"), get_machine("Alternator"), 7)
    for r in rows:
        if r["player_row"] == "TitForTat":
            assert (r["moves_row"], r["moves_col"]) == (tft, alt)
        else:
            assert (r["moves_row"], r["moves_col"]) == (alt, tft)
        assert r["score_row"] == pytest.approx(r["total_row"] / 7)
    # the same stage game in both seat orders, the matrices seen from each seat
    by_instance = {}
    for r in rows:
        by_instance.setdefault(r["instance"], []).append(r)
    assert all(len(v) == 2 and v[0]["payoff_row"] == v[1]["payoff_row"]
               for v in by_instance.values())


def test_quick_forfeit_scores_the_stage_extremes():
    import numpy as np

    a = np.array([[3.0, 0.0], [5.0, 1.0]])
    assert seat_scores("forfeit", "row", 2.0, 2.0, a, a.T) == (0.0, 5.0)
    assert seat_scores("forfeit", "col", None, None, a, a.T) == (5.0, 0.0)
    assert seat_scores("forfeit", "both", None, None, a, a.T) == (0.0, 0.0)
    assert seat_scores("call_failed", None, 2.0, 2.0, a, a.T) == (None, None)
    assert seat_scores("complete", None, 2.5, 1.5, a, a.T) == (2.5, 1.5)


class _Backend:
    """Stands in for a model in this unit test: answers 'Action: 1' for ``good`` rounds, then
    ``text``."""

    def __init__(self, text: str, good: int = 0) -> None:
        self.text, self.good, self.seen = text, good, 0

    async def generate(self, requests):
        out = []
        for _ in requests:
            text = "Action: 1" if self.seen < self.good * len(requests) else self.text
            out.append(Response(text=text, status="ok", latency_ms=1.0))
        self.seen += len(requests)
        return out


def test_quick_an_invalid_answer_ends_the_match_as_a_forfeit():
    model = make_spec("openai:gpt-4o-mini")
    config = RepeatedPairConfig(model, "Cooperator", num_games=1, rounds=5)
    rows = run_pair_shard(plan_shards(config)[0], {model: _Backend("no idea", good=2)}
                          ).tables["repeated_duels"][1].to_pylist()
    assert len(rows) == 2
    for r in rows:
        mine = "row" if r["player_row"] == "openai:gpt-4o-mini" else "col"
        other = "col" if mine == "row" else "row"
        assert r["status"] == "forfeit" and r["forfeit_seat"] == mine
        assert r["forfeit_text"] == "no idea" and r["rounds_played"] == 2
        low, high = min(map(min, r[f"payoff_{mine}"])), max(map(max, r[f"payoff_{other}"]))
        assert r[f"score_{mine}"] == low and r[f"score_{other}"] == high


def test_quick_pairing_is_paired_and_stable():
    family = get_family("repeated")
    tour = Tournament.build(family, IPD, PairingSettings(num_instances=4, options={
        "stage": "stag_hunt", "rounds": 5}))
    plan = plan_tournament(tour, "r")
    assert len(plan.shards) == 3 and sum(s.num_units for s in plan.shards) == 3 * 4 * 2
    assert {s.config.stage for s in plan.shards} == {"stag_hunt"}
    assert plan_tournament(tour, "r").identity == plan.identity


def _ipd(tmp_path, name, parallel):
    family = get_family("repeated")
    tour = Tournament.build(family, IPD, PairingSettings(num_instances=6), resamples=200)
    return run_tournament(tour, tmp_path / name, parallel=parallel)


def test_iterated_prisoners_dilemma_rates_as_the_payoffs_say(tmp_path, ray_session):
    """10 known rounds of the PD (T > R > P > S): Defector beats TitForTat by (T - S) / 10 a
    round and Cooperator by T - S; TitForTat and Cooperator cooperate throughout and tie. So
    Defector ranks first with every game won, TitForTat and Cooperator share the same
    Bradley–Terry strength, and the margins (mean score, Nash rating) put TitForTat above
    Cooperator. The run on Ray gives the rows of the run in process."""
    _, result = _ipd(tmp_path, "here", parallel=False)
    _, on_ray = _ipd(tmp_path, "ray", parallel=True)
    strip = [{k: v for k, v in r.items() if k != "run_id"} for r in result.ratings]
    assert strip == [{k: v for k, v in r.items() if k != "run_id"} for r in on_ray.ratings]
    top, *rest = result.ratings
    assert top["player"] == "Defector" and top["wins"] == 24.0 and top["rank"] == 1
    tft, coop = sorted(rest, key=lambda r: r["player"] != "TitForTat")
    assert tft["bt_strength"] == pytest.approx(coop["bt_strength"], abs=1e-6)
    assert tft["wins"] == coop["wins"] == 6.0  # the 12 games between them tie
    assert tft["mean_margin"] > coop["mean_margin"] and tft["nash_rating"] > coop["nash_rating"]
    assert top["nash_mass"] == pytest.approx(1.0)
    con = open_run(tmp_path / "here")
    rows = con.execute("select player_row, player_col, payoff_row, score_row, score_col "
                       "from repeated_duels").fetchall()
    assert len(rows) == 3 * 6 * 2
    for row_player, col_player, payoff, s_row, s_col in rows:
        (r, s_), (t, p) = payoff
        diff = {("Defector", "TitForTat"): (t - s_) / 10, ("Defector", "Cooperator"): t - s_,
                ("TitForTat", "Cooperator"): 0.0}
        key = (row_player, col_player)
        expected = diff.get(key, -diff.get(key[::-1], 0.0))
        assert s_row - s_col == pytest.approx(expected)
    pairs = dict(((i, j), d) for i, j, d in con.execute(
        "select player_i, player_j, score_diff from pairings").fetchall())
    assert pairs[("TitForTat", "Cooperator")] == 0.0
    assert pairs[("TitForTat", "Defector")] < 0 and pairs[("Defector", "Cooperator")] > 0
    con.close()
    for name in ("here", "ray"):
        con = open_run(tmp_path / name)
        assert con.execute("select count(distinct shard_id), count(*) from repeated_duels"
                           ).fetchone() == (3, 36)
        con.close()


def test_cli_prints_the_ranking_and_a_rerun_plays_nothing(tmp_path):
    args = ("tournament", "--family", "repeated", "--players",
            "axelrod:TitForTat,axelrod:Defector,Grudger,dummy", "--num-instances", "4",
            "--run-id", "p", "--resamples", "100", "--no-parallel")
    first = distbench(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "95% interval" in first.stdout and "Grudger" in first.stdout
    assert "6 shard(s) run, 0 already committed" in first.stderr
    again = distbench(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 shard(s) run, 6 already committed" in again.stderr
    assert again.stdout == first.stdout
    con = open_run(tmp_path / "results" / "p")
    assert con.execute("select count(*), count(distinct match_id) from repeated_duels"
                       ).fetchone() == (48, 48)
    con.close()
