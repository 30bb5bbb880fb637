"""Answer parsing for the matrix family: exact status and value on real-looking answers."""

from __future__ import annotations

import math
import random
import string

import pytest

from distbench.games.answers.parse import (
    MixedAnswer,
    ParseStatus,
    PureAnswer,
    parse_mixed,
    parse_pure,
)

OK = ParseStatus.OK
EMPTY = ParseStatus.EMPTY
NO_ANSWER = ParseStatus.NO_ANSWER
OUT_OF_RANGE = ParseStatus.OUT_OF_RANGE
AMBIGUOUS = ParseStatus.AMBIGUOUS
WRONG_LENGTH = ParseStatus.WRONG_LENGTH
NOT_A_DISTRIBUTION = ParseStatus.NOT_A_DISTRIBUTION

# (text, m, expected status, expected action as written by the model: 1-based, or None)
PURE_CHAT_CASES = [
    ("Action: 2", 3, OK, 2),
    ("Action: 1.", 3, OK, 1),
    ("action:2", 3, OK, 2),
    ("**Action: 2**", 3, OK, 2),
    ("**Action:** 3", 3, OK, 3),
    ("Action: Row 2", 3, OK, 2),
    ("Final answer: row 2", 3, OK, 2),
    ("- Final Answer: Action 3", 3, OK, 3),
    ("Answer: 3", 3, OK, 3),
    ("The answer is 3", 3, OK, 3),
    ("My choice: Action #2", 3, OK, 2),
    ("Action 2", 3, OK, 2),
    ("Action: 2\nAction: 3", 3, OK, 3),  # the last explicit answer wins
    (
        "Action: 1\n\nWait, row 1 is dominated by row 2. Let me revise.\n\nAction: 2",
        3,
        OK,
        2,
    ),
    ("I considered action: 1 but my final answer is 2", 3, OK, 2),
    ("Action: <k>\n\nAction: 3", 3, OK, 3),  # an echoed template is not an answer
    ("Action: <k>", 3, NO_ANSWER, None),
    ("I'd pick row 2, not row 1", 3, OK, 2),
    ("I would go with row 3 rather than row 1.", 3, OK, 3),
    ("Instead of action 1, I choose action 2.", 3, OK, 2),
    ("I don't want to pick row 1. I pick row 3.", 3, OK, 3),
    ("Option 3 seems best.", 3, OK, 3),
    ("Not row 1. Row 3 is the safest.", 3, OK, 3),
    ("So, after all that, Action: 2.", 3, OK, 2),
    ("For each action: row 1 gives at least -1, row 2 at least 0.", 3, AMBIGUOUS, None),
    ("For each action: row 1 gives at least -1, row 2 at least 0.\nAction: 2", 3, OK, 2),
    ("row 0", 3, OUT_OF_RANGE, None),
    ("Action: 4", 3, OUT_OF_RANGE, None),
    ("Action: 0", 3, OUT_OF_RANGE, None),
    ("Action: -1", 3, OUT_OF_RANGE, None),
    ("Action: 3", 2, OUT_OF_RANGE, None),
    ("Answer: 99999999999999999999999", 3, OUT_OF_RANGE, None),
    ("I cannot decide", 3, NO_ANSWER, None),
    ("I choose column 2.", 3, NO_ANSWER, None),  # columns belong to the opponent
    ("Answer: one of the rows is clearly dominated", 3, NO_ANSWER, None),
    ("", 3, EMPTY, None),
    ("  \n\t ", 3, EMPTY, None),
    ("2", 3, OK, 2),
    ("2.", 3, OK, 2),
    ("(2)", 3, OK, 2),
    ("**3**", 3, OK, 3),
    ("Two.", 3, OK, 2),
    ("Action: two", 3, OK, 2),
    ("Action: ten", 10, OK, 10),
    ("Action: 10", 10, OK, 10),
    ("2.5", 3, NO_ANSWER, None),
    ("Action: 2.5", 3, NO_ANSWER, None),
    ("Action: 2/3", 3, NO_ANSWER, None),
    ("Action: 2.0", 3, OK, 2),
    ("Action: ２", 3, OK, 2),  # full-width digits are digits
    ("Action: 2 or 3", 3, AMBIGUOUS, None),
    ("Action: 1, 3", 3, AMBIGUOUS, None),
    ("Row 1 or row 2 both look fine.", 3, AMBIGUOUS, None),
    (
        "Worst cases: Row 1 gives at least -1. Row 2 gives at least -2. Row 3 gives at least "
        "-3. Row 1 maximises my guaranteed payoff.\n\nAction: 1",
        3,
        OK,
        1,
    ),
    (
        "Row 1: min -1\nRow 2: min -3\nRow 3: min 0\nThe maximin is row 3, so I choose row 3.",
        3,
        OK,
        3,
    ),
    (
        "If I choose row 2 the opponent plays column 1. If I choose row 3 they play column 2.",
        3,
        AMBIGUOUS,
        None,
    ),
    (
        "I will play Action 3.\n\nExplanation: Action 3 guarantees at least 0, whereas "
        "action 1 can lose 5.",
        3,
        OK,
        3,
    ),
    ("<think>Maybe action 1.\nAction: 1</think>\nAction: 3", 3, OK, 3),
    ("<think>Row 2 looks good but I ran out of tok", 3, EMPTY, None),  # cut-off reasoning
    ("Action: 1\n<think>Hmm, row 2 might be better", 3, OK, 1),
    ("<think>Action: 2</think>", 3, EMPTY, None),
    ("The final answer is $\\boxed{2}$.", 3, OK, 2),
    ("Action: 3 (the safest row; row 1 risks -5)", 3, OK, 3),
    (
        "### Action 2\nAction 2 guarantees 1.\n\n### Action 3\nAction 3 risks -4.",
        3,
        AMBIGUOUS,
        None,
    ),
    ("Action: 2\n\nNote: I'm not choosing row 3 because column 2 hurts.", 3, OK, 2),
    ("The best action is 2, not 1.", 3, OK, 2),
]

