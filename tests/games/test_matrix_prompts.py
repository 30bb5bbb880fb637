"""Prompts for the matrix family: content, table, determinism, cues, and agreement with parse."""

from __future__ import annotations

import re

import numpy as np
import pytest

from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.matrix.prompts import (
    MIXED_COMPLETION_CUE,
    MIXED_CUE,
    PURE_COMPLETION_CUE,
    PURE_CUE,
    format_payoff,
    mixed_prompt,
    payoff_table,
    pure_prompt,
)

RPS_LIKE = np.array([[3.0, -1.0, 0.0], [-2.0, 4.0, 1.5], [0.0, 2.0, -3.0]])
SHAPES = [(2, 2), (3, 3), (2, 5), (5, 2), (1, 4), (10, 10)]
BUILDERS = [pure_prompt, mixed_prompt]
STYLES = ["chat", "completion"]


def _game(m: int, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-50, 51, size=(m, n)).astype(np.float64)


def _table_lines(prompt: str, m: int) -> list[str]:
    lines = prompt.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Column 1"))
    return lines[start : start + m + 1]


def _read_table(prompt: str, m: int, n: int) -> np.ndarray:
    rows = _table_lines(prompt, m)[1:]
    values = []
    for i, line in enumerate(rows, start=1):
        label, _, rest = line.partition(f"Action {i} ")
        assert label == "", line
        values.append([float(tok) for tok in rest.split()])
    matrix = np.array(values)
    assert matrix.shape == (m, n)
    return matrix


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("m", "n"), SHAPES)
def test_prompt_shows_the_exact_matrix_with_all_labels(builder, style, m, n):
    payoff = _game(m, n, seed=m * 100 + n)
    prompt = builder(payoff, style=style)
    np.testing.assert_array_equal(_read_table(prompt, m, n), payoff)
    for i in range(1, m + 1):
        assert re.search(rf"^Action {i} ", prompt, re.MULTILINE)
    assert not re.search(rf"^Action {m + 1} ", prompt, re.MULTILINE)
    header = _table_lines(prompt, m)[0]
    assert re.findall(r"Column (\d+)", header) == [str(j) for j in range(1, n + 1)]


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("m", "n"), SHAPES)
def test_prompt_states_the_number_of_actions_and_columns(builder, style, m, n):
    prompt = builder(_game(m, n), style=style)
    noun = "action" if m == 1 else "actions"
    assert f"your {m} {noun}" in prompt
    if m > 1:
        assert f"Action 1 to Action {m}" in prompt
    if n > 1:
        assert f"one of {n} columns (Column 1 to Column {n})" in prompt


def test_pure_prompt_says_one_of_m_actions_with_the_range():
    assert "one of your 3 actions, 1 to 3" in pure_prompt(RPS_LIKE)
    assert "one of your 3 actions, 1 to 3" in pure_prompt(RPS_LIKE, style="completion")


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("style", STYLES)
def test_prompt_explains_the_game(builder, style):
    prompt = builder(RPS_LIKE, style=style).lower()
    assert "row player" in prompt
    assert "zero-sum" in prompt
    assert "negative of yours" in prompt
    assert "perfectly rational" in prompt
    assert "knows this table" in prompt


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("style", STYLES)
def test_prompts_are_deterministic_and_depend_only_on_values(builder, style):
    payoff = _game(4, 3, seed=7)
    first = builder(payoff, style=style)
    assert builder(payoff.copy(), style=style) == first
    assert builder(payoff.astype(np.int64), style=style) == first
    assert builder(payoff.tolist(), style=style) == first
    other = payoff.copy()
    other[2, 1] += 1
    assert builder(other, style=style) != first


def test_chat_prompts_end_by_asking_for_the_answer_line():
    pure = pure_prompt(RPS_LIKE, style="chat")
    mixed = mixed_prompt(RPS_LIKE, style="chat")
    assert pure.endswith(f"\n{PURE_CUE} <k>")
    assert mixed.endswith(f"\n{MIXED_CUE} [p1, p2, p3]")
    assert "sum" in mixed and "probabilit" in mixed


