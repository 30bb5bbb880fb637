"""The mock's skill beyond matrix prompts: a ``mock-nash<P>`` model plays bimatrix, repeated,
OpenSpiel, negotiation and fog prompts skilfully in a share P of its answers (the last two's
answers: test_skill_negotiation.py, test_skill_fog.py), so a tournament of two mock "API
models" ranks them by their skill in each of these families."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from distbench.games.answers.parse import parse_pure
from distbench.games.bimatrix.prompts import prompt as bimatrix_prompt
from distbench.games.repeated.runner import prompt as repeated_prompt
from distbench.mockserver.answerers import MockAnswerer
from distbench.mockserver.skill import difference_game, skilled_answer

# A prisoner's dilemma: (row, column) payoffs; action 1 cooperates, action 2 defects.
PD_A = np.array([[3.0, 0.0], [5.0, 1.0]])
PD_B = PD_A.T.copy()


@pytest.mark.parametrize("seat", ["row", "col"])
def test_a_skilled_bimatrix_answer_defects_in_a_prisoners_dilemma_from_either_seat(seat):
    text = bimatrix_prompt(PD_A, PD_B, seat, "pure", "chat")
    assert skilled_answer(text, "pure", 2, 0.5) == ("pure", 2)
    answerer = MockAnswerer()
    answers = [parse_pure(answerer.answer_text(text, s, completion=False, skill=1.0), 2).action
               for s in range(20)]
    assert answers == [1] * 20  # 0-based: Action 2


def test_the_difference_game_of_a_seat_is_its_scaled_payoff_minus_the_others():
    d = difference_game(PD_A, PD_B)
    np.testing.assert_allclose(d, [[0.0, -1.0], [1.0, 0.0]])


def test_a_skilled_repeated_answer_defects_and_skill_zero_answers_as_the_dummy():
    text = repeated_prompt(PD_A, PD_B, [(0, 1)], 2, 10, None, False, "chat")
    assert skilled_answer(text, "pure", 2, 0.1) == ("pure", 2)
    answerer = MockAnswerer()
    dummy = [answerer.answer_text(text, s, completion=False) for s in range(10)]
    assert [answerer.answer_text(text, s, completion=False, skill=0.0) for s in range(10)] == dummy


def test_a_skilled_kuhn_answer_follows_the_equilibrium(tmp_path, monkeypatch):
    """With the King facing a bet, the equilibrium always calls; with the Jack facing a bet,
    it always folds (Kuhn poker's equilibrium family)."""
    monkeypatch.setenv("DISTBENCH_CACHE_DIR", str(tmp_path))
    from distbench.games.openspiel.rules import RULES, prompt

    for card, expected in (("2pb", 2), ("0pb", 1)):
        text = prompt(RULES["kuhn_poker"], 0, card, ["Pass", "Bet"])
        assert skilled_answer(text, "pure", 2, 0.3) == ("pure", expected)


def _tournament(cwd, family: str, url: str, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "distbench", "tournament", "--family", family, "--no-parallel",
         "--players", "llamacpp:mock-nash90,llamacpp:mock-nash50", "--base-url", url,
         "--num-instances", "40", "--resamples", "50", "--run-id", family, *options],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, "RAY_AUTH_MODE": "disabled",
             "DISTBENCH_CACHE_DIR": str(cwd / "cache")})


@pytest.mark.parametrize("family", ["bimatrix", "repeated", "openspiel", "negotiation", "fog"])
def test_a_tournament_ranks_mock_nash90_above_mock_nash50(tmp_path, family):
    from distbench.mockserver import ServerConfig, start_server

    with start_server(ServerConfig()) as server:
        out = _tournament(tmp_path, family, server.url)
    assert out.returncode == 0, out.stderr
    ratings = tmp_path / "results" / family
    from distbench.store.catalog import open_run

    con = open_run(ratings)
    try:
        rows = con.execute("select player, wins, matches from ratings order by rank").fetchall()
    finally:
        con.close()
    assert [r[0] for r in rows] == ["llamacpp:mock-nash90", "llamacpp:mock-nash50"], rows
    assert rows[0][1] > rows[1][1], rows
    manifest = json.loads((ratings / "manifest.json").read_text())
    assert manifest["state"] == "complete"
