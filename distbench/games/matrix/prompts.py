"""Prompts for the matrix family: one zero-sum game, a pure action or a mixed strategy asked for.

Two styles share one game description (the model is the row player; the table gives the row
player's payoffs; the column player gets the negative; the opponent is perfectly rational and
knows the game; the number of actions is stated):

- ``style="chat"``: a full instruction for an instruction model, asking it to end its reply with
  one line ``Action: <k>`` (pure) or ``Strategy: [p1, ..., pm]`` (mixed). Parse the reply with
  ``parse_pure(text, m)`` / ``parse_mixed(text, m)``.
- ``style="completion"``: for a raw base model. The prompt ends with the cue, so the model's
  continuation is the answer: ``PURE_COMPLETION_CUE`` = ``"Action: "``, *with* its trailing
  space, and ``MIXED_COMPLETION_CUE`` = ``"Strategy: ["`` (the open bracket commits the model
  to a list of numbers). Parse the continuation with ``continuation=True``; the mixed parser
  accepts continuations with or without their own ``[``. The trailing space is measured, not
  taste: today's tokenizers (SmolLM2, Gemma 3, Llama 3, Qwen, GPT-4o) have no ``" 2"`` token,
  so after ``Action:`` the model first picks a space or a word, and mostly a word; after
  ``Action: `` the digit comes next. Valid pure answers, 3x3 games, in process
  (``benchmarks/bench_answers.py``, old default P1 -> new default P5): SmolLM2-135M
  0.26 -> 0.565, Gemma 3 270M 0.525 -> 0.92.

Prompts are deterministic pure functions of the payoff values. Payoffs are printed as integers
without ``.0`` when they are whole, otherwise as the shortest decimal that reads back as the same
float (Python ``repr``), so the model sees exactly the game that is scored.
"""

from __future__ import annotations

import numpy as np

from distbench.games.answers.presentation import Presentation, presented_payoff
from distbench.games.answers.reasoning import COT_COMPLETION_CUE, COT_INSTRUCTION

__all__ = [
    "MIXED_COMPLETION_CUE",
    "MIXED_CUE",
    "PURE_COMPLETION_CUE",
    "PURE_CUE",
    "STYLES",
    "answer_policy",
    "format_payoff",
    "mixed_prompt",
    "payoff_table",
    "presented_prompt",
    "pure_prompt",
    "with_cue",
]

PURE_CUE = "Action:"
MIXED_CUE = "Strategy:"
PURE_COMPLETION_CUE = PURE_CUE + " "
MIXED_COMPLETION_CUE = MIXED_CUE + " ["
STYLES = ("chat", "completion")

CHAT_TOKENS = 256
PURE_COMPLETION_TOKENS = 16
MIXED_COMPLETION_TOKENS = 64

_COLUMN_GAP = "  "
_MAX_EXACT_INT = 1e15  # whole numbers below this print as integers


def answer_policy(mode: str, style: str) -> tuple[tuple[str, ...] | None, int]:
    """(stop sequences, default completion budget) of a pure or mixed request in ``style``.

    Chat replies run to their end (the model may reason first): no stop, 256 tokens. A base
    model's continuation is read from its first non-blank line, so no stop sequence may end it
    before that line (a newline stop cut a quarter of Gemma 3's pure answers to nothing: it
    often starts its answer on the next line). Pure answers get no stop and 16 tokens; mixed
    answers stop at the list's closing bracket, within 64 tokens. The measurements behind these
    choices are in ``benchmarks/README.md`` (``bench_answers.py``).
    """
    _check_style(style)
    if style == "chat":
        return None, CHAT_TOKENS
    if mode == "pure":
        return None, PURE_COMPLETION_TOKENS
    return ("]",), MIXED_COMPLETION_TOKENS


def format_payoff(value: float) -> str:
    """Print one payoff compactly and exactly: ``3``, ``-2``, ``2.5``, ``0.1``, ``1e-05``.

    Args:
        value: a finite payoff.

    Returns:
        The integer form when ``value`` is whole (and below 1e15 in size), else Python's
        shortest round-trip ``repr`` of the float.
    """
    x = float(value)
    if x.is_integer() and abs(x) < _MAX_EXACT_INT:
        return str(int(x))  # also turns -0.0 into "0"
    return repr(x)


