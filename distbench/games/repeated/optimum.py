"""The best achievable total against a finite-state opponent, by dynamic programming.

With a known horizon ``T``, a stage payoff ``u[a, o]`` to the model (``a`` its move, ``o`` the
opponent's; 0 = C, 1 = D) and the opponent's machine (:mod:`.strategies`), the value of round
``t`` with the opponent in state ``s`` is::

    V_T(s) = 0
    V_t(s) = max_a  sum_o P(o | s) (u[a, o] + V_{t+1}(next[s, o, a]))

``P(o | s)`` is 0/1 for a deterministic opponent (the optimum is then the best total over all
action sequences) and the machine's cooperation probability otherwise (the best expected total,
the model seeing each move before the next round). The model's ``regret`` is ``V_0(start)``
minus its total. Cost: ``O(T S)``.
"""

from __future__ import annotations

import numpy as np

from distbench.games.repeated.strategies import Machine

__all__ = ["best_total", "best_values"]


def best_values(machine: Machine, payoff: np.ndarray, rounds: int) -> np.ndarray:
    """``V_t(s)`` for ``t = 0..rounds``: (rounds + 1, S) float64.

    Args:
        machine: The opponent.
        payoff: (2, 2) the model's stage payoffs ``u[a, o]``.
        rounds: The horizon ``T`` (>= 0).
    """
    u = np.asarray(payoff, dtype=np.float64)
    if u.shape != (2, 2):
        raise ValueError(f"payoff must be 2x2, got shape {u.shape}")
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    probs = np.stack([machine.coop, 1.0 - machine.coop], axis=1)  # (S, 2): P(o | s)
    values = np.zeros((rounds + 1, machine.states))
    states = np.arange(machine.states)
    for t in range(rounds - 1, -1, -1):
        after = values[t + 1]
        best = np.full(machine.states, -np.inf)
        for a in (0, 1):
            total = np.zeros(machine.states)
            for o in (0, 1):
                total += probs[:, o] * (u[a, o] + after[machine.next[states, o, a]])
            best = np.maximum(best, total)
        values[t] = best
    return values


def best_total(machine: Machine, payoff: np.ndarray, rounds: int) -> float:
    """The best (expected) total over ``rounds`` rounds against ``machine`` from its start."""
    return float(best_values(machine, payoff, rounds)[0, machine.start])
