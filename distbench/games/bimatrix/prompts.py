"""Prompts of the bimatrix family: one general-sum game, the model in the row or column seat.

The table shows every cell as ``(row payoff, column payoff)`` in the same layout for both
seats (rows are the row player's actions), so the two seats differ only by the sentence
saying which player the model is: a seat-blind model answers the same in both. The answer
formats are the matrix family's, read by the shared parsers (``games.answers``): chat ends
with a line ``Action: <k>`` or ``Strategy: [p1, ..., pk]``; completion style ends with the cue
``Action: `` or ``Strategy: [``. The model's own actions are numbered 1..k in either seat.
Nothing is said about the opponent beyond that it moves at the same time.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIXED_COMPLETION_CUE", "PURE_COMPLETION_CUE", "answer_policy", "prompt",
           "with_cue"]

PURE_CUE = "Action:"
MIXED_CUE = "Strategy:"
PURE_COMPLETION_CUE = PURE_CUE + " "
MIXED_COMPLETION_CUE = MIXED_CUE + " ["
CHAT_TOKENS = 256
PURE_COMPLETION_TOKENS = 16
MIXED_COMPLETION_TOKENS = 64


def answer_policy(mode: str, style: str) -> tuple[tuple[str, ...] | None, int]:
    """(stop sequences, default completion budget) of a pure or mixed request (as in the matrix
    family: chat replies run to their end; a mixed continuation stops at ``]``)."""
    if style == "chat":
        return None, CHAT_TOKENS
    if mode == "pure":
        return None, PURE_COMPLETION_TOKENS
    return ("]",), MIXED_COMPLETION_TOKENS


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def table(a: np.ndarray, b: np.ndarray) -> str:
    """The payoff table: a header of columns, one line per row, cells ``(a, b)``."""
    m, n = a.shape
    cells = [[f"({_num(a[i, j])}, {_num(b[i, j])})" for j in range(n)] for i in range(m)]
    width = max(len(c) for row in cells for c in row)
    head = " " * 8 + "  ".join(f"Column {j + 1}".ljust(width) for j in range(n))
    lines = [head] + [f"Row {i + 1}".ljust(8) + "  ".join(c.ljust(width) for c in cells[i])
                      for i in range(m)]
    return "\n".join(line.rstrip() for line in lines)


def prompt(a: np.ndarray, b: np.ndarray, seat: str, mode: str, style: str) -> str:
    """The prompt asking the model in ``seat`` (``row`` / ``col``) for a pure action or a mixed
    strategy over its own actions.

    Args:
        a: (m, n) row player's payoffs.
        b: (m, n) column player's payoffs.
        seat: ``row`` or ``col``.
        mode: ``pure`` or ``mixed``.
        style: ``chat`` or ``completion``.
    """
    m, n = a.shape
    own, other = ("row", "column") if seat == "row" else ("column", "row")
    k = m if seat == "row" else n
    label = "Row" if seat == "row" else "Column"
    intro = (f"You are playing a two-player game. You are the {own} player; the other player "
             f"is the {other} player. The row player chooses one of {m} rows (Row 1 to Row "
             f"{m}) and the column player one of {n} columns (Column 1 to Column {n}), at the "
             "same time, without seeing each other's choice. Each cell gives (row player's "
             "payoff, column player's payoff). Each player wants their own payoff as high as "
             "possible; the game is not zero-sum.")
    your = (f"Your actions are your {own}s: Action 1 is {label} 1, ..., Action {k} is "
            f"{label} {k}.")
    if mode == "pure":
        goal = f"Choose one of your {k} actions, 1 to {k}."
        if style == "chat":
            tail = (f"{goal} You may think it through first. End your reply with one line of "
                    f"exactly this form, where <k> is the number of your action:\n{PURE_CUE} <k>")
        else:
            tail = f"{goal} The answer is the number of your action.\n\n{PURE_COMPLETION_CUE}"
    else:
        labels = ", ".join(f"p{i}" for i in range(1, k + 1))
        goal = (f"Choose your mixed strategy over your {k} actions: {k} probabilities, one for "
                "each action in order, each between 0 and 1 and together summing to 1.")
        if style == "chat":
            tail = (f"{goal} You may think it through first. End your reply with one line of "
                    f"exactly this form, written as decimal numbers:\n{MIXED_CUE} [{labels}]")
        else:
            tail = (f"{goal} The answer is the list of the {k} probabilities, as decimals."
                    f"\n\n{MIXED_COMPLETION_CUE}")
    return "\n\n".join([intro, "Payoffs:\n\n" + table(a, b), your, tail])


def with_cue(text: str, cue: str) -> str:
    """A completion-style pure prompt ending with ``cue`` instead of ``Action: ``."""
    if not text.endswith(PURE_COMPLETION_CUE):
        raise ValueError("with_cue takes a completion-style pure prompt")
    return text[: -len(PURE_COMPLETION_CUE)] + cue
