"""The mock's skill in fog (issue 37, item 4): a skilled ``mock-nash<P>`` answer to a turn's
observation is valid JSON (orders that move towards the enemy, the sovereign fortified, flat
beliefs) in both styles, an unskilled one the dummy's text (``no_json``); the tournament test
is in tests/mockserver/test_skill_families.py."""

from __future__ import annotations

import json

import pytest

from distbench.games.fog.agents import make_agent
from distbench.games.fog.play import GameSession
from distbench.games.fog.rules import Rules
from distbench.games.fog.text import COMPLETION_PREFIX, build_request, parse_answer
from distbench.mockserver.answerers import MockAnswerer


def _observations():
    session = GameSession(Rules(), (make_agent("tier1"), make_agent("tier1")), 0, 0, "g")
    return session.observations()


@pytest.mark.parametrize("style", ["chat", "completion"])
def test_a_skilled_fog_answer_parses_and_moves(style):
    answerer = MockAnswerer()
    for obs in _observations():
        request = build_request(obs, style=style, seed=1, max_tokens=400, temperature=0.0)
        completion = style == "completion"
        text = answerer.answer_text(request.prompt, 7, completion=completion, skill=1.0)
        answer = COMPLETION_PREFIX + text if completion else text
        orders, report = parse_answer(answer, obs)
        assert report.status == "ok", answer
        assert any(order[0] == "move" for order in orders)
        assert json.loads(answer)["orders"][f"F{obs.sovereign}"] in (
            "fortify", "move N", "move S", "move E", "move W")
        unskilled = answerer.answer_text(request.prompt, 7, completion=completion, skill=0.0)
        assert parse_answer(unskilled, obs)[1].status == "no_json"
