"""Tournaments end to end: the family contract's seats, pairings and outcomes (negotiation and
fog), the run through the driver, the ratings and pairings tables, resume after kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.cli.errors import UserError
from distbench.cli.tournament import tournament
from distbench.engine.tournament import (
    Tournament,
    matches_from,
    plan_tournament,
    rate_matches,
)
from distbench.games.base import PairingSettings, SeatOutcome
from distbench.games.registry import get_family
from distbench.store.catalog import open_run

SCRIPTED = "scripted:fair,scripted:greedy,scripted:random"


def _invoke(tmp_path, *args: str):
    return CliRunner().invoke(tournament, [*args, "--output-dir", str(tmp_path), "--no-parallel"])


def test_quick_negotiation_and_fog_declare_their_seats():
    for name in ("negotiation", "fog"):
        family = get_family(name)
        assert family.pairable and family.seats == ("a", "b")
    assert not get_family("matrix").pairable


def test_quick_plan_has_every_pair_in_both_seats_on_the_same_instances():
    family = get_family("negotiation")
    tour = Tournament.build(family, SCRIPTED.split(","), PairingSettings(num_instances=4))
    plan = plan_tournament(tour, "r")
    assert len(plan.shards) == 3
    assert {(s.player_a, s.player_b) for s in plan.shards} == {
        ("scripted:fair", "scripted:greedy"), ("scripted:fair", "scripted:random"),
        ("scripted:greedy", "scripted:random")}
    assert all(s.seat_orders == (0, 1) and (s.seed, s.start, s.stop) == (0, 0, 4)
               for s in plan.shards)
    assert plan_tournament(tour, "r").identity == plan.identity  # stable


def test_quick_bad_input_is_one_line(tmp_path):
    for args, needle in (
        (["--family", "matrix", "--players", "a,b"], "no seats"),
        (["--family", "nosuch", "--players", "a,b"], "unknown game family"),
        (["--family", "negotiation", "--players", "scripted:fair"], "at least two"),
        (["--family", "negotiation", "--players", "scripted:fair,scripted:nope"], "scripted"),
        (["--family", "negotiation", "--players", "scripted:fair,scripted:fair"], "twice"),
        (["--family", "fog", "--players", "tier1,tier9"], "tier9"),
    ):
        result = _invoke(tmp_path, *args)
        assert isinstance(result.exception, UserError), (args, result.output)
        assert needle in str(result.exception) and "\n" not in str(result.exception)


def test_matches_from_outcomes_decide_by_seat_scores():
    outcomes = [SeatOutcome("g1", "i1", "x", "y", 5.0, 3.0),
                SeatOutcome("g2", "i1", "y", "x", 4.0, 4.0),
                SeatOutcome("g3", "i2", "y", "x", -10.0, 0.0)]
    a, b, outcome, margin = matches_from(outcomes, ("x", "y"))
    assert a.tolist() == [0, 1, 1] and b.tolist() == [1, 0, 0]
    assert outcome.tolist() == [1.0, 0.5, 0.0] and margin.tolist() == [2.0, 0.0, -10.0]
    with pytest.raises(ValueError, match="outside the population"):
        matches_from(outcomes, ("x", "z"))


def test_ratings_rows_rank_a_planted_order():
    """Three players, the first beats the second beats the third 80% of the time."""
    rng = np.random.default_rng(5)
    a, b, o, m = [], [], [], []
    for i, j in ((0, 1), (1, 2), (0, 2)):
        for _ in range(60):
            win = rng.random() < (0.8 if (i, j) != (0, 2) else 0.94)
            a.append(i)
            b.append(j)
            o.append(float(win))
            m.append(1.0 if win else -1.0)
    result = rate_matches(("p", "q", "r"), "fog", "run", np.array(a), np.array(b),
                          np.array(o), np.array(m), seed=1, resamples=300)
    assert [r["player"] for r in result.ratings] == ["p", "q", "r"]
    assert [r["rank"] for r in result.ratings] == [1, 2, 3]
    top, mid, low = result.ratings
    assert top["bt_low"] > mid["bt_high"] and mid["bt_low"] > low["bt_high"]
    assert top["nash_mass"] == pytest.approx(1.0) and low["nash_rating"] < mid["nash_rating"] < 0
    assert [(p["player_i"], p["player_j"], p["matches"]) for p in result.pairings] == [
        ("p", "q", 60), ("p", "r", 60), ("q", "r", 60)]


def test_negotiation_tournament_runs_stores_and_resumes(tmp_path):
    args = ["--family", "negotiation", "--players", SCRIPTED, "--num-instances", "6",
            "--run-id", "t", "--resamples", "200"]
    result = _invoke(tmp_path, *args)
    assert result.exit_code == 0, result.output
    assert "95% interval" in result.output and "scripted:fair" in result.output
    con = open_run(tmp_path / "t")
    ratings = con.execute("select player, rank, matches from ratings order by rank").fetchall()
    assert sorted(r[0] for r in ratings) == sorted(SCRIPTED.split(","))
    assert all(r[2] == 24 for r in ratings)  # 2 opponents x 6 instances x 2 seat orders
    pairs = con.execute("select matches from pairings").fetchall()
    assert [p[0] for p in pairs] == [12, 12, 12]
    # paired: every instance of a pair is played in both seat orders
    orders = con.execute("select count(*), count(distinct player_a) from episodes group by "
                         "instance_id, least(player_a, player_b), greatest(player_a, player_b)"
                         ).fetchall()
    assert set(orders) == {(2, 2)}
    before = con.execute("select * exclude (run_id) from ratings order by player").fetchall()
    con.close()
    again = _invoke(tmp_path, *args)
    assert again.exit_code == 0, again.output
    con = open_run(tmp_path / "t")
    assert con.execute("select * exclude (run_id) from ratings order by player").fetchall() == before
    assert con.execute("select count(*) from episodes").fetchone() == (36,)
    con.close()


def test_fog_tournament_rates_the_tiers(tmp_path):
    result = _invoke(tmp_path, "--family", "fog", "--players", "tier1,tier3",
                     "--num-instances", "4", "--run-id", "f", "--resamples", "100")
    assert result.exit_code == 0, result.output
    con = open_run(tmp_path / "f")
    assert con.execute("select count(*) from fog_games").fetchone() == (8,)
    top = con.execute("select player from ratings where rank = 1").fetchone()
    assert top == ("tier3",)
    con.close()


def test_kill_9_then_resume_plays_every_game_once(tmp_path):
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    cmd = [sys.executable, "-m", "distbench", "tournament", "--family", "negotiation",
           "--players", SCRIPTED, "--num-instances", "300", "--run-id", "k", "--no-parallel",
           "--resamples", "50"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    commits = tmp_path / "results" / "k" / "_commits"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if commits.is_dir() and len(list(commits.glob("n-*.json"))) >= 1:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    done = len(list(commits.glob("n-*.json")))
    assert 1 <= done < 9  # 3 pairs x 3 shards of 100 instances
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"{done} already committed" in out.stderr, out.stderr.replace("progress", "\nP")[-3000:]
    con = open_run(tmp_path / "results" / "k")
    assert con.execute("select count(*), count(distinct episode_id) from episodes").fetchone() \
        == (1800, 1800)
    assert con.execute("select sum(matches) from pairings").fetchone() == (1800,)
    con.close()


def test_next_pairs_are_the_unseparated_adjacent_ranks():
    from distbench.engine.tournament import Separation, next_pairs

    state = Separation(order=[2, 0, 1], gaps=[(2, 0, 0.3, 1.0), (0, 1, -0.2, 0.8)],
                       overlapping=[(0, 1), (0, 2), (1, 2)])
    assert not state.separated
    assert next_pairs(state) == [(0, 1)]
    done = Separation(order=[2, 0, 1], gaps=[(2, 0, 0.3, 1.0), (0, 1, 0.1, 0.8)],
                      overlapping=[])
    assert done.separated and next_pairs(done) == []


def _stable(output: str) -> list[str]:
    """The lines of a run's output that do not depend on timing (no progress, no shard
    counts)."""
    return [line for line in output.splitlines() if line.strip()
            and not line.startswith(("progress", "running", "all shards already"))
            and "shard(s) run" not in line]


def test_adaptive_tournament_stops_says_why_and_is_deterministic(tmp_path):
    args = ["--family", "fog", "--players", "tier1,tier2,tier3", "--num-instances", "2",
            "--adaptive", "--max-matches", "60", "--resamples", "200"]
    first = _invoke(tmp_path, *args, "--run-id", "a1")
    assert first.exit_code == 0, first.output
    assert "stopped after" in first.output
    assert "separated: every adjacent pair" in first.output or "max-matches:" in first.output
    second = _invoke(tmp_path, *args, "--run-id", "a2")
    assert _stable(second.output) == _stable(first.output)
    con = open_run(tmp_path / "a1")
    games = con.execute("select count(*), count(distinct game_id) from fog_games").fetchone()
    assert games[0] == games[1] >= 12  # round 0: 3 pairs x 2 instances x 2 seat orders
    assert con.execute("select sum(matches) from ratings").fetchone()[0] == 2 * games[0]
    con.close()
    # resuming the finished run replays the same schedule and plays nothing
    again = _invoke(tmp_path, *args, "--run-id", "a1")
    assert again.exit_code == 0 and _stable(again.output) == _stable(first.output)


def test_adaptive_max_matches_stop_names_the_open_gaps(tmp_path):
    # tier1 against itself by another name cannot be separated: mock:tier1 plays as tier1
    result = _invoke(tmp_path, "--family", "fog", "--players", "tier1,mock:tier1",
                     "--num-instances", "2", "--adaptive", "--max-matches", "8",
                     "--resamples", "100", "--run-id", "m")
    assert result.exit_code == 0, result.output
    assert "max-matches: 8 games reached --max-matches 8" in result.output
    assert "tier1 vs mock:tier1" in result.output or "mock:tier1 vs tier1" in result.output


def test_tournament_on_ray_gives_the_rows_of_the_in_process_run(tmp_path, ray_session):
    from distbench.cli.tournament import run_tournament

    family = get_family("negotiation")
    tour = Tournament.build(family, SCRIPTED.split(","), PairingSettings(num_instances=3),
                            resamples=100)
    _, on_ray = run_tournament(tour, tmp_path / "ray", parallel=True)
    _, here = run_tournament(tour, tmp_path / "here", parallel=False)
    strip = [{k: v for k, v in r.items() if k != "run_id"} for r in on_ray.ratings]
    assert strip == [{k: v for k, v in r.items() if k != "run_id"} for r in here.ratings]
    for name in ("ray", "here"):
        con = open_run(tmp_path / name)
        assert con.execute("select count(distinct shard_id), count(*) from episodes").fetchone() \
            == (3, 18)
        con.close()


def test_allocate_round_gives_more_blocks_to_pairs_further_from_separating():
    from distbench.engine.tournament import Separation, allocate_round

    # ranks 3 > 0 > 1 > 2: (3, 0) separated, (0, 1) far from it, (1, 2) nearly separated
    state = Separation(order=[3, 0, 1, 2],
                       gaps=[(3, 0, 0.2, 1.0), (0, 1, -0.9, 0.7), (1, 2, -0.1, 1.1)],
                       overlapping=[])
    blocks = allocate_round(state)
    assert len(blocks) == 2  # one block per unresolved adjacent pair, reallocated
    assert blocks == [(0, 1), (0, 1)]  # 0.9 / 1.0 of the weight: both blocks
    assert (0, 3) not in blocks  # a separated pair is not re-played
    even = Separation(order=[0, 1, 2], gaps=[(0, 1, -0.3, 0.9), (1, 2, -0.3, 0.9)],
                      overlapping=[])
    assert allocate_round(even) == [(0, 1), (1, 2)]
    done = Separation(order=[0, 1], gaps=[(0, 1, 0.1, 0.9)], overlapping=[])
    assert allocate_round(done) == []


def test_plan_schedule_gives_each_block_of_a_round_its_own_instances():
    from distbench.engine.tournament import plan_schedule, round_seed

    family = get_family("negotiation")
    tour = Tournament.build(family, SCRIPTED.split(","), PairingSettings(num_instances=2))
    plan = plan_schedule(tour, [tour.pairs(), [(0, 1), (0, 1), (1, 2)]], "r", {})
    assert len(plan.shards) == 6 and len({s.shard_id for s in plan.shards}) == 6
    seeds = sorted(s.seed for s in plan.shards)
    assert seeds.count(0) == 3  # round 0
    assert round_seed(0, 1) in seeds and round_seed(0, 1, 1) in seeds
    assert round_seed(0, 1, 1) != round_seed(0, 1) != round_seed(0, 2)


def _mock_tournament(url: str, players: str, **settings):
    """The tournament the CLI builds for ``--players`` on the mock server at 170,170."""
    from distbench.cli.run import _price

    tour = Tournament.build(get_family("negotiation"), players.split(","),
                            PairingSettings(**settings), resamples=100)
    return tour.with_model_options(**_price("170,170"), base_url=url)


def _spent_by_shard(run_dir) -> dict[str, int]:
    con = open_run(run_dir)
    try:
        return dict(con.execute("select shard_id, sum(prompt_tokens + completion_tokens)::BIGINT "
                                "from calls group by shard_id").fetchall())
    finally:
        con.close()


def test_adaptive_tournament_stops_at_its_token_budget_and_a_larger_one_continues(
        tmp_path, monkeypatch):
    """Two mock-server models that tie every game (both break the protocol) never separate, so
    only the budget stops the adaptive rounds: it says which limit and exits as ``run`` does
    (4); the same command with a larger budget continues the schedule, no game played twice.
    A shard is admitted while the spend so far plus its ceiling (every answer at its full
    budget: ``shard_estimate``) stays within the budget, so the budget is never crossed. The
    budgets are set from a probe run's per-round spend (the mock server is deterministic) and
    the rounds' ceilings."""
    from distbench.cli.run import BudgetReached
    from distbench.engine.tournament import plan_schedule
    from distbench.mockserver import ServerConfig, start_server

    with start_server(ServerConfig(seed=5)) as server:
        common = ["--family", "negotiation", "--players", "llamacpp:mock,llamacpp:other",
                  "--base-url", server.url, "--price", "170,170", "--num-instances", "1",
                  "--adaptive", "--resamples", "100"]
        monkeypatch.setenv("DISTBENCH_CACHE_DIR", str(tmp_path / "probe-cache"))
        probe = _invoke(tmp_path, *common, "--max-matches", "8", "--run-id", "probe")
        assert probe.exit_code == 0, probe.output
        spent = _spent_by_shard(tmp_path / "probe")
        tour = _mock_tournament(server.url, "llamacpp:mock,llamacpp:other", num_instances=1)
        plan = plan_schedule(tour, [[(0, 1)]] * 4, "probe", {})
        rounds = [s.shard_id for s in plan.shards]
        assert set(spent) == set(rounds), "the probe's shards are the schedule's"
        s = [spent[r] for r in rounds]
        c = [sum(plan.shard_estimate(shard)[:2]) for shard in plan.shards]
        assert all(s[r] < c[r] for r in range(4))  # every round within its ceiling
        budget = max(c[0], s[0] + c[1])  # admits rounds 0 and 1
        assert s[0] + s[1] + c[2] > budget, "round 2 must not fit (ceilings too uneven)"
        args = [*common, "--max-matches", "40", "--run-id", "b"]
        monkeypatch.setenv("DISTBENCH_CACHE_DIR", str(tmp_path / "cache"))  # no probe answers
        before = server.stats()["usage"]
        first = _invoke(tmp_path, *args, "--max-tokens-total", str(budget))
        after = server.stats()["usage"]
        used = sum(after[k] - before[k] for k in ("prompt_tokens", "completion_tokens"))
        assert isinstance(first.exception, BudgetReached), first.output
        assert first.exception.exit_code == 4
        assert "budget: --max-tokens-total: spent" in first.output
        assert f"spent {used:,} of {budget:,} tokens" in first.output  # the server's own count
        assert used == s[0] + s[1] <= budget
        assert "in round 2 (1 shard(s) of it not sent)" in first.output
        assert "--max-tokens-total" in str(first.exception)
        con = open_run(tmp_path / "b")
        assert con.execute("select count(*) from episodes").fetchone() == (4,)  # rounds 0, 1
        assert con.execute("select sum(matches) from ratings").fetchone() == (8,)
        con.close()
        more = _invoke(tmp_path, *args, "--max-tokens-total", str(s[0] + s[1] + c[2]))
        assert isinstance(more.exception, BudgetReached), more.output
        assert "in round 3" in more.output
    con = open_run(tmp_path / "b")
    assert con.execute("select count(*), count(distinct episode_id) from episodes"
                       ).fetchone() == (6, 6)
    con.close()


