"""Every size and value a user can type is checked against a stated bound before any work, in
one line naming the option: a 1,000-player tournament, a search of 10^12 simulations, 10^9
bootstrap resamples, rounds that are not whole numbers, an empty game name."""

from __future__ import annotations

import logging
import time

import pytest

from distbench.cli.main import main

MODELS = ",".join(f"llamacpp:m{k}" for k in range(1000))

CASES = [
    (["tournament", "--family", "bimatrix", "--players", MODELS],
     "1,000 players make 499,500 pairings"),
    (["tournament", "--family", "repeated", "--players", ",".join(MODELS.split(",")[:40]),
      "--num-instances", "5000"], "780 pairings x 100 shard(s) = 78,000 shards, more than 50,000"),
    (["tournament", "--family", "openspiel", "--players", "solver,mcts", "--option",
      "game=tic_tac_toe", "--option", "mcts_simulations=1e12"],
     "--option mcts_simulations: a value of the wrong kind (mcts_simulations must be an integer"),
    (["tournament", "--family", "openspiel", "--players", "solver,mcts", "--option",
      "game=tic_tac_toe", "--option", "mcts_simulations=1000000000000"],
     "mcts_simulations must be from 1 to 10,000"),
    (["tournament", "--family", "openspiel", "--players", "solver,random", "--option",
      "game=\"\""], "--game must name an OpenSpiel game"),
    (["tournament", "--family", "repeated", "--players", "TitForTat,Defector", "--resamples",
      "1000000000"], "--resamples must be from 0 to 10,000"),
    (["tournament", "--family", "repeated", "--players", "TitForTat,Defector", "--option",
      "rounds=2.5"], "--option rounds: a value of the wrong kind (rounds must be an integer"),
    (["tournament", "--family", "repeated", "--players", "TitForTat,Defector", "--option",
      "rounds=true"], "--option rounds: a value of the wrong kind (rounds must be an integer"),
    (["tournament", "--family", "repeated", "--players", "TitForTat,Defector", "--option",
      "continuation=0.9", "--option", "max_rounds=1000000000"],
     "max_rounds must be from 1 to 10,000"),
    (["tournament", "--family", "fog", "--players", "tier1,tier2", "--option",
      "scouting=\"no\""], "--option scouting: a value of the wrong kind"),
    (["run", "--llm-type", "llamacpp", "--base-url", "http://127.0.0.1:9", "--max-retries",
      "1000000"], "max_retries: must be a finite integer >= 0 and <= 100"),
    (["run", "--llm-type", "llamacpp", "--base-url", "http://127.0.0.1:9",
      "--max-concurrency", "1000000"],
     "max_concurrency: must be a finite integer >= 1 and <= 4,096"),
    (["run", "--family", "openspiel", "--game", "", "--llm-type", "dummy"],
     "--game must name an OpenSpiel game"),
    (["run", "--family", "openspiel", "--game", "tic_tac_toe", "--opponent", "mcts",
      "--mcts-simulations", "1000000", "--llm-type", "dummy"], "--mcts-simulations"),
]


@pytest.mark.parametrize("args, fragment", CASES, ids=[" ".join(c[0][:6])[:50] + f" {i}"
                                                       for i, c in enumerate(CASES)])
def test_an_input_beyond_its_bound_is_one_line_before_any_work(args, fragment, tmp_path,
                                                                 monkeypatch, capsys, caplog):
    if "openspiel" in args:
        pytest.importorskip("pyspiel")
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.WARNING)
    start = time.monotonic()
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--no-parallel", "--run-id", "x"])
    assert time.monotonic() - start < 30  # said at once, not after planning or playing
    assert exit_info.value.code not in (0, None)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    lines += [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert fragment in lines[0], lines[0]
    assert not (tmp_path / "results" / "x").exists()
