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
        assert rounds and [s["record"] for s in rep.steps[:-1]] == rounds
        assert [s["agg"] for s in rep.steps[:-1]] == [json.loads(r["aggregates_json"])
                                                      for r in rounds]
        moves = con.execute("SELECT round, seat, role, answer, answer_number, status, payoff "
                            "FROM gama_moves WHERE game_id = ? ORDER BY round, seat",
                            [rep.id]).fetchall()
        assert [(s["record"]["round"], *m) for s in rep.steps[:-1] for m in s["moves"]] == \
            [tuple(m) for m in moves]
        end = rep.steps[-1]
        assert end["end"] and [tuple(s) for s in end["seats"]] == con.execute(
            "SELECT seat, player, total_payoff, survived, rank FROM gama_players "
            "WHERE game_id = ? ORDER BY seat", [rep.id]).fetchall()
        score, params = con.execute("SELECT gama_score, params_json FROM gama_games "
                                    "WHERE game_id = ?", [rep.id]).fetchone()
        assert end["score"] == score and rep.static["params"] == json.loads(params)
        assert all(s["label"].startswith(("round", "proposal")) for s in rep.steps[:-1])
    again = replay(con, per_game=2, seed=5)
    assert [r.id for r in again.games[key]] == [r.id for r in replays]