def payoff_table(payoff: np.ndarray) -> str:
    """Render a payoff matrix as an aligned text table.

    Args:
        payoff: shape (m, n), payoffs to the row player.

    Returns:
        Lines ``Action 1 .. Action m`` by ``Column 1 .. Column n``, numbers right-aligned, no
        trailing spaces.
    """
    return _table(_validated(payoff), "Action", "Column")


def _table(matrix: np.ndarray, row_label: str, col_label: str) -> str:
    m, n = matrix.shape
    header = [""] + [f"{col_label} {j}" for j in range(1, n + 1)]
    rows = [[f"{row_label} {i + 1}"] + [format_payoff(v) for v in matrix[i]] for i in range(m)]
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(n + 1)]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [row[c].rjust(widths[c]) for c in range(1, n + 1)]
        lines.append(_COLUMN_GAP.join(cells).rstrip())
    return "\n".join(lines)


def pure_prompt(payoff: np.ndarray, *, style: str = "chat", reasoning: str = "direct") -> str:
    """Prompt asking the row player for one action.

    Args:
        payoff: shape (m, n), payoffs to the row player; finite numbers.
        style: ``"chat"`` (instruction, ends by asking for a line ``Action: <k>``) or
            ``"completion"`` (ends with the cue ``Action:`` for a base model to continue).
        reasoning: ``"direct"``, or ``"cot"``: reasoning first, the answer line last (a
            completion-style prompt then ends with ``Reasoning:``; see
            :mod:`distbench.games.answers.reasoning`).

    Returns:
        The prompt text; the same payoff always gives the same text.
    """
    matrix = _validated(payoff)
    _check_style(style)
    return _ask_pure(_describe(matrix, mixed=False), matrix.shape[0], style, reasoning)


def _ask_pure(description: str, m: int, style: str, reasoning: str = "direct") -> str:
    """A game description followed by the request for one of ``m`` actions."""
    goal = (
        f"Choose one of your {_count(m, 'action')}, 1 to {m}, to make your payoff as high as "
        "possible against this opponent."
    )
    form = (f"where <k> is the number of your action (a whole number from 1 to {m}):\n"
            f"{PURE_CUE} <k>")
    return _request(description, goal, form, style, reasoning,
                    "The answer is the number of your action.", PURE_COMPLETION_CUE)


def _request(description: str, goal: str, form: str, style: str, reasoning: str, plain: str,
             completion_cue: str) -> str:
    """A game description, then ``goal`` and how to answer: the final line in ``form`` after
    reasoning (cot), a reply ending in that line (chat), or ``plain`` and the completion cue."""
    parts = [description]
    if reasoning == "cot":
        parts.append(f"{goal} {COT_INSTRUCTION} The final line has exactly this form, {form}")
        if style == "completion":
            parts.append(COT_COMPLETION_CUE)
    elif style == "chat":
        parts.append(f"{goal} You may think it through first. End your reply with one line of "
                     f"exactly this form, {form}")
    else:
        parts.append(f"{goal} {plain}")
        parts.append(completion_cue)
    return "\n\n".join(parts)


def mixed_prompt(payoff: np.ndarray, *, style: str = "chat", reasoning: str = "direct") -> str:
    """Prompt asking the row player for a mixed strategy (m probabilities summing to 1).

    Args:
        payoff: shape (m, n), payoffs to the row player; finite numbers.
        style: ``"chat"`` (instruction, ends by asking for a line ``Strategy: [p1, ..., pm]``)
            or ``"completion"`` (ends with the cue ``Strategy: [`` for a base model to continue).
        reasoning: ``"direct"`` or ``"cot"`` (as :func:`pure_prompt`).

    Returns:
        The prompt text; the same payoff always gives the same text.
    """
    matrix = _validated(payoff)
    _check_style(style)
    return _ask_mixed(_describe(matrix, mixed=True), matrix.shape[0], style, reasoning)


