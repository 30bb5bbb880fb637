"""The mock's skill in negotiation (issue 37, item 4): a skilled ``mock-nash<P>`` answer to a
seat's conversation is its secret proposal in the protocol's form (half of what it values, the
odd item of a prized type), so it never aborts an episode, while an unskilled answer is the
dummy's free text (the tournament test: tests/mockserver/test_skill_families.py)."""

from __future__ import annotations

import pytest

from distbench.games.negotiation import parse as P
from distbench.games.negotiation.instances import generate_instances
from distbench.games.negotiation.prompts import intro, text
from distbench.mockserver.answerers import MockAnswerer
from distbench.mockserver.skill import negotiation_answer


@pytest.mark.parametrize("lang", ["en", "de", "it"])
def test_a_skilled_proposal_parses_and_fits_the_other_seats(lang):
    for instance in generate_instances(4, 0, 20):
        for seat in ("a", "b"):
            conversation = intro(instance, seat, "semi", lang, 3) + "\n\n" + text(lang, "start")
            answer = negotiation_answer(conversation)
            parsed = P.parse_message(answer, instance.forms(lang), instance.counts, lang)
            assert parsed.status == P.PROPOSAL, (answer, parsed)
            assert all(2 * n <= c + 1 for n, c in zip(parsed.amounts, instance.counts,
                                                        strict=True))
    assert negotiation_answer("What is 2 + 2?") is None


def test_the_skill_share_decides_between_a_proposal_and_free_text():
    instance = generate_instances(4, 0, 1)[0]
    conversation = [{"role": "user", "content": intro(instance, "a", "semi", "en", 3)},
                    {"role": "assistant", "content": "Hello."},
                    {"role": "user", "content": text("en", "relay", text="Hi.")}]
    answerer = MockAnswerer()

    def proposals(skill: float) -> int:
        answers = [answerer.chat(conversation, seed=s, skill=skill)["choices"][0]["message"]
                   ["content"] for s in range(200)]
        return sum(answer.startswith("[Proposal:") for answer in answers)

    assert proposals(0.0) == 0
    assert proposals(1.0) == 200
    assert 60 < proposals(0.5) < 140
