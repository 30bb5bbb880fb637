"""``game_id`` names one game in a run, in every gama table: a suite of two models plays the
same games at two tables (distinct ids, every row's id a game's), and an import of both
auctions, whose records GAMA files under the same names, keeps them apart."""

from __future__ import annotations

import json

from distbench.games.gama.board import suite_configs, suite_shards
from distbench.games.gama.importer import import_folder
from distbench.games.gama.runner import run_shard
from distbench.llm.registry import build_backend, make_spec
from distbench.store.catalog import open_run


def test_two_tables_of_a_suite_never_share_a_game_id():
    specs = [make_spec("dummy", "random"), make_spec("dummy", "random", temperature=0.5)]
    configs = suite_configs(specs, runs=2, games=("guessing", "pirate"))
    tables: dict[str, list] = {}
    for shard in suite_shards(configs, "ids"):
        result = run_shard(shard, {s: build_backend(s) for s in shard.specs})
        for name, (_, table) in result.tables.items():
            tables.setdefault(name, []).extend(table.to_pylist())
    ids = [g["game_id"] for g in tables["gama_games"]]
    assert len(ids) == 8 and len(set(ids)) == 8
    for name in ("gama_moves", "gama_players"):
        assert {r["game_id"] for r in tables[name]} == set(ids)
    assert {r["game_id"] for r in tables["gama_rounds"]} <= set(ids)  # a forfeit has none
    # each game at each table: gama/<game>/<table>/s<seed>/g<i>
    assert len({i.rsplit("/", 2)[0] for i in ids}) == 4


def test_an_import_of_both_auctions_keeps_their_games_apart(tmp_path):
    folder = tmp_path / "raw_results" / "sealed_bid_auction"
    rounds = [{"responses": [50, 10], "bid_winner": "player_0", "bid_winner_proposed": 50,
               "bid_winner_payment": 50, "utility": [50, 0], "valuations": [100, 0]}]
    players = [{"model": "m", "id": f"player_{s}", "records": [r], "utility": [],
                "prompt": [{"role": "system", "content": "rules"}]}
               for s, r in enumerate((50, 10))]
    for mode, sub in (("highest bid", "first_price"), ("second highest bid", "second_price")):
        meta = {"player_num": 2, "valuation_min": 0, "valuation_max": 200, "interval": 10,
                "seed": 43, "mode": mode, "round_id": 1, "version": "v1"}
        (folder / sub).mkdir(parents=True)
        (folder / sub / "m_sealed_bid_auction_v1_1.json").write_text(json.dumps(
            {"meta": meta, "round_records": rounds, "player_data": players}))
    result = import_folder(tmp_path / "raw_results", tmp_path / "results", "both")
    con = open_run(result.run_dir)
    assert con.execute("select count(*), count(distinct game_id), count(distinct variant) "
                       "from gama_games").fetchone() == (2, 2, 2)
    assert con.execute("select count(distinct game_id) from gama_moves").fetchone() == (2,)
    con.close()


def test_one_model_behind_two_addresses_plays_the_same_games():
    """Game ids seed the games and their calls: they know the model, not where it is reached
    (two ports of a mock server drew different games before), while another model differs."""
    def ids(url, model="mock"):
        spec = make_spec("llamacpp", model, base_url=url)
        return [c.game_id(42, 0) for c in suite_configs([spec], runs=1)]

    assert ids("http://127.0.0.1:40001") == ids("http://127.0.0.1:40002")
    assert ids("http://127.0.0.1:40001") != ids("http://127.0.0.1:40001", "other")