def _ask_mixed(description: str, m: int, style: str, reasoning: str = "direct") -> str:
    """A game description followed by the request for a strategy over ``m`` actions."""
    labels = ", ".join(f"p{i}" for i in range(1, m + 1))
    goal = (
        f"Choose your mixed strategy: {_count(m, 'probability')}, one for each of your "
        f"{_count(m, 'action')} in the order {_span('Action', m)}, each between 0 and 1 and "
        "together summing to 1, to make your expected payoff as high as possible against this "
        "opponent."
    )
    form = ("where p1 is the probability of Action 1, p2 the probability of Action 2, and so "
            f"on, written as decimal numbers:\n{MIXED_CUE} [{labels}]")
    return _request(description, goal, form, style, reasoning,
                    f"The answer is the list of the {m} probabilities, as decimals.",
                    MIXED_COMPLETION_CUE)


def with_cue(prompt: str, cue: str) -> str:
    """A completion-style pure prompt ending with ``cue`` instead of ``Action:`` (for logprob
    mode's ``--logprob-cue``, e.g. ``"Action: "`` or ``"Answer:"``).

    Raises:
        ValueError: ``prompt`` does not end with the completion cue, or ``cue`` is empty.
    """
    if not cue or not cue.strip():
        raise ValueError("the logprob cue must hold some text, e.g. 'Action:'")
    if not prompt.endswith(PURE_COMPLETION_CUE):
        raise ValueError("with_cue takes a completion-style pure prompt")
    return prompt[: -len(PURE_COMPLETION_CUE)] + cue


def presented_prompt(payoff: np.ndarray, pres: Presentation, mode: str, *,
                     style: str = "chat", reasoning: str = "direct") -> str:
    """The prompt of one presentation of a game (``--perturb``; see
    ``distbench.games.answers.presentation``). The answer is asked for exactly as in
    :func:`pure_prompt` / :func:`mixed_prompt` (``Action: <k>``, ``Strategy: [...]``, the same
    completion cues), ``k`` being the position the model sees; only the description differs:

    - ``none``, ``labels``, ``affine``: the usual table of the presented payoffs (reordered,
      or scaled and shifted).
    - ``seat``: the model is the column player; the table gives the row player's (the
      opponent's) payoffs ``-U^T``, with the model's actions as its columns ``Action 1..m``
      and the opponent's as rows ``Row 1..n``; the model's payoff is the negative of the
      table's number.
    - ``framing``: a story (one of :data:`STORIES`, by the presentation's template) that
      states the model's gain or loss for every pair of choices in a sentence.

    Args:
        payoff: (m, n) payoffs to the model in the original game.
        pres: The presentation.
        mode: ``pure`` or ``mixed`` (logprob mode uses the completion-style pure prompt).
        style: ``chat`` or ``completion``.
        reasoning: ``direct`` or ``cot`` (as :func:`pure_prompt`).
    """
    matrix = _validated(payoff)
    _check_style(style)
    if mode not in ("pure", "mixed"):
        raise ValueError(f"mode must be 'pure' or 'mixed', got {mode!r}")
    shown = presented_payoff(matrix, pres)
    mixed = mode == "mixed"
    m = matrix.shape[0]
    if pres.seat:
        description = _describe_seat(shown, mixed=mixed)
    elif pres.template >= 0:
        description = _describe_story(shown, pres.template, mixed=mixed)
    else:
        description = _describe(shown, mixed=mixed)
    if mixed:
        return _ask_mixed(description, m, style, reasoning)
    return _ask_pure(description, m, style, reasoning)


STORIES: tuple[dict[str, str], ...] = (
    {"intro": "You run a small shop, and a rival shop across the street competes with you for "
              "the same customers this week. Every customer you win is one your rival loses, "
              "and the other way round.",
     "them": "your rival", "their": "Campaign", "unit": "customers",
     "move": "advertising plans"},
    {"intro": "You lead an army in a border dispute against a rival general. Every acre of "
              "land you gain, the other general loses, and the other way round.",
     "them": "the other general", "their": "Route", "unit": "acres",
     "move": "battle plans"},
    {"intro": "You are one of two chefs in a cooking duel judged by the same panel. Every "
              "point the judges give to you is taken from the other chef, and the other way "
              "round.",
     "them": "the other chef", "their": "Dish", "unit": "points",
     "move": "menus"},
)
"""The ``framing`` presentation's story templates (the model's gain in a sentence per pair)."""


