"""Tournaments of the bimatrix, repeated and openspiel families with two models over real HTTP
(the project's mock server on loopback) and a scripted anchor: a model faces another model in
both seats, every call is a row of the calls table, the ratings are written."""

from __future__ import annotations

from dataclasses import replace

import pytest

from distbench.cli.tournament import run_tournament
from distbench.engine.tournament import Tournament, plan_tournament
from distbench.games.base import PairingSettings
from distbench.games.registry import get_family
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

MODELS = ("llamacpp:mock-a", "llamacpp:mock-b")


@pytest.fixture(scope="module")
def server():
    with start_server(ServerConfig()) as running:
        yield running


def _tournament(server, family: str, anchor: str, tmp_path):
    tour = Tournament.build(get_family(family), [*MODELS, anchor],
                            PairingSettings(num_instances=3), resamples=50)
    players = tuple(p if isinstance(p, str) else
                    make_spec("llamacpp", p.model, base_url=server.url, cache=False)
                    for p in tour.players)
    tour = replace(tour, players=players)
    run_tournament(tour, tmp_path / family, parallel=False)
    return open_run(tmp_path / family), plan_tournament(tour, "x").expected_calls


def test_bimatrix_models_face_each_other_over_http(server, tmp_path):
    con, expected = _tournament(server, "bimatrix", "eq", tmp_path)
    assert expected == 24
    assert con.execute("select count(*) from ratings").fetchone() == (3,)
    assert con.execute("select min(status), max(status) from bimatrix_duels").fetchone() == (
        "complete", "complete")
    both = con.execute("select count(*), count(distinct player_row) from bimatrix_duels "
                       "where player_row like 'llamacpp:%' and player_col like 'llamacpp:%'"
                       ).fetchone()
    assert both == (6, 2)  # 3 games x 2 seat orders, each model in the row seat once
    # a model answers each game in each seat once per pairing (2 pairings x 3 games x 2 seats)
    assert con.execute("select model, count(*) from calls group by model order by model"
                       ).fetchall() == [("mock-a", 12), ("mock-b", 12)]
    joined = con.execute("select count(*) from bimatrix_duels d join calls c on "
                         "c.call_id in (d.call_id_row, d.call_id_col)").fetchone()[0]
    assert joined == 6 * 2 + 6 * 2  # model-vs-model rows: two calls; model-vs-eq rows: one
    con.close()


def test_repeated_models_face_each_other_over_http(server, tmp_path):
    con, expected = _tournament(server, "repeated", "TitForTat", tmp_path)
    assert expected == 240
    assert con.execute("select count(*) from ratings").fetchone() == (3,)
    rows = con.execute("select player_row, player_col, status, rounds_played, num_calls "
                       "from repeated_duels").fetchall()
    assert len(rows) == 18 and {r[2] for r in rows} == {"complete"}
    for row_player, col_player, _, rounds, calls in rows:
        models = sum(p.startswith("llamacpp:") for p in (row_player, col_player))
        assert calls == models * rounds == models * 10
    assert con.execute("select model, count(*) from calls group by model order by model"
                       ).fetchall() == [("mock-a", 120), ("mock-b", 120)]
    con.close()


def test_openspiel_models_face_each_other_over_http(server, tmp_path):
    con, _ = _tournament(server, "openspiel", "random", tmp_path)
    assert con.execute("select count(*) from ratings").fetchone() == (3,)
    assert con.execute("select count(*) from matches where outcome_a = 'call_failed'"
                       ).fetchone() == (0,)
    assert con.execute("select count(*) from matches where player_a like 'llamacpp:%' and "
                       "player_b like 'llamacpp:%'").fetchone() == (6,)
    calls = con.execute("select count(*) from calls").fetchone()[0]
    model_moves = con.execute("select count(*) from moves where player_label like 'llamacpp:%'"
                              ).fetchone()[0]
    assert calls == model_moves > 0
    con.close()