def test_completion_prompts_end_with_the_cue_the_digit_follows():
    # The pure cue keeps its trailing space: the tokenizers of today's models put the space
    # and the digit in separate tokens (benchmarks/bench_answers.py measured the gain).
    pure = pure_prompt(RPS_LIKE, style="completion")
    mixed = mixed_prompt(RPS_LIKE, style="completion")
    assert PURE_COMPLETION_CUE == PURE_CUE + " " == "Action: "
    assert MIXED_COMPLETION_CUE == "Strategy: ["
    assert pure.endswith("\n\nAction: ")
    assert mixed.endswith("\n\nStrategy: [")
    assert "<k>" not in pure and "p1" not in mixed


def test_chat_and_completion_share_the_game_description():
    for builder in BUILDERS:
        chat = builder(RPS_LIKE, style="chat")
        completion = builder(RPS_LIKE, style="completion")
        table = payoff_table(RPS_LIKE)
        assert chat.split(table)[0] == completion.split(table)[0]


def test_mixed_prompt_names_every_probability_for_large_games():
    prompt = mixed_prompt(_game(10, 4), style="chat")
    assert prompt.endswith("Strategy: [p1, p2, p3, p4, p5, p6, p7, p8, p9, p10]")
    assert "10 probabilities" in prompt


def test_table_is_aligned_and_right_justified():
    table = payoff_table(np.array([[1.0, -100.0], [2.5, 0.0], [-0.0, 12345.0]]))
    lines = table.splitlines()
    assert lines == [
        "          Column 1  Column 2",
        "Action 1         1      -100",
        "Action 2       2.5         0",
        "Action 3         0     12345",
    ]
    assert len({len(line) for line in lines}) == 1


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.0, "3"),
        (-2.0, "-2"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (1 / 3, "0.3333333333333333"),
        (1e-5, "1e-05"),
        (np.float64(-7.25), "-7.25"),
        (np.int64(4), "4"),
    ],
)
def test_payoffs_print_compactly_and_exactly(value, text):
    assert format_payoff(value) == text
    assert float(text) == float(value)


def test_integer_payoffs_stored_as_floats_print_without_decimal_point():
    prompt = pure_prompt(RPS_LIKE)
    table = "\n".join(_table_lines(prompt, 3))
    assert ".0" not in table
    assert "1.5" in table


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(3),
        np.zeros((2, 2, 2)),
        np.zeros((0, 3)),
        np.array([[1.0, np.nan], [0.0, 1.0]]),
        np.array([[1.0, np.inf], [0.0, 1.0]]),
        [["a", "b"], ["c", "d"]],
    ],
)
def test_bad_payoffs_are_rejected_with_a_clear_error(bad):
    for builder in BUILDERS:
        with pytest.raises(ValueError, match="payoff"):
            builder(bad)


def test_unknown_style_is_rejected():
    with pytest.raises(ValueError, match="style"):
        pure_prompt(RPS_LIKE, style="base")
    with pytest.raises(ValueError, match="style"):
        mixed_prompt(RPS_LIKE, style="instruct")


def test_answers_in_the_requested_format_parse():
    m = RPS_LIKE.shape[0]
    chat_pure = pure_prompt(RPS_LIKE).rsplit("\n", 1)[1].replace("<k>", "2")
    assert parse_pure(chat_pure, m).action == 1
    chat_mixed = mixed_prompt(RPS_LIKE).rsplit("\n", 1)[1]
    chat_mixed = chat_mixed.replace("p1", "0.2").replace("p2", "0.5").replace("p3", "0.3")
    assert parse_mixed(chat_mixed, m).strategy == (0.2, 0.5, 0.3)
    assert parse_pure(" 3\n\nQuestion: ...", m, continuation=True).action == 2
    mixed_answer = parse_mixed(" 0.2, 0.5, 0.3]\n\nQuestion:", m, continuation=True)
    assert mixed_answer.status is ParseStatus.OK


def test_the_prompt_itself_is_not_read_as_an_answer():
    for style in STYLES:
        assert parse_pure(pure_prompt(RPS_LIKE, style=style), 3).status is not ParseStatus.OK
        assert parse_mixed(mixed_prompt(RPS_LIKE, style=style), 3).status is not ParseStatus.OK