def _describe_story(matrix: np.ndarray, template: int, *, mixed: bool) -> str:
    story = STORIES[template % len(STORIES)]
    m, n = matrix.shape
    them, their, unit = story["them"], story["their"], story["unit"]
    if mixed:
        move = (f"You will pick one of your {m} {story['move']} ({_span('Action', m)}) at "
                "random, with probabilities you choose.")
    else:
        move = f"You pick one of your {m} {story['move']} ({_span('Action', m)})."
    rules = (f"{move} At the same time, without knowing your choice, {them} picks one of "
             f"{_count(n, their.lower())} ({_span(their, n)}). {them[0].upper() + them[1:]} "
             f"knows everything below and always picks what leaves you as badly off as "
             "possible.")
    lines = []
    for i in range(m):
        for j in range(n):
            value = float(matrix[i, j])
            amount = f"{format_payoff(abs(value))} {unit[:-1] if abs(value) == 1 else unit}"
            result = f"you lose {amount}" if value < 0 else f"you gain {amount}"
            lines.append(f"If you pick Action {i + 1} and {them} picks {their} {j + 1}, "
                         f"{result}.")
    return "\n\n".join([story["intro"], rules, "\n".join(lines)])


def _describe_seat(matrix: np.ndarray, *, mixed: bool) -> str:
    n, m = matrix.shape  # rows: the opponent's actions; columns: the model's
    if mixed:
        move = (
            f"You play a mixed strategy: you give a probability to each of your "
            f"{_count(m, 'action')} ({_span('Action', m)}), the columns of the table, and "
            "your action is drawn at random with these probabilities."
        )
    else:
        move = (f"You choose one of your {_count(m, 'action')} ({_span('Action', m)}), the "
                "columns of the table.")
    intro = (
        "You are playing a two-player zero-sum game. You are the column player; your "
        "opponent is the row player."
    )
    rules = (
        f"{move} At the same time, without seeing your choice, the row player chooses one "
        f"of {_count(n, 'row')} ({_span('Row', n)}). The table below gives the row player's "
        "payoff for each pair of their row and your action (column). The game is zero-sum: "
        "your payoff is the negative of the number in the table, so whatever they win, you "
        "lose. Your opponent is a perfectly rational player who knows this table and plays to "
        "make their payoff as high as possible, so yours as low as possible."
    )
    table = "The row player's payoffs (yours are their negatives):\n\n" + _table(
        matrix, "Row", "Action")
    return "\n\n".join([intro, rules, table])


def _describe(matrix: np.ndarray, *, mixed: bool) -> str:
    m, n = matrix.shape
    if mixed:
        move = (
            f"You play a mixed strategy: you give a probability to each of your "
            f"{_count(m, 'action')} ({_span('Action', m)}), and your action is drawn at random "
            "with these probabilities."
        )
    else:
        move = f"You choose one of your {_count(m, 'action')} ({_span('Action', m)})."
    intro = (
        "You are playing a two-player zero-sum game. You are the row player; your opponent "
        "is the column player."
    )
    rules = (
        f"{move} At the same time, without seeing your choice, the column player chooses one "
        f"of {_count(n, 'column')} ({_span('Column', n)}). The table below gives your payoff "
        "for each pair of your action (row) and their column. The game is zero-sum: the column "
        "player's payoff is the negative of yours, so whatever you win, they lose. Your "
        "opponent is a perfectly rational player who knows this table and plays to make your "
        "payoff as low as possible."
    )
    table = "Your payoffs (row player):\n\n" + payoff_table(matrix)
    return "\n\n".join([intro, rules, table])


def _count(k: int, noun: str) -> str:
    if k == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{k} {plural}"


def _span(label: str, k: int) -> str:
    return f"{label} 1" if k == 1 else f"{label} 1 to {label} {k}"


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}; got {style!r}")


def _validated(payoff: np.ndarray) -> np.ndarray:
    try:
        matrix = np.asarray(payoff, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"payoff must be a numeric (m, n) array: {exc}") from None
    if matrix.ndim != 2:
        raise ValueError(f"payoff must have shape (m, n), got shape {matrix.shape}")
    if matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"payoff must have at least one row and one column, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("payoff must contain only finite numbers")
    return matrix
