"""Logprob mode: the model's strategy read from its next-token probabilities after the cue.

The completion prompt ends with the cue (``I choose Action`` by default, ``--logprob-cue``;
see :data:`DEFAULT_CUE`), and the strategy is the probability that the model's answer *reads*
``k``: the first non-blank text after the cue is the number ``k``. A single next-token distribution does not give that on real
tokenizers:

- SmolLM2, Gemma 3, Llama 3, Qwen and GPT-4o have no ``" 1"`` token: after ``Action:`` the
  most likely token is a bare space (or a newline), and the digit comes one token later.
- Digit-by-digit tokenizers spell ``10`` as ``1`` then ``0``, so ``1`` may be the start of
  ``10``.

So the reading walks the few continuations that matter, batch by batch (one request per node,
``max_tokens=1``, the top :data:`LOGPROB_TOP` log-probabilities):

1. At the cue, every top token is classified: a complete label (``" 2"``, ``"2"``, ``"2."``),
   a digit prefix that a longer label extends (``"1"`` when there are 10 actions), white space
   only, or other text.
2. When the white-space tokens together are more likely than the complete labels there, the
   most likely white-space token is followed: the walk asks again after the cue plus it, and
   what it finds there is weighted by its probability. (When labels dominate, as on
   tokenizers with ``" 2"`` tokens, no second call is made.)
3. A digit prefix with probability of at least :data:`EXPAND_MIN` is followed the same way: a
   digit after it extends the number, anything else ends it.
4. At most :data:`MAX_DEPTH` calls are chained; mass that is not followed is lost, never
   guessed.

``label_mass`` is the total probability found on labels 1..m (so at most 1, and less when the
model would write something else); the strategy is the label probabilities renormalised. A
reading whose ``label_mass`` is below the run's ``min_label_mass`` (default 0.5) is not an
answer: the model mostly meant to write something else, and its strategy would be noise. It
gets the parse status ``low_label_mass``. A non-finite log-probability from the server makes
the reading ``no_answer`` (a server fault, never a strategy). A failed call anywhere in a
game's walk makes its row ``call_failed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from distbench.llm.base import Request, Response

__all__ = [
    "DEFAULT_CUE",
    "DEFAULT_MIN_LABEL_MASS",
    "EXPAND_MIN",
    "LOGPROB_TOP",
    "MAX_DEPTH",
    "LabelReading",
    "classify_token",
    "read_strategies",
]

LOGPROB_TOP = 20
"""Top log-probabilities asked per call (the OpenAI API's maximum)."""
EXPAND_MIN = 0.02
"""A digit prefix less likely than this is not followed (its mass is lost)."""
MAX_DEPTH = 3
"""Calls chained at most per game: the cue, a white space, a digit prefix."""
DEFAULT_CUE = "I choose Action"
"""The default cue: the payoff table labels rows ``Action 1`` .. ``Action m``, so after it a
model is all but sure to write a label (measured label mass 0.95 for SmolLM2-135M and 0.94 for
Gemma 3 270M on 3x3 games, against 0.26 and 0.45 after ``Action:``, where they mostly write
words; ``benchmarks/README.md``)."""
DEFAULT_MIN_LABEL_MASS = 0.5


@dataclass(frozen=True, slots=True)
class LabelReading:
    """The strategy read for one game.

    Attributes:
        status: ``"ok"``, ``"low_label_mass"``, ``"no_answer"`` or ``"call_failed"``.
        strategy: (m,) probabilities summing to 1 when ok, else None.
        label_mass: Probability found on the labels 1..m (NaN when the first call failed).
        detail: Why the reading is not ok ("" when ok).
        text: The sampled first token of the first call (the raw text kept in the row).
    """

    status: str
    strategy: np.ndarray | None
    label_mass: float
    detail: str
    text: str | None


def classify_token(text: str, m: int) -> tuple[str, int | str | None]:
    """What a continuation text says about the answer among labels 1..m.

    Returns:
        ``("label", k)`` a complete label k (1-based); ``("prefix", digits)`` digits that a
        longer label extends, so the answer is not known yet; ``("space", None)`` white space
        only; ``("other", None)`` anything else (another word, a number out of range).
    """
    if text and not text.strip():
        return "space", None
    stripped = text.lstrip()
    digits = ""
    for ch in stripped:
        if ch.isascii() and ch.isdigit():
            digits += ch
        else:
            break
    if not digits:
        return "other", None
    value = int(digits)
    ended = len(stripped) > len(digits)  # something other than a digit follows the number
    if not ended and any(str(k).startswith(digits) and len(str(k)) > len(digits)
                         for k in range(1, m + 1)):
        return "prefix", digits
    if 1 <= value <= m and not digits.startswith("0"):
        return "label", value
    return "other", None


@dataclass(slots=True)
class _Node:
    game: int
    text: str  # the continuation after the cue so far
    prob: float
    depth: int


def read_strategies(
    prompts: Sequence[str],
    seeds: Sequence[int],
    m: int,
    ask: Callable[[list[Request]], list[Response]],
    *,
    temperature: float,
    min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
    task: str = "",
) -> tuple[list[LabelReading], list[tuple[int, Request, Response]]]:
    """Reads each game's strategy from next-token log-probabilities (see the module doc).

    Args:
        prompts: One completion prompt per game, ending with the cue.
        seeds: One request seed per game (every call of a game's walk uses it).
        m: Number of actions (labels 1..m).
        ask: Answers a batch of requests, in order (the backend).
        temperature: Sent with the requests (log-probabilities do not depend on it on the
            servers we know, but the request states it).
        min_label_mass: Readings with less probability on the labels are ``low_label_mass``.
        task: The request's task label (scripted backends use it).

    Returns:
        One reading per game, and every call made as (game, request, response), first calls
        first.
    """
    count = len(prompts)
    mass = np.zeros((count, m))
    failed: dict[int, str] = {}
    bad: dict[int, str] = {}
    first: list[Response | None] = [None] * count
    calls: list[tuple[int, Request, Response]] = []
    frontier = [_Node(g, "", 1.0, 0) for g in range(count)]
    while frontier:
        requests = [
            Request(prompt=prompts[n.game] + n.text, seed=int(seeds[n.game]), task=task,
                    max_tokens=1, temperature=temperature, logprobs=LOGPROB_TOP,
                    style="completion")
            for n in frontier
        ]
        responses = ask(requests)
        following: list[_Node] = []
        for node, req, resp in zip(frontier, requests, responses, strict=True):
            calls.append((node.game, req, resp))
            if node.depth == 0:
                first[node.game] = resp
            if resp.status != "ok":
                failed.setdefault(node.game, resp.error or "call failed")
                continue
            if not resp.logprobs:
                if node.depth == 0:
                    bad.setdefault(node.game, "the endpoint returned no logprobs")
                continue
            following.extend(_visit(node, resp.logprobs, m, mass, bad))
        frontier = following
    readings = []
    for g in range(count):
        resp = first[g]
        text = resp.text if resp is not None else None
        if g in failed:
            readings.append(LabelReading("call_failed", None, math.nan, failed[g], text))
            continue
        total = float(mass[g].sum())
        if g in bad:
            non_finite = "non-finite" in bad[g]
            readings.append(LabelReading("non_finite" if non_finite else "no_answer", None,
                                         math.nan if non_finite else total, bad[g], text))
        elif total <= 0.0:
            readings.append(LabelReading("no_answer", None, 0.0,
                                         "no probability on the action labels", text))
        elif total < min_label_mass:
            readings.append(LabelReading(
                "low_label_mass", None, total,
                f"{total:.3f} of the probability on the action labels "
                f"(minimum {min_label_mass:g})", text))
        else:
            readings.append(LabelReading("ok", mass[g] / total, total, "", text))
    return readings, calls


def _visit(node: _Node, top: Sequence[tuple[str, float]], m: int, mass: np.ndarray,
           bad: dict[int, str]) -> list[_Node]:
    """Adds the labels found below ``node`` to ``mass`` and returns the nodes to follow."""
    spaces: list[tuple[float, str]] = []
    prefixes: list[tuple[float, str]] = []
    labelled = 0.0
    for token, logprob in top:
        if not math.isfinite(logprob) and logprob != -math.inf:
            bad.setdefault(node.game, f"non-finite logprob {logprob!r} for token {token!r}")
            return []
        prob = node.prob * math.exp(logprob)
        kind, value = classify_token(node.text + token, m)
        if kind == "label":
            mass[node.game, int(value) - 1] += prob
            labelled += prob
        elif kind == "space":
            spaces.append((prob, node.text + token))
        elif kind == "prefix":
            prefixes.append((prob, node.text + token))
    if node.depth + 1 >= MAX_DEPTH:
        return []
    out = [_Node(node.game, text, prob, node.depth + 1)
           for prob, text in prefixes if prob >= EXPAND_MIN]
    if spaces and sum(p for p, _ in spaces) > labelled:
        prob, text = max(spaces)
        out.append(_Node(node.game, text, prob, node.depth + 1))
    return out
