"""Scripted players for the ``--perturb`` planted checks, registered as model providers by the
tests (in-process: they are played through the real run path, ``run_config``, with their
answers parsed like a model's).

- ``FirstLabelBackend`` answers ``Action: 1`` to everything: pure position bias.
- ``SolverBackend`` reads the game from the prompt, whichever presentation it is written in
  (a table from the row seat, the row player's table from the column seat, a story), and
  answers its maximin pure action (the Nash action of a game with a saddle point), ties broken
  by the action's sorted payoffs (which no presentation changes), never by position: an exact,
  invariant player.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from distbench.llm.base import Backend, Request, Response

_STORY = re.compile(r"If you pick Action (\d+) and .*? picks \w+ (\d+), you (gain|lose) (\S+) ")


class FirstLabelBackend(Backend):
    """Always the first label."""

    in_process = True

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text="Action: 1") for _ in requests]


def game_of_prompt(prompt: str) -> np.ndarray:
    """The model's payoff matrix (m, n) as the prompt states it (in its own units and order)."""
    if "If you pick Action" in prompt:
        cells = [(int(i) - 1, int(j) - 1, float(v) * (1 if verb == "gain" else -1))
                 for i, j, verb, v in _STORY.findall(prompt)]
        m = 1 + max(c[0] for c in cells)
        n = 1 + max(c[1] for c in cells)
        out = np.zeros((m, n))
        for i, j, v in cells:
            out[i, j] = v
        return out
    seat = "You are the column player" in prompt
    label = "Row" if seat else "Action"
    rows = [line.split()[2:] for line in prompt.splitlines()
            if re.match(rf"{label} \d+\s+-?\d", line)]
    table = np.array([[float(x) for x in row] for row in rows])
    return -table.T if seat else table


def maximin_action(payoff: np.ndarray) -> int:
    """The maximin pure action, ties broken by the sorted payoffs of the tied actions."""
    worst = payoff.min(axis=1)
    tied = np.flatnonzero(np.isclose(worst, worst.max(), rtol=0, atol=1e-9))
    return int(max(tied, key=lambda i: tuple(np.sort(payoff[i]))))


class SolverBackend(Backend):
    """The invariant exact player (module docstring)."""

    in_process = True

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text=f"Action: {maximin_action(game_of_prompt(r.prompt)) + 1}")
                for r in requests]
