"""The gama family's replays (``games/gama/replay.py``): each game's steps carry the store's
round records, moves and final standing, one step per round and one for the end, for every game;
the same seed samples the same games. The drawing is checked in Chromium in
tests/report/test_replays.py."""

from __future__ import annotations

import json

import pytest

from distbench.engine.driver import run_plan
from distbench.games.gama import rules
from distbench.games.gama.command import build_config
from distbench.games.gama.plan import plan_gama
from distbench.games.gama.replay import ROUND_FIELDS, replay
from distbench.llm.registry import make_spec
from distbench.store.catalog import cursor_records, open_run


@pytest.fixture(scope="module", params=rules.GAME_NAMES)
def con(request, tmp_path_factory):
    config = build_config({"seeds": (3,), "num_games": 3, "llm_seed": 0, "temperature": 1.0,
                           "max_tokens": None, "reask": 0, "game": request.param,
                           "gama_options": ("rounds=4",), "seat_players": "scripted:random"},
                          make_spec("dummy"))
    run = tmp_path_factory.mktemp("gama-replay") / request.param
    run_plan(plan_gama(config, "r"), run, parallel=False)
    return open_run(run)


def test_steps_are_the_stores_rounds_moves_and_players(con):
    part = replay(con, per_game=2, seed=5)
    assert part.family == "gama" and "Replay.register(\"gama\"" in part.script
    (game,) = {r[0] for r in con.execute("SELECT game FROM gama_games").fetchall()}
    (key,) = part.games
    assert key.startswith(game)
    replays = part.games[key]
    assert len(replays) == 2 and len({r.id for r in replays}) == 2
    for rep in replays:
        rounds = cursor_records(con.execute(
            f"SELECT {', '.join(ROUND_FIELDS)} FROM gama_rounds WHERE game_id = ? ORDER BY round",
            [rep.id]))
        played = [s for s in rep.steps[:-1] if "record" in s]
        assert rounds and [s["record"] for s in played] == rounds
        assert [s["agg"] for s in played] == [json.loads(r["aggregates_json"]) for r in rounds]
        assert_moves(con, rep)
        end = rep.steps[-1]
        assert end["end"] and [tuple(s) for s in end["seats"]] == con.execute(
            "SELECT seat, player, total_payoff, survived, rank FROM gama_players "
            "WHERE game_id = ? ORDER BY seat", [rep.id]).fetchall()
        score, params = con.execute("SELECT gama_score, params_json FROM gama_games "
                                    "WHERE game_id = ?", [rep.id]).fetchone()
        assert end["score"] == score and rep.static["params"] == json.loads(params)
        assert all(s["label"].startswith(("round", "proposal")) for s in rep.steps[:-1])
        assert rep.steps[-1]["invalid"] == sum(m[4] != "ok" for s in rep.steps for m in
                                               s.get("moves", []))
    again = replay(con, per_game=2, seed=5)
    assert [r.id for r in again.games[key]] == [r.id for r in replays]


def assert_moves(con, rep):
    """Every move of the game is in a step (the round's, or the unplayed round's), in order,
    with the raw text of the invalid ones."""
    moves = con.execute("SELECT round, seat, role, answer, answer_number, status, payoff, "
                        "CASE WHEN status <> 'ok' THEN answer_raw END "
                        "FROM gama_moves WHERE game_id = ? ORDER BY round, seat",
                        [rep.id]).fetchall()
    assert [((s["record"]["round"] if "record" in s else s["round"]), *m)
            for s in rep.steps[:-1] for m in s["moves"]] == [tuple(m) for m in moves]


def test_a_round_an_invalid_answer_ended_is_a_step_with_the_raw_text(tmp_path):
    """The dummy's plan in the Pirate Game is invalid: the game forfeits in round 1 with no
    round record; its replay shows that round, who answered invalidly and the raw text."""
    config = build_config({"seeds": (3,), "num_games": 1, "llm_seed": 0, "temperature": 1.0,
                           "max_tokens": None, "reask": 0, "game": "pirate",
                           "gama_options": ("rounds=2",)}, make_spec("dummy"))
    run_plan(plan_gama(config, "r"), tmp_path / "run", parallel=False)
    con = open_run(tmp_path / "run")
    (rep,) = next(iter(replay(con, per_game=1, seed=0).games.values()))
    status, rounds = con.execute("SELECT status, rounds FROM gama_games").fetchone()
    assert (status, rounds) == ("forfeit", 0)
    (unplayed, end) = rep.steps
    assert "record" not in unplayed and "answered invalidly" in unplayed["label"]
    bad = [m for m in unplayed["moves"] if m[4] != "ok"]
    assert bad and all(m[6] for m in bad) and end["end"]
    assert_moves(con, rep)