def test_max_cost_of_a_tournament_needs_the_models_prices(tmp_path):
    result = _invoke(tmp_path, "--family", "negotiation", "--players",
                     "llamacpp:mock,scripted:fair", "--base-url", "http://127.0.0.1:9",
                     "--max-cost", "1", "--num-instances", "1", "--run-id", "p")
    assert isinstance(result.exception, UserError), result.output
    assert "--max-cost needs the price" in str(result.exception)
    bad = _invoke(tmp_path, "--family", "negotiation", "--players", SCRIPTED, "--price", "1,2")
    assert isinstance(bad.exception, UserError)
    assert str(bad.exception) == "--price: no player of the population is a model"


def test_a_tournament_stopped_by_its_budget_rates_the_games_it_played(tmp_path):
    """Not adaptive: the budget is the first shard's ceiling (one model seat), so the first
    shard plays and the two others (whose ceilings, with the spend so far, exceed it) are
    refused; the games played are rated, the player who played none has no interval and no
    rank among the rated, exit status 4 with the command that continues."""
    from distbench.cli.run import BudgetReached
    from distbench.mockserver import ServerConfig, start_server

    players = "llamacpp:mock,scripted:fair,llamacpp:other"
    with start_server(ServerConfig(seed=5)) as server:
        plan = plan_tournament(_mock_tournament(server.url, players, num_instances=1), "nb")
        budget = sum(plan.shard_estimate(plan.shards[0])[:2])
        result = _invoke(tmp_path, "--family", "negotiation", "--players", players,
                         "--base-url", server.url, "--num-instances", "1", "--resamples", "50",
                         "--max-tokens-total", str(budget), "--run-id", "nb")
        usage = server.stats()["usage"]
    assert 0 < usage["prompt_tokens"] + usage["completion_tokens"] <= budget
    assert isinstance(result.exception, BudgetReached), result.output
    assert "1 shard(s) committed now, 2 left" in str(result.exception)
    assert "--run-id nb" in str(result.exception) and "--max-tokens-total" in str(result.exception)
    con = open_run(tmp_path / "nb")
    rows = dict(con.execute("select player, matches from ratings").fetchall())
    assert rows == {"llamacpp:mock": 2, "scripted:fair": 2, "llamacpp:other": 0}
    assert con.execute("select bt_low, rank, nash_mass, nash_rating from ratings "
                       "where player = 'llamacpp:other'").fetchone() == (None, 3, 0.0, None)
    assert con.execute("select sum(nash_mass) from ratings").fetchone() == (1.0,)
    con.close()
    assert "no games" in result.output


def test_budget_line_names_each_limit_with_its_spend():
    from distbench.cli.tournament import budget_line

    assert budget_line({"max_cost_usd": 0.5, "spent_usd": 0.61234, "max_tokens_total": None}) \
        == "--max-cost: spent $0.6123 of $0.50"
    assert budget_line({"max_cost_usd": 0.002, "spent_usd": 0.01}) == \
        "--max-cost: spent $0.0100 of $0.002"
    assert budget_line({"max_tokens_total": 9000, "spent_tokens": 12345}) == \
        "--max-tokens-total: spent 12,345 of 9,000 tokens"
