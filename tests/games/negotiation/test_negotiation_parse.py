"""The proposal parser on real-looking messages in all three languages."""

from __future__ import annotations

import pytest

from distbench.games.negotiation import parse as P
from distbench.games.negotiation.parse import parse_message

# Instance types per language: hats (2), balls (1), books (3); item words of the bundled lists.
FORMS = {
    "en": [("hat", "hats"), ("ball", "balls"), ("book", "books")],
    "de": [("Hut", "Hüte"), ("Ball", "Bälle"), ("Buch", "Bücher")],
    "it": [("cappello", "cappelli"), ("palla", "palle"), ("libro", "libri")],
}
COUNTS = (2, 1, 3)

ACCEPTED = [
    ("en", "[Proposal: 2 hats, 1 ball]", (2, 1, 0)),
    ("en", "I think this is fair. [Proposal: 1 ball, 2 hats] Let me know!", (2, 1, 0)),
    ("en", "[proposal:2 HATS ,  1 Ball , 3 books,]", (2, 1, 3)),
    ("en", "[ PROPOSAL : 1 hats, 2 book ]", (1, 0, 2)),  # singular/plural mismatch is fine
    ("en", "[Proposal: 0 hats, 0 balls, 0 books]", (0, 0, 0)),
    ("en", "[Proposal: ]", (0, 0, 0)),
    ("en", "[Proposal: 02 hats.]", (2, 0, 0)),
    ("en", "Okay.\n[Proposal:\n  3 books,\n  1 ball\n]", (0, 1, 3)),
    ("de", "Mein Vorschlag: [Vorschlag: 2 Hüte, 1 Ball]", (2, 1, 0)),
    ("de", "[vorschlag: 1 buch, 2 hut]", (2, 0, 1)),
    ("de", "[VORSCHLAG: 3 Bücher, 0 Bälle,]", (0, 0, 3)),
    ("de", "[Proposal: 1 Hut]", (1, 0, 0)),  # the English keyword is accepted everywhere
    ("it", "Ecco: [Proposta: 2 cappelli, 1 palla] grazie", (2, 1, 0)),
    ("it", "[proposta: 1 libri, 1 cappello]", (1, 0, 1)),
    ("it", "[Proposta: 3 LIBRI]", (0, 0, 3)),
]

REJECTED = [
    ("en", "[Proposal: 2 unicorns]", P.UNKNOWN_ITEM),
    ("en", "[Proposal: 1 Buch]", P.UNKNOWN_ITEM),  # a word of another language
    ("en", "[Proposal: 1 apple]", P.UNKNOWN_ITEM),  # a listed word this instance lacks
    ("en", "[Proposal: 1 hat, 1 hats]", P.REPEATED_ITEM),
    ("en", "[Proposal: 3 hats]", P.TOO_MANY),
    ("en", "[Proposal: 99999999999999999999999999 books]", P.TOO_MANY),
    ("en", "[Proposal: two hats]", P.BAD_NUMBER),
    ("en", "[Proposal: ２ hats]", P.BAD_NUMBER),  # fullwidth digit
    ("en", "[Proposal: ٢ hats]", P.BAD_NUMBER),  # Arabic-Indic digit
    ("en", "[Proposal: ² hats]", P.BAD_NUMBER),  # superscript two
    ("en", "[Proposal: -1 hats]", P.BAD_NUMBER),
    ("en", "[Proposal: 1.5 hats]", P.BAD_NUMBER),
    ("en", "[Proposal: hats]", P.MALFORMED),
    ("en", "[Proposal: 2 hats, , 1 ball]", P.MALFORMED),
    ("en", "[Proposal: 2 hats, 1 ball", P.MALFORMED),
    ("en", "[Proposal: 2 hats [1 ball]]", P.MALFORMED),
    ("en", "[Proposal: 1 hat] and also [Proposal: 1 ball]", P.MULTIPLE),
    ("de", "[Vorschlag: 2 Hüte, 1 Einhorn]", P.UNKNOWN_ITEM),
    ("de", "[Vorschlag: 1 Buch, 1 Bücher]", P.REPEATED_ITEM),
    ("de", "[Vorschlag: 2 Bälle]", P.TOO_MANY),
    ("de", "[Vorschlag: zwei Hüte]", P.BAD_NUMBER),
    ("it", "[Proposta: 1 unicorno]", P.UNKNOWN_ITEM),
    ("it", "[Proposta: 1 palla, 1 palle]", P.REPEATED_ITEM),
    ("it", "[Proposta: 4 libri]", P.TOO_MANY),
    ("it", "[Proposta: due cappelli]", P.BAD_NUMBER),
    # Near misses (issue 16): meant as a proposal, so never relayed as talk; they abort.
    ("it", "[Proposta 2 cappelli]", P.NEAR_MISS),  # no colon
    ("en", "[Proposal 1 hat]", P.NEAR_MISS),
    ("en", "I think [proposals: 1 hat] works", P.NEAR_MISS),
    ("en", "[Vorschlag: 1 hat]", P.NEAR_MISS),  # the German keyword in an English game
    ("de", "[Proposta: 1 Hut]", P.NEAR_MISS),
    ("en", "[Proposal 1 hat] [Proposal: 1 hat]", P.MULTIPLE),
]

MESSAGES = [
    ("en", "I would like the hats. What do you value?"),
    ("en", "My proposal: you take the books."),
    ("de", "Ich hätte gern die Hüte, du die Bücher."),
    ("it", "Io prendo i cappelli, tu i libri?"),
    ("en", ""),
]


@pytest.mark.parametrize("lang, text, amounts", ACCEPTED)
def test_accepted_proposals(lang, text, amounts):
    got = parse_message(text, FORMS[lang], COUNTS, lang)
    assert (got.status, got.amounts, got.detail) == (P.PROPOSAL, amounts, "")


@pytest.mark.parametrize("lang, text, status", REJECTED)
def test_rejected_proposals_have_a_reason(lang, text, status):
    got = parse_message(text, FORMS[lang], COUNTS, lang)
    assert got.status == status and got.amounts is None
    if status != P.MESSAGE:
        assert got.detail


@pytest.mark.parametrize("lang, text", MESSAGES)
def test_free_text_is_a_message(lang, text):
    assert parse_message(text, FORMS[lang], COUNTS, lang).status == P.MESSAGE


def test_a_name_of_two_types_is_ambiguous():
    forms = [("nut", "nuts"), ("Nut", "bolts")]
    got = parse_message("[Proposal: 1 nut]", forms, (1, 1))
    assert got.status == P.AMBIGUOUS_ITEM


def test_arbitrary_text_never_raises():
    import random

    rng = random.Random(0)
    alphabet = "[]:,. 0123456789２٢²hatsbolProposalVorschlag\n-"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        for lang in FORMS:
            got = parse_message("[Proposal:" + text, FORMS[lang], COUNTS, lang)
            assert got.status in (P.PROPOSAL, P.MESSAGE, *P.REJECTIONS)
