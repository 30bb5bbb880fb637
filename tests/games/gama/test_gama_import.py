"""``distbench import gama``: records the test writes in GAMA-Bench's JSON shape, read,
imported into a run (real Parquet, real DuckDB) and scored; malformed input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distbench.cli.main import main
from distbench.games.gama.importer import import_folder
from distbench.games.gama.records import RecordError, parse_file_name, read_record
from distbench.store.catalog import open_run


def _player(seat, model, records, prompt=None, **more):
    return {"model": model, "id": f"player_{seat}", "records": records, "utility": [],
            "prompt": prompt if prompt is not None else [{"role": "system", "content": "rules"}],
            **more}


def _write(path: Path, meta: dict, rounds: list, players: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "round_records": rounds, "player_data": players}))
    return path


def guessing_record(folder: Path, name="gpt-4o_guessing_game_v1_1.json", model="gpt-4o"):
    # GAMA shuffles a Guessing round's responses when it reports: seats come from records
    rounds = [{"responses": [30, 30, 30], "mean": 30, "mean_ratio": 20.0, "winner": 30, "winner_num": 3},
              {"responses": [60, 0, 0], "mean": 20, "mean_ratio": 13.33, "winner": 0, "winner_num": 2}]
    players = [_player(0, model, [30, 0]), _player(1, model, [30, 60]), _player(2, model, [30, 0])]
    meta = {"name_exp": name[:-5], "player_num": 3, "min": 0, "max": 100, "ratio": 2 / 3,
            "ratio_str": "2/3", "round_id": 2, "version": "v1"}
    return _write(folder / "guessing_game" / name, meta, rounds, players)


def auction_record(folder: Path):
    rounds = [{"responses": [50, 10], "bid_winner": "player_0", "bid_winner_proposed": 50,
               "bid_winner_payment": 50, "utility": [50, 0], "valuations": [100, 0]},
              {"responses": [120, 25], "bid_winner": "player_0", "bid_winner_proposed": 120,
               "bid_winner_payment": 120, "utility": [-20, 0], "valuations": [100, 50]}]
    meta = {"name_exp": "sealed_bid_auction", "player_num": 2, "valuation_min": 0,
            "valuation_max": 200, "interval": 10, "seed": 44, "mode": "highest bid",
            "round_id": 2, "version": "v1", "models": "gemini-1.5-pro"}
    gemini = [{"role": "user", "parts": ["rules", "request 1"]}, {"role": "model", "parts": ['{"bid": "50"}']}]
    players = [_player(0, "gemini-1.5-pro", [50, 120], gemini), _player(1, "gemini-1.5-pro", [10, 25], gemini)]
    return _write(folder / "sealed_bid_auction" / "first_price"
                  / "gemini-1.5-pro_sealed_bid_auction_v1_1.json", meta, rounds, players)


def pirate_record(folder: Path):
    rounds = [{"gold_distribution": [100, 0, 0], "responses": ["accept", "reject", "reject"]},
              {"gold_distribution": [50, 50], "responses": ["accept", "accept"]}]
    meta = {"name_exp": "pirate_game", "player_num": 3, "round_id": 2, "version": "v1"}
    players = [_player(0, "llama-3.1-8b", ["accept"]), _player(1, "llama-3.1-8b", ["reject", "accept"]),
               _player(2, "llama-3.1-8b", ["reject", "accept"])]
    return _write(folder / "pirate_game" / "llama-3.1-8b_pirate_game_v1_2.json", meta, rounds, players)


def battle_record(folder: Path):
    def shot(shooter, target, out):
        return {"responses": [str(target)], "player_shooting": str(shooter), "initial_players": [],
                "shot_player": str(target), "action": "shoot", "out": out}

    rounds = [shot(0, 2, True), shot(1, 0, False), shot(0, 1, True)]
    meta = {"name_exp": "battle_royale", "player_num": 3, "base_hit_rate": 35, "interval": 5,
            "round_id": 4, "version": "v1"}
    players = [_player(s, "gpt-3.5-turbo", []) for s in range(3)]
    return _write(folder / "battle_royale" / "battle_royale_v1_3.json", meta, rounds, players)


def bar_record(folder: Path):
    rounds = [{"responses": ["go"] * 5, "go_num": 5, "go_ratio": 1.0, "winner": "stay", "utility": 0},
              {"responses": ["go", "stay", "go", "stay", "go"], "go_num": 3, "go_ratio": 0.6,
               "winner": "go", "utility": 10}]
    meta = {"name_exp": "bar_game_implicit_v1_4", "player_num": 5, "min": 0, "max": 10, "home": 5,
            "ratio": 0.6, "ratio_str": "60%", "mode": "implicit", "round_id": 2, "version": "v1"}
    players = [_player(s, "qwen2-72b", [r[s] for r in (rounds[0]["responses"], rounds[1]["responses"])])
               for s in range(5)]
    return _write(folder / "bar_game_implicit" / "qwen2-72b_bar_game_implicit_v1_4.json", meta, rounds, players)


@pytest.fixture
def raw_results(tmp_path):
    folder = tmp_path / "raw_results"
    guessing_record(folder)
    auction_record(folder)
    pirate_record(folder)
    battle_record(folder)
    bar_record(folder)
    return folder


def test_file_names():
    name = parse_file_name("gpt-4o_bar_game_implicit_v1_3.json")
    assert (name.game, name.variant, name.version, name.run_index, name.model_label) == (
        "bar", "implicit", "v1", 3, "GPT-4o-0806")
    plain = parse_file_name("guessing_game_v1_r2.json")
    assert (plain.prefix, plain.tag, plain.run_index, plain.model_label) == ("", "r2", None, "GPT-3.5-0125")
    assert parse_file_name("notes.json") is None


def test_read_record_handles_gemini_and_the_auction_seed(raw_results):
    rec = read_record(raw_results / "sealed_bid_auction" / "first_price"
                      / "gemini-1.5-pro_sealed_bid_auction_v1_1.json")
    assert rec.game == "auction" and rec.variant == "first" and rec.run_index == 1
    assert rec.params.seed == 42  # GAMA stores the seed after its last increment
    assert rec.players[0].messages[0] == {"role": "user", "content": "rules\n\nrequest 1"}
    assert rec.players[0].messages[1]["role"] == "assistant"
    assert rec.model == "gemini-1.5-pro"


def test_import_scores_every_record(raw_results, tmp_path):
    result = import_folder(raw_results, tmp_path / "results", "gama-import")
    assert (result.records, result.games, result.scored) == (5, 5, 5)
    con = open_run(result.run_dir)
    try:
        scores = dict(con.execute("SELECT game, gama_score FROM gama_games").fetchall())
        assert scores["guessing"] == pytest.approx(75.0)
        assert scores["auction"] == pytest.approx(25.0)
        assert scores["pirate"] == pytest.approx((200 - 51) / 200 * 50 + 50)
        assert scores["battle"] == pytest.approx(100.0)
        assert scores["bar"] == pytest.approx(100 * 0.4 / 0.6)
        labels = dict(con.execute("SELECT game, model_label FROM gama_games").fetchall())
        assert labels == {"guessing": "GPT-4o-0806", "auction": "Gemini-1.5-Pro",
                          "pirate": "LLaMA-3.1-8B", "battle": "GPT-3.5-0125", "bar": "Qwen-2-72B"}
        # seats from the players' own records, not GAMA's shuffled responses
        seat1 = con.execute("SELECT answer_number, payoff FROM gama_moves WHERE game = 'guessing' "
                            "AND seat = 1 ORDER BY round").fetchall()
        assert seat1 == [(30.0, 1.0), (60.0, 0.0)]
        moves = dict(con.execute("SELECT game, count(*) FROM gama_moves GROUP BY game").fetchall())
        assert moves == {"guessing": 6, "auction": 4, "pirate": 5, "battle": 3, "bar": 10}
        votes = con.execute("SELECT role, answer, equilibrium_distance FROM gama_moves WHERE "
                            "game = 'pirate' AND round = 1 ORDER BY seat").fetchall()
        assert votes == [("propose", "[100, 0, 0]", 2.0), ("vote", "reject", 0.0), ("vote", "reject", 0.0)]
        survivors = con.execute("SELECT seat, survived, rank FROM gama_players WHERE game = 'battle' "
                                "ORDER BY seat").fetchall()
        assert survivors == [(0, True, 1), (1, False, 2), (2, False, 2)]
        rounds = con.execute("SELECT count(*) FROM gama_rounds").fetchone()[0]
        assert rounds == 2 + 2 + 2 + 3 + 2
    finally:
        con.close()
    # a second import with the same run id resumes: nothing to write, nothing doubled
    again = import_folder(raw_results, tmp_path / "results", "gama-import")
    assert again.imported == 0 and again.games == 5


def _one_error_line(capsys, args) -> str:
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code != 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_cli_imports_a_folder(raw_results, tmp_path, capsys):
    main(["import", "gama", str(raw_results), "--run-id", "g", "--output-dir", str(tmp_path / "r")])
    assert "imported 5 GAMA-Bench records" in capsys.readouterr().out


def test_cli_refuses_a_run_id_that_holds_another_run(raw_results, tmp_path, capsys):
    run = tmp_path / "r" / "other"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"family": "matrix", "identity": {}}))
    line = _one_error_line(capsys, ["import", "gama", str(raw_results), "--run-id", "other",
                                    "--output-dir", str(tmp_path / "r")])
    assert "already holds another run" in line and "'matrix'" in line


def test_cli_bad_folder_is_one_line(tmp_path, capsys):
    line = _one_error_line(capsys, ["import", "gama", str(tmp_path / "nope"), "--run-id", "g",
                                    "--output-dir", str(tmp_path / "r")])
    assert "nope" in line and "no such folder" in line
    (tmp_path / "afile").write_text("x")
    assert "not a folder" in _one_error_line(
        capsys, ["import", "gama", str(tmp_path / "afile"), "--run-id", "g", "--output-dir", str(tmp_path / "r")])
    (tmp_path / "empty").mkdir()
    assert "no GAMA-Bench record" in _one_error_line(
        capsys, ["import", "gama", str(tmp_path / "empty"), "--run-id", "g", "--output-dir", str(tmp_path / "r")])


@pytest.mark.parametrize("content, says", [
    ("{not json", "not valid JSON"),
    ('{"meta": {}, "round_records": {}}', "no 'round_records' list"),
    ('{"meta": {"player_num": 3}, "round_records": [{"mean": 1}], "player_data": []}', "malformed round 1"),
])
def test_cli_malformed_file_is_one_line_naming_it(raw_results, tmp_path, capsys, content, says):
    bad = raw_results / "divide_dollar" / "divide_dollar_v1_1.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(content)
    line = _one_error_line(capsys, ["import", "gama", str(raw_results), "--run-id", "g",
                                    "--output-dir", str(tmp_path / "r")])
    assert "divide_dollar_v1_1.json" in line and says in line
    manifest = json.loads((tmp_path / "r" / "g" / "manifest.json").read_text())
    assert manifest["state"] == "failed" and "divide_dollar_v1_1.json" in manifest["error"]


def test_read_record_error_names_the_file(tmp_path):
    path = tmp_path / "pirate_game_v1_1.json"
    path.write_text("[]")
    with pytest.raises(RecordError, match="pirate_game_v1_1.json"):
        read_record(path)


def test_recorded_answers_replay_through_the_rules(raw_results):
    from distbench.games.gama import rules
    from distbench.games.gama.records import recorded_answers

    for rel in ("pirate_game/llama-3.1-8b_pirate_game_v1_2.json", "battle_royale/battle_royale_v1_3.json",
                "bar_game_implicit/qwen2-72b_bar_game_implicit_v1_4.json"):
        rec = read_record(raw_results / rel)
        state = rules.new_game(rec.game, rec.params)
        for index, stored in enumerate(rec.rounds):
            answers, hits = recorded_answers(rec, index, rules.actors(state))
            state, outcome = rules.resolve_round(state, answers, hits=hits)
            for key in ("gold_distribution", "responses", "shot_player", "out", "go_num", "winner"):
                if key in stored:
                    assert outcome.record[key] == stored[key], (rel, index, key)
        assert state.done or len(rec.rounds) == rec.params.rounds


def test_named_board_query_rounds_half_to_even_as_numpy(raw_results, tmp_path):
    result = import_folder(raw_results, tmp_path / "results", "board")
    sql = (Path(__file__).resolve().parents[3] / "distbench" / "queries" / "gama_board.sql").read_text()
    con = open_run(result.run_dir)
    try:
        rows = {r[0]: r[1:] for r in con.execute(sql).fetchall()}
        # numpy rounds 83.55 (835.5 tenths as a double) up, DuckDB's round(x, 1) down
        assert con.execute("SELECT round_even(83.55::DOUBLE * 10, 0) / 10").fetchone()[0] == 83.6
    finally:
        con.close()
    assert rows["GPT-4o-0806"] == (75.0, 75.0, None, None, None, None, None, None, None, 1)
    assert rows["GPT-3.5-0125"][7] == 100.0  # battle
    assert "Gemini-1.5-Pro" in rows and "LLaMA-3.1-8B" in rows
