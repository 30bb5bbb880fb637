"""Whether a mixed strategy is one of the model's seat's equilibrium strategies, continua
included (``eq_consistent`` of a mixed or logprob answer in a degenerate game).

A degenerate bimatrix game can have whole components of equilibria; the solver lists their
extreme points, and a strategy inside a component (a convex combination) is an equilibrium
strategy too, though it equals no listed one. So the check is direct: ``x`` (the model's
strategy, its actions as rows of ``P``) is an equilibrium strategy when some strategy ``y`` of
the other player makes ``(x, y)`` an equilibrium, which, ``x`` being fixed, is linear in
``y``, one LP feasibility problem (scipy's HiGHS): with ``S = supp(x)`` (the actions ``x``
plays with probability over :data:`SUPPORT_TOL`) and ``B = BR2(x)`` (the other player's best
responses to ``x``, within the tolerance),

    y >= 0,  sum(y) = 1,  y_j = 0 for j not in B                   (supp(y) in BR2(x))
    (P y)_h - (P y)_i <= tol   for every i in S and every action h   (S in BR1(y))

The tolerance ``tol`` is :data:`TOL` times the payoff scale (``max(1, |P|max, |Q|max)``).
Conditions on supports, not on regrets: a strategy that puts a little weight on an action
which is not a best response is not an equilibrium strategy, however small the regret.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SUPPORT_TOL", "TOL", "is_equilibrium_strategy"]

TOL = 1e-6
"""Payoff difference counted as a tie (a best response), relative to the payoff scale
``max(1, |P|max, |Q|max)``."""


SUPPORT_TOL = 1e-9
"""Probability over which an action is in a strategy's support (as in the family's scoring)."""


def is_equilibrium_strategy(p: np.ndarray, q: np.ndarray, x: np.ndarray) -> bool:
    """Whether ``x`` is the model's strategy in some Nash equilibrium (within :data:`TOL`).

    Args:
        p: (k, l) the model's payoffs (its actions as rows).
        q: (k, l) the other player's payoffs, same layout.
        x: (k,) the model's mixed strategy (non-negative, sum 1).

    Returns:
        True when some ``y`` makes ``(x, y)`` an equilibrium within the tolerance.
    """
    from scipy.optimize import linprog

    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    x = np.asarray(x, dtype=float)
    if p.shape != q.shape or p.ndim != 2 or x.shape != (p.shape[0],):
        raise ValueError(f"p and q must be (k, l) and x (k,), got {p.shape}, {q.shape}, "
                         f"{x.shape}")
    tol = TOL * max(1.0, float(np.abs(p).max()), float(np.abs(q).max()))
    xq = x @ q  # (l,): the other player's payoff of each column against x
    best = np.flatnonzero(xq >= xq.max() - tol)  # BR2(x)
    support = np.flatnonzero(x > SUPPORT_TOL)
    pb = p[:, best]  # (k, |B|)
    a_ub = (pb[None, :, :] - pb[support][:, None, :]).reshape(-1, len(best))
    got = linprog(np.zeros(len(best)), A_ub=a_ub, b_ub=np.full(len(a_ub), tol),
                  A_eq=np.ones((1, len(best))), b_eq=[1.0], bounds=(0, None), method="highs")
    return bool(got.status == 0)
