"""Self-play forfeits (issue 33): when one model fills both seats, an invalid answer in either
seat is the model's own and never scores as its win, in every family that can seat a model
twice (``--opponent self`` or the model named again as its own opponent); a tournament never
seats one player twice."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from distbench.games.base import PairingSettings
from distbench.llm.base import Backend, BackendSpec, Request, Response

SPEC = BackendSpec("llamacpp", "halfjunk")  # answered by PerBatch below, never called


class PerBatch(Backend):
    """Answers every request of its n-th batch with ``texts[n]`` (the last one after that)."""

    in_process = True

    def __init__(self, spec: BackendSpec, texts: Sequence[str]) -> None:
        super().__init__(spec)
        self.texts = list(texts)
        self.batches = 0

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        text = self.texts[min(self.batches, len(self.texts) - 1)]
        self.batches += 1
        return [Response(text=text) for _ in requests]


def test_openspiel_self_play_a_forfeit_by_either_seat_is_the_models_forfeit():
    pytest.importorskip("pyspiel")
    from distbench.games.openspiel.plan import OpenSpielShard
    from distbench.games.openspiel.runner import run_shard

    # --opponent self seats the model in both seats; in Kuhn poker seat 0 moves first (batch
    # 0: a legal move), then seat 1 (batch 1: nonsense): every match ends on the model's own
    # invalid answer, whichever seat player_a sits in, and none of them is its win (the
    # issue's example: 0.575 read where 0.125 was right)
    shard = OpenSpielShard(
        shard_id="t", game="kuhn_poker", mode="play", seed=3, start=0, stop=4, player=SPEC,
        opponent=SPEC, seat_orders=(0, 1), llm_seed=1, temperature=1.0, max_tokens=None,
        mcts_simulations=20, specs=(SPEC,), run_id="r")
    result = run_shard(shard, {SPEC: PerBatch(SPEC, ["Action: 1", "banana ??"])})
    matches = result.tables["matches"][1].to_pylist()
    assert len(matches) == 8
    assert {m["forfeit_seat"] for m in matches} == {1}
    assert [m["outcome_a"] for m in matches] == ["forfeit"] * 8
    assert all(m["quality_a"] == 0.0 for m in matches)


@pytest.mark.parametrize("opponent", ["self", "the model named again"])
def test_repeated_self_play_the_other_seats_invalid_answer_is_the_models_forfeit(opponent):
    from distbench.games.repeated.plan import RepeatedRunConfig, plan_repeated
    from distbench.games.repeated.runner import run_shard

    cfg = RepeatedRunConfig(llm=SPEC, opponents=("self" if opponent == "self" else SPEC,),
                            num_games=3, rounds=3)
    shard = plan_repeated(cfg, "r").shards[0]
    # round 1: the row seat's batch answers a move, the column seat's (the model too) nonsense
    result = run_shard(shard, {SPEC: PerBatch(SPEC, ["Action: 1", "banana ??"])})
    matches = result.tables["repeated_matches"][1].to_pylist()
    assert len(matches) == 3
    assert {m["status"] for m in matches} == {"forfeit"}
    assert all(m["quality"] == 0.0 for m in matches)


@pytest.mark.parametrize("opponent", ["self", "the model named again"])
def test_bimatrix_self_play_the_other_seats_invalid_answer_scores_zero(opponent):
    from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix
    from distbench.games.bimatrix.runner import run_shard

    cfg = BimatrixRunConfig(sets=("class:stag_hunt",), llm=SPEC, num_games=3, num_trials=2,
                            seats=("row",),
                            opponents=("self" if opponent == "self" else SPEC,))
    shard = plan_bimatrix(cfg, "b").shards[0]
    # the model's row answers (batch 0) are moves, its column answers (batch 1) nonsense
    result = run_shard(shard, {SPEC: PerBatch(SPEC, ["Action: 1", "banana ??"])})
    trials = result.tables["bimatrix_trials"][1].to_pylist()
    assert len(trials) == 6
    assert {t["parse_status"] for t in trials} == {"ok"}
    assert all(t["quality"] == 0.0 for t in trials)  # not left out, not scored: 0


@pytest.mark.parametrize("family, model", [
    ("negotiation", "llamacpp:mock"), ("bimatrix", "dummy"), ("repeated", "dummy"),
    ("openspiel", "dummy"), ("fog", "llamacpp:mock"),
])
def test_a_tournament_never_seats_one_player_twice(family, model):
    import distbench.games  # noqa: F401  (registers the families)
    from distbench.engine.tournament import Tournament, matches_from
    from distbench.games.base import SeatOutcome
    from distbench.games.registry import get_family, load_families

    load_families()
    with pytest.raises(ValueError, match="twice"):
        Tournament.build(get_family(family), [model, model], PairingSettings(num_instances=1))
    # a game of a player against itself is never rated (were one in the run)
    a, b, outcome, _ = matches_from([SeatOutcome("g", "i", "x", "x", 0.0, 1.0)], ("x", "y"))
    assert len(a) == 0


def test_fog_self_play_an_invalid_answer_in_either_seat_forfeits_the_game_for_both(tmp_path):
    import duckdb
    import pyarrow.compute as pc
    from cli_server import distbench

    from distbench.games.registry import get_family
    from distbench.mockserver import ServerConfig, start_server
    from distbench.store.catalog import open_run

    with start_server(ServerConfig(seed=1)) as server:
        run = distbench("run", "--family", "fog", "--llm-type", "llamacpp", "--llm-model",
                        "mock", "--base-url", server.url, "--opponent", "llamacpp",
                        "--num-games", "3", "--run-id", "f", "--no-parallel", "--no-cache",
                        cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    con = open_run(tmp_path / "results" / "f")
    try:
        games = con.sql("select * from fog_games order by game_id").to_arrow_table()
        reports = con.sql("select * from fog_reports").to_arrow_table()
    finally:
        con.close()
    assert set(games["agent_a"].to_pylist()) == set(games["agent_b"].to_pylist()) == {
        "llamacpp:mock"}
    # the mock server does not speak fog: make every report valid but seat a's in game 0
    first = games["game_id"][0].as_py()
    bad = pc.and_(pc.equal(reports["game_id"], first), pc.equal(reports["player"], "a"))
    k = reports.schema.get_field_index("report_status")
    reports = reports.set_column(k, "report_status",
                                 pc.if_else(bad, "no_json", "ok").cast(reports.schema[k].type))
    mem = duckdb.connect()
    mem.register("g", games)
    mem.register("r", reports)
    mem.execute("create view fog_games as select * from g")
    mem.execute("create view fog_reports as select * from r")
    [group] = get_family("fog").summary(mem, None)
    mem.close()
    # one model in both seats: game 0 is forfeited by the model whichever seat erred
    assert group["valid_rate_a"] == pytest.approx(2 / 3)
    assert group["valid_rate_b"] == pytest.approx(2 / 3)
