"""A game with more trials than a shard holds is split across shards: the rows are those of the
same run with the game whole (but for the shard that wrote them), and the summary pools the
parts into one game."""

from __future__ import annotations

import pytest

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run

_SORT = ["mode", "game_index", "trial"]
_WHERE_WRITTEN = {"shard_id", "call_id", "latency_ms"}


def _config(spec, shard_trials: int, modes=("pure", "mixed")) -> MatrixRunConfig:
    return MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(3,), num_games=2,
                           num_trials=250, modes=modes, llm=spec, shard_trials=shard_trials)


def _tables(run_dir):
    con = open_run(run_dir)
    trials = con.sql(f"select * from trials order by {', '.join(_SORT)}").to_arrow_table()
    keep = [c for c in trials.column_names if c not in _WHERE_WRITTEN]
    return con, trials.select(keep)


def test_split_and_whole_games_give_the_same_rows_and_summary(tmp_path):
    spec = make_spec("dummy")
    whole = run_config(_config(spec, 20_000), tmp_path / "whole" / "r", parallel=False)
    split = run_config(_config(spec, 101), tmp_path / "split" / "r", parallel=False)
    con_whole, rows_whole = _tables(whole.run_dir)
    con_split, rows_split = _tables(split.run_dir)
    assert rows_split.equals(rows_whole)
    assert rows_split.num_rows == 2 * 2 * 250
    shards = con_split.execute("select count(distinct shard_id) from trials").fetchone()[0]
    assert shards == 2 * 5  # 50 trials of each mode a part: 5 parts a game
    games = con_split.execute("select count(*), count(distinct game_id) from games").fetchone()
    assert games == (2, 2)  # the parts of a game share its games row
    parts = con_split.execute("select count(*) from game_scores").fetchone()[0]
    assert parts == 2 * 2 * 5
    for a, b in zip(whole.summary, split.summary, strict=True):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
            elif isinstance(value, list) and value and isinstance(value[0], float):
                assert b[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
            else:
                assert b[key] == value, key


def test_a_split_game_played_by_a_model_names_each_trial_once_in_calls(tmp_path):
    """Against a server, with several samples per request: the calls of each part name the
    game's trials by their own numbers, and each trial's call answered it."""
    with start_server(ServerConfig()) as server:
        spec = make_spec("llamacpp", "mock", "chat", base_url=server.url, rpm=None,
                         max_concurrency=4, cache=False, max_n=32)
        out = run_config(_config(spec, 120, modes=("pure",)), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    trials = con.execute("select count(*), count(distinct trial_id) from trials").fetchone()
    assert trials == (500, 500)
    covered = con.execute(
        "select count(*) from (select distinct c.trial_id from calls c join trials t "
        "on t.call_id = c.call_id)").fetchone()[0]
    requests = con.execute("select count(*), sum(samples) from calls").fetchone()
    assert requests[1] == 500 and requests[0] < 500  # several samples a request
    assert covered == requests[0]  # every request is named by the trials it answered
    firsts = con.execute("select list(distinct trial order by trial) from trials t join calls c "
                         "on t.call_id = c.call_id and c.trial_id = t.trial_id").fetchone()[0]
    assert 120 in firsts  # the second part's first trial opened a request
    assert con.execute("select max(trial) from trials").fetchone()[0] == 249