PURE_CONTINUATION_CASES = [
    (" 2", 3, OK, 2),
    ("2", 3, OK, 2),
    (" 2\n\nQuestion: In the game below, which action should the row player pick?", 3, OK, 2),
    (" 3.\nAction: 1", 3, OK, 3),  # base models ramble on: only the start counts
    (" Row 2 is the best choice because it never loses.", 3, OK, 2),
    (" 2 (row 2 guarantees 1)", 3, OK, 2),
    (" **2**", 3, OK, 2),
    ("\n2\n", 3, OK, 2),
    (" two\n", 3, OK, 2),
    (" 2 or 3", 3, AMBIGUOUS, None),
    (" 4", 3, OUT_OF_RANGE, None),
    (" 0\n", 3, OUT_OF_RANGE, None),
    (" 2.5", 3, NO_ANSWER, None),
    (" The best action is 2", 3, NO_ANSWER, None),  # strict: the answer must come first
    ("\n\nQuestion: what is 2 + 2?", 3, NO_ANSWER, None),
    ("", 3, EMPTY, None),
    (" \n\n ", 3, EMPTY, None),
]


def _check_pure(answer: PureAnswer, status: ParseStatus, action: int | None) -> None:
    assert answer.status is status, answer
    if status is OK:
        assert answer.action == action - 1, answer  # the parser returns a 0-based index
        assert answer.detail == ""
    else:
        assert answer.action is None
        assert 0 < len(answer.detail) <= 60, answer


@pytest.mark.parametrize(("text", "m", "status", "action"), PURE_CHAT_CASES)
def test_parse_pure_chat_answers(text, m, status, action):
    _check_pure(parse_pure(text, m), status, action)


@pytest.mark.parametrize(("text", "m", "status", "action"), PURE_CONTINUATION_CASES)
def test_parse_pure_continuations(text, m, status, action):
    _check_pure(parse_pure(text, m, continuation=True), status, action)


def test_out_of_range_detail_names_the_number():
    assert "4" in parse_pure("Action: 4", 3).detail
    assert "0" in parse_pure("row 0", 3).detail
    assert "7" in parse_pure(" 7", 3, continuation=True).detail


@pytest.mark.parametrize("k", range(-2, 13))
@pytest.mark.parametrize("m", [1, 2, 3, 10])
def test_fast_path_agrees_with_the_general_rules(k, m):
    fast = parse_pure(f"Action: {k}", m)
    general = parse_pure(f"Let me think.\n**Action:** {k}", m)
    assert (fast.status, fast.action) == (general.status, general.action)
    cont_fast = parse_pure(f" {k}\n\nQuestion:", m, continuation=True)
    cont_general = parse_pure(f" {k} (my pick)\n", m, continuation=True)
    assert (cont_fast.status, cont_fast.action) == (cont_general.status, cont_general.action)
    assert (fast.status is OK) == (1 <= k <= m)


