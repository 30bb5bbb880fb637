"""The replay provider (``--llm-type replay:PATH``) answers a gama run from a record in
GAMA-Bench's format (written here by the test): the engine's rounds then equal the record's
(answers, aggregates, winners), Battle Royale's hits come from the record, and the auction's
valuations are GAMA's seeded ones."""

from __future__ import annotations

import json

import pytest
from cli_server import distbench

from distbench.games.gama import rules
from distbench.games.gama.plan import GamaRunConfig, plan_shards
from distbench.games.gama.runner import run_shard
from distbench.llm.base import BackendUnavailable
from distbench.llm.registry import build_backend, make_spec, resolve_spec
from distbench.store.catalog import open_run


def _record(path, rounds, **meta):
    path.write_text(json.dumps({"meta": meta, "round_records": rounds, "player_data": []}))
    return path


def _replay(record_path, game, players, rounds):
    spec = resolve_spec(make_spec("replay", str(record_path)))
    config = GamaRunConfig(game=game, seats=(spec,) * players, num_games=1,
                           options=(("players", str(players)), ("rounds", str(rounds))))
    result = run_shard(plan_shards(config, "r")[0], {spec: build_backend(spec)})
    return {name: table.to_pylist() for name, (_, table) in result.tables.items()}


def test_a_guessing_record_replays_to_its_own_round_records(tmp_path):
    played = [[50, 30, 20], [10, 20, 3]]
    record = _record(tmp_path / "g.json", [{"responses": r} for r in played], player_num=3)
    tables = _replay(record, "guessing", 3, 2)
    (g,) = tables["gama_games"]
    assert g["status"] == "ok" and g["rounds"] == 2
    for r, responses in zip(tables["gama_rounds"], played, strict=True):
        agg = json.loads(r["aggregates_json"])
        assert agg["responses"] == responses
        mean = sum(responses) / 3
        assert agg["mean"] == pytest.approx(mean)
        assert agg["winner"] == min(responses, key=lambda x: abs(x - mean * 2 / 3))
    assert {m["call_id"] for m in tables["gama_moves"]} != {None}  # replayed calls are rows


def test_battle_royale_takes_its_hits_from_the_record(tmp_path):
    # seat 0 shoots seat 2 and hits, seat 1 shoots into the air, seat 3 shoots seat 1 and misses
    rounds = [{"responses": ["2"], "out": True}, {"responses": ["null"], "out": False},
              {"responses": ["player_1"], "out": False}]
    record = _record(tmp_path / "b.json", rounds, player_num=4)
    tables = _replay(record, "battle", 4, 3)
    shots = [json.loads(r["aggregates_json"]) for r in tables["gama_rounds"]]
    assert [(s["player_shooting"], s["shot_player"], s["out"]) for s in shots] == [
        ("0", "2", True), ("1", "null", False), ("3", "1", False)]
    assert tables["gama_rounds"][-1]["survivors"] == [0, 1, 3]


def test_auction_valuations_are_gamas_seeded_ones(tmp_path):
    rounds = [{"responses": [10, 20, 30]}, {"responses": [40, 0, 5]}]
    record = _record(tmp_path / "a.json", rounds, player_num=3)
    tables = _replay(record, "auction", 3, 2)
    params = rules.make_params("auction", {"players": "3", "rounds": "2"})
    for t, r in enumerate(tables["gama_rounds"], start=1):
        assert json.loads(r["aggregates_json"])["valuations"] == rules.valuations(params, t)


def test_a_round_the_record_lacks_is_a_failed_call_not_an_answer(tmp_path):
    record = _record(tmp_path / "short.json", [{"responses": [1, 2]}], player_num=2)
    tables = _replay(record, "dollar", 2, 3)
    (g,) = tables["gama_games"]
    assert g["status"] == "failed" and g["rounds"] == 1
    assert "no answer at round_records.1.responses" in g["detail"]


def test_a_missing_record_is_one_line(tmp_path):
    with pytest.raises(BackendUnavailable, match="replay:"):
        resolve_spec(make_spec("replay", str(tmp_path / "nope.json")))
    out = distbench("run", "--family", "gama", "--llm-type", f"replay:{tmp_path}/nope.json",
                    "--no-parallel", cwd=tmp_path)
    assert out.returncode != 0 and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_replay_through_the_cli(tmp_path):
    record = _record(tmp_path / "d.json", [{"responses": [30, 30]}, {"responses": [60, 50]}],
                     player_num=2)
    out = distbench("run", "--family", "gama", "--game", "dollar", "--llm-type",
                    f"replay:{record}", "--option", "players=2", "--option", "rounds=2",
                    "--num-games", "1", "--no-parallel", "--run-id", "rp", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    con = open_run(tmp_path / "results" / "rp")
    assert con.execute("select list(answer order by round, seat) from gama_moves").fetchone()[
        0] == ["30", "30", "60", "50"]
    con.close()