# (text, m, expected status, expected strategy or None)
MIXED_CHAT_CASES = [
    ("Strategy: [0.2, 0.5, 0.3]", 3, OK, (0.2, 0.5, 0.3)),
    ("[0.2, 0.5, 0.3]", 3, OK, (0.2, 0.5, 0.3)),
    ("0.2, 0.5, 0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: (0.2, 0.5, 0.3)", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: 0.2, 0.5, 0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: 0.2 0.5 0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: 0.2; 0.5; 0.3.", 3, OK, (0.2, 0.5, 0.3)),
    ("**Strategy:** [0.1, 0.1, 0.8]", 3, OK, (0.1, 0.1, 0.8)),
    ("Action 1: 0.2, Action 2: 0.5, Action 3: 0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("Action 3: 0.3, Action 1: 0.2, Action 2: 0.5", 3, OK, (0.2, 0.5, 0.3)),
    ("p1=0.2, p2=0.5, p3=0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("x1 = 0.2, x2 = 0.5, x3 = 0.3", 3, OK, (0.2, 0.5, 0.3)),
    ("P(row 1) = 0.3, P(row 2) = 0.3, P(row 3) = 0.4", 3, OK, (0.3, 0.3, 0.4)),
    ("- Action 1: 20%\n- Action 2: 50%\n- Action 3: 30%", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy:\n- Action 1: 0.25\n- Action 2: 0.75\n\nThat is all.", 2, OK, (0.25, 0.75)),
    ("Strategy:\n[0.2, 0.5, 0.3]", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: [\n  0.2,\n  0.5,\n  0.3\n]", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: [20%, 50%, 30%]", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: [20, 50, 30]%", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: [20, 50, 30]", 3, NOT_A_DISTRIBUTION, None),
    ("Strategy: [1/3, 1/3, 1/3]", 3, OK, (1 / 3, 1 / 3, 1 / 3)),
    ("Strategy: [\\frac{1}{4}, \\frac{1}{4}, \\frac{1}{2}]", 3, OK, (0.25, 0.25, 0.5)),
    ("Strategy: [0.33, 0.33, 0.33]", 3, OK, (1 / 3, 1 / 3, 1 / 3)),  # sum 0.99: renormalised
    ("Strategy: 0.333, 0.333, 0.334", 3, OK, (0.333, 0.333, 0.334)),
    ("Strategy: [0.98, 0, 0]", 3, OK, (1.0, 0.0, 0.0)),
    ("Strategy: [0.97, 0, 0]", 3, NOT_A_DISTRIBUTION, None),
    ("Strategy: [0.5, 0.3]", 2, NOT_A_DISTRIBUTION, None),
    ("Strategy: [0, 0, 0]", 3, NOT_A_DISTRIBUTION, None),
    ("Strategy: [0.6, -0.1, 0.5]", 3, NOT_A_DISTRIBUTION, None),
    ("Strategy: [nan, 0.5, 0.5]", 3, ParseStatus.NON_FINITE, None),
    ("Strategy: [inf, 0, 0]", 3, ParseStatus.NON_FINITE, None),
    ("Strategy: [0.5, 0.5]", 3, WRONG_LENGTH, None),
    ("Strategy: [0.25, 0.25, 0.25, 0.25]", 3, WRONG_LENGTH, None),
    ("Action 1: 0.5, Action 3: 0.5", 3, WRONG_LENGTH, None),
    ("Answer: 2", 3, WRONG_LENGTH, None),  # a pure answer to a mixed question
    ("Action 4: 0.1, Action 1: 0.9", 3, OUT_OF_RANGE, None),
    ("p1 = 0.2, p2 = 0.5, p3 = 0.3, p1 = 0.4", 3, AMBIGUOUS, None),
    (
        "Strategy: [0.5, 0.5, 0]\nOn reflection...\nStrategy: [0.4, 0.4, 0.2]",
        3,
        OK,
        (0.4, 0.4, 0.2),
    ),
    (
        "Equalising against column 1 gives x = [0.5, 0.5, 0], but row 3 also matters.\n"
        "Final strategy: [0.3, 0.3, 0.4]",
        3,
        OK,
        (0.3, 0.3, 0.4),
    ),
    ("I'll mix [0.5, 0.5, 0] or perhaps [0.4, 0.4, 0.2].", 3, AMBIGUOUS, None),
    (
        "Action 1: 0.5, Action 2: 0.5, Action 3: 0\n\nSo roughly [0.4, 0.4, 0.2].",
        3,
        AMBIGUOUS,
        None,
    ),
    (
        "I'll play row 1 with probability 0.7, row 2 with probability 0.3 and row 3 with "
        "probability 0.",
        3,
        OK,
        (0.7, 0.3, 0.0),
    ),
    ("I'll put 50% on row 1, 25% on row 2 and 25% on row 3.", 3, OK, (0.5, 0.25, 0.25)),
    ("The optimal strategy is [0.25, 0.25, 0.5].", 3, OK, (0.25, 0.25, 0.5)),
    ("Final answer: $\\boxed{[0.1, 0.1, 0.8]}$", 3, OK, (0.1, 0.1, 0.8)),
    ("Strategy: [0.2, 0.5, 0.3]. This leans on row 2 (payoff 4).", 3, OK, (0.2, 0.5, 0.3)),
    ("Strategy: [0.5, 0.5, 0.0] (row 3 is dominated)", 3, OK, (0.5, 0.5, 0.0)),
    ("Strategy: [p1, p2, p3]", 3, NO_ANSWER, None),  # an echoed template
    ("Strategy: [p1, p2]\n\nAfter thinking it over: Strategy: [0.6, 0.4]", 2, OK, (0.6, 0.4)),
    ("p1 = 0.4, so p2 = 1 - p1 = 0.6", 2, WRONG_LENGTH, None),  # arithmetic is not an answer
    ("I don't know.", 3, NO_ANSWER, None),
    ("", 3, EMPTY, None),
    ("\n \n", 3, EMPTY, None),
]

MIXED_CONTINUATION_CASES = [
    ("0.2, 0.5, 0.3]\n\nQuestion: In the next game...", 3, OK, (0.2, 0.5, 0.3)),
    (" 0.2, 0.5, 0.3] because row 2 pays best", 3, OK, (0.2, 0.5, 0.3)),
    ("0.2, 0.5, 0.3\n\nQuestion:", 3, OK, (0.2, 0.5, 0.3)),
    ("[0.2, 0.5, 0.3]", 3, OK, (0.2, 0.5, 0.3)),  # a cue without its bracket works too
    (" [0.2, 0.5, 0.3]\nStrategy: [1, 0, 0]", 3, OK, (0.2, 0.5, 0.3)),
    ("0.2, 0.5, 0.3]\nStrategy: [1, 0, 0]", 3, OK, (0.2, 0.5, 0.3)),
    ("1/3, 1/3, 1/3]", 3, OK, (1 / 3, 1 / 3, 1 / 3)),
    ("20%, 50%, 30%]", 3, OK, (0.2, 0.5, 0.3)),
    ("20, 50, 30]%", 3, OK, (0.2, 0.5, 0.3)),
    ("0.2,\n0.5,\n0.3]\n\nNext", 3, OK, (0.2, 0.5, 0.3)),
    ("Action 1: 0.2, Action 2: 0.5, Action 3: 0.3]", 3, OK, (0.2, 0.5, 0.3)),
    ("0.5, 0.5]", 3, WRONG_LENGTH, None),
    ("0.5, 0.6, 0.7]", 3, NOT_A_DISTRIBUTION, None),
    ("p1, p2, p3]", 3, NO_ANSWER, None),
    ("0.2, 0.5 and then 0.3]", 3, NO_ANSWER, None),
    ("\n\nQuestion: which row?", 3, NO_ANSWER, None),
    ("", 3, EMPTY, None),
]


def _check_mixed(answer: MixedAnswer, status: ParseStatus, strategy) -> None:
    assert answer.status is status, answer
    if status is OK:
        assert answer.strategy is not None and answer.detail == ""
        assert answer.strategy == pytest.approx(strategy, abs=1e-12)
        assert math.fsum(answer.strategy) == pytest.approx(1.0, abs=1e-12)
        assert all(p >= 0.0 for p in answer.strategy)
    else:
        assert answer.strategy is None
        assert 0 < len(answer.detail) <= 60, answer


@pytest.mark.parametrize(("text", "m", "status", "strategy"), MIXED_CHAT_CASES)
def test_parse_mixed_chat_answers(text, m, status, strategy):
    _check_mixed(parse_mixed(text, m), status, strategy)


@pytest.mark.parametrize(("text", "m", "status", "strategy"), MIXED_CONTINUATION_CASES)
def test_parse_mixed_continuations(text, m, status, strategy):
    _check_mixed(parse_mixed(text, m, continuation=True), status, strategy)


@pytest.mark.parametrize(
    ("text", "m", "detail"),
    [
        ("Strategy: [0.5, 0.3]", 2, "sum 0.80"),
        ("Strategy: [0.6, -0.1, 0.5]", 3, "negative p2 = -0.1"),
        ("Strategy: [0.2, 0.3, 0.5]", 2, "3 values for 2 actions"),
        ("Strategy: [0, 0]", 2, "all zero"),
    ],
)
def test_mixed_failure_details_are_short_and_specific(text, m, detail):
    assert parse_mixed(text, m).detail == detail


def test_exact_decimal_answers_are_returned_unchanged():
    assert parse_mixed("Strategy: [0.2, 0.5, 0.3]", 3).strategy == (0.2, 0.5, 0.3)


def test_status_values_match_the_stored_strings():
    assert [s.value for s in ParseStatus] == [
        "ok",
        "empty",
        "no_answer",
        "out_of_range",
        "ambiguous",
        "wrong_length",
        "not_a_distribution",
        "call_failed",
        "low_label_mass",
        "non_finite",
    ]
    assert ParseStatus.OK == "ok"


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_num_actions_is_a_programming_error(bad):
    with pytest.raises(ValueError, match="num_actions"):
        parse_pure("Action: 1", bad)
    with pytest.raises(ValueError, match="num_actions"):
        parse_mixed("[1]", bad)


_FUZZ_ALPHABET = string.printable + "０１２３٢٣−％：［］（）½²³…—“”é漢字\u200b\u0301"
_FUZZ_PIECES = [
    "Action",
    "action:",
    "Answer: ",
    "Strategy:",
    "[",
    "]",
    "(",
    ")",
    "row ",
    "p1=",
    "Action 1:",
    "%",
    "/",
    "\\boxed{",
    "}",
    "\\frac{1}{",
    "</think>",
    "not ",
    "0.5",
    "1/3",
    "1/0",
    "0/0",
    "nan",
    "inf",
    "1e999",
    "9" * 30,
    "\n",
    "\n\n",
    " or ",
    ",",
    "**",
    "-",
    "two",
    " with probability ",
    " on row ",
]


def _fuzz_strings(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 2:
            out.append("".join(rng.choice(_FUZZ_ALPHABET) for _ in range(rng.randint(0, 60))))
        else:
            tokens = _FUZZ_PIECES + list(_FUZZ_ALPHABET)
            out.append("".join(rng.choice(tokens) for _ in range(rng.randint(0, 30))))
    return out


def test_parsers_never_raise_and_keep_their_invariants_on_random_text():
    for text in _fuzz_strings(3000, seed=20240601):
        for m in (1, 2, 3, 7):
            for continuation in (False, True):
                pure = parse_pure(text, m, continuation=continuation)
                assert pure.status is not ParseStatus.CALL_FAILED
                assert (pure.action is not None) == (pure.status is OK)
                if pure.status is OK:
                    assert 0 <= pure.action < m
                assert (pure.detail == "") == (pure.status is OK)
                mixed = parse_mixed(text, m, continuation=continuation)
                assert mixed.status is not ParseStatus.CALL_FAILED
                assert (mixed.strategy is not None) == (mixed.status is OK)
                if mixed.status is OK:
                    assert len(mixed.strategy) == m
                    assert all(p >= 0.0 and math.isfinite(p) for p in mixed.strategy)
                    assert math.fsum(mixed.strategy) == pytest.approx(1.0, abs=1e-12)
                assert (mixed.detail == "") == (mixed.status is OK)


@pytest.mark.parametrize(
    "text",
    [
        "1 " * 50_000,
        "[" * 50_000,
        "(" * 50_000 + "1",
        "Action: " * 20_000,
        "p1=" * 20_000,
        "row 1 not " * 10_000,
        "Action: " + "9" * 50_000,
        "9" * 50_000,
        "Strategy: [" + "0.1," * 20_000,
        "\\frac{1}{" * 10_000,
    ],
)
def test_parsers_survive_long_adversarial_text(text):
    for continuation in (False, True):
        assert isinstance(parse_pure(text, 3, continuation=continuation), PureAnswer)
        assert isinstance(parse_mixed(text, 3, continuation=continuation), MixedAnswer)


@pytest.mark.parametrize(
    "values",
    ["0.2, 0.5, 0.3", "0.5,0.5", "1, 0, 0", "0.33, 0.33, 0.33", "0.5, 0.3", "0, 0, 0", ".5, .5"],
)
@pytest.mark.parametrize("m", [2, 3])
def test_mixed_fast_path_agrees_with_the_general_rules(values, m):
    fast = parse_mixed(f"Strategy: [{values}]", m)
    general = parse_mixed(f"Let me think.\n**Strategy:** [{values}]", m)
    assert fast == general
    cont_fast = parse_mixed(f" {values}]\n\nQuestion:", m, continuation=True)
    cont_general = parse_mixed(f"\n{values}]\n\nQuestion:", m, continuation=True)
    assert cont_fast == cont_general
    # a "%" after the list divides it by 100, so none of these sums to 1 any more
    assert parse_mixed(f"{values}]%", m, continuation=True).status is not OK
