"""The sequence form of a two-player zero-sum game and its equilibrium of largest support.

Each player's strategies are realization plans over its sequences (an information state and
one of its actions, plus the empty sequence ``""``): ``E x = e, x >= 0`` (Koller, Megiddo and
von Stengel 1996). ``A[s, t]`` sums ``chance(z) * u_0(z)`` over the terminal histories ``z``
whose sequences are ``s`` for player 0 and ``t`` for player 1. Player 0's optimal plans are

    X* = {x : E x = e, x >= 0, F^T q <= A^T x for some q with q[root] >= value}

(``F`` player 1's constraint matrix), and player 1's likewise with ``-A^T``. The set of
equilibria is ``X* x Y*``. :func:`widest_equilibrium` finds, in each, the plan of largest
support with one LP (scipy's HiGHS) on the cone over the optimal face: maximise
``sum(min(x_s, 1))`` over ``x in lambda X*``, ``1 <= lambda <= 1000``, so every sequence
that some optimal plan plays gets weight (at least 1/1000 where some plan gives it that much);
then ``x / lambda``. Every move some equilibrium plays is played by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SequenceForm", "sequence_form", "widest_equilibrium"]

MAX_SCALE = 1000.0
"""Largest ``lambda``: a sequence some optimal plan plays with weight 1/1000 of another's or
more is played with at least 1/1000 of the plan's root weight (not 1e-9, which a far larger
scale would allow)."""
REACH_TOL = 1e-7
"""A plan's weight below which an information state counts as unreached by its own player
(the LP's noise is about 1e-9): there the fallback policy is played; and the probability
below which an action is not played (noise; a sequence the widest plan plays has 1e-3 at
least, :data:`MAX_SCALE`)."""
VALUE_TOL = 1e-9
"""Slack on the game value when the optimal face is described (HiGHS's tolerances are
about 1e-9)."""


@dataclass(frozen=True)
class SequenceForm:
    """The sequence form of a two-player game (see the module docstring).

    Attributes:
        sequences: Per player, its sequences in order: ``""`` first, then ``(key, action)``.
        parents: Per player, information state -> index of its parent sequence.
        actions: Per player, information state -> its legal actions.
        payoff: (S0, S1) sparse matrix ``A`` (player 0's payoff).
    """

    sequences: tuple[list[Any], list[Any]]
    parents: tuple[dict[str, int], dict[str, int]]
    actions: tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]
    payoff: Any


def sequence_form(game: Any) -> SequenceForm:
    """The sequence form of a two-player zero-sum OpenSpiel ``game`` (one tree walk)."""
    seqs: tuple[list[Any], list[Any]] = ([""], [""])
    index: tuple[dict[Any, int], dict[Any, int]] = ({"": 0}, {"": 0})
    parents: tuple[dict[str, int], dict[str, int]] = ({}, {})
    actions: tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]] = ({}, {})
    cells: dict[tuple[int, int], float] = {}

    def seq(player: int, key: str, action: int) -> int:
        if (key, action) not in index[player]:
            index[player][(key, action)] = len(seqs[player])
            seqs[player].append((key, action))
        return index[player][(key, action)]

    stack = [(game.new_initial_state(), 1.0, 0, 0)]
    while stack:
        state, chance, s0, s1 = stack.pop()
        if state.is_terminal():
            cell = (s0, s1)
            cells[cell] = cells.get(cell, 0.0) + chance * state.returns()[0]
            continue
        if state.is_chance_node():
            stack.extend((state.child(a), chance * p, s0, s1) for a, p in state.chance_outcomes())
            continue
        player = state.current_player()
        key = state.information_state_string(player)
        legal = tuple(state.legal_actions())
        parents[player].setdefault(key, s1 if player else s0)
        actions[player].setdefault(key, legal)
        for a in legal:
            s = seq(player, key, a)
            stack.append((state.child(a), chance, s if player == 0 else s0,
                          s if player == 1 else s1))
    from scipy.sparse import csr_matrix

    keys = list(cells)
    payoff = csr_matrix(([cells[k] for k in keys], ([k[0] for k in keys], [k[1] for k in keys])),
                        shape=(len(seqs[0]), len(seqs[1])))
    return SequenceForm(seqs, parents, actions, payoff)


def _constraints(form: SequenceForm, player: int) -> Any:
    """(1 + information states, sequences) sparse ``E``: the root row, then
    ``-x[parent] + sum of the state's sequences = 0``."""
    from scipy.sparse import csr_matrix

    where = {s: i for i, s in enumerate(form.sequences[player])}
    rows, cols, vals = [0], [0], [1.0]
    for r, (key, parent) in enumerate(form.parents[player].items(), start=1):
        rows.append(r)
        cols.append(parent)
        vals.append(-1.0)
        for a in form.actions[player][key]:
            rows.append(r)
            cols.append(where[(key, a)])
            vals.append(1.0)
    shape = (1 + len(form.parents[player]), len(form.sequences[player]))
    return csr_matrix((vals, (rows, cols)), shape=shape)


def _widest(payoff: Any, own: Any, other: Any) -> tuple[np.ndarray, float]:
    """(plan of largest support, value) of the maximiser of ``x^T payoff y`` (rows: ``own``
    constraints ``E``, columns: ``other``'s ``F``)."""
    from scipy.optimize import linprog
    from scipy.sparse import bmat, csr_matrix, identity

    n, m = payoff.shape
    ke, kf = own.shape[0], other.shape[0]
    e = np.zeros(ke)
    e[0] = 1.0
    # max q_root s.t. F^T q - A^T x <= 0, E x = e, x >= 0: variables (x, q)
    a_ub = bmat([[csr_matrix(-payoff.T), csr_matrix(other.T)]]).tocsr()
    c = np.zeros(n + kf)
    c[n] = -1.0
    bounds = [(0, None)] * n + [(None, None)] * kf
    a_eq = bmat([[csr_matrix(own), csr_matrix((ke, kf))]]).tocsr()
    got = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=e, bounds=bounds,
                  method="highs")
    if got.status != 0:
        raise RuntimeError(f"the sequence-form LP failed: {got.message}")
    value = -float(got.fun)
    # the widest optimal plan: variables (x, q, lambda, t); maximise sum(t)
    zeros = csr_matrix((m, 1))
    rows = [
        [csr_matrix(-payoff.T), csr_matrix(other.T), zeros, csr_matrix((m, n))],  # F^T q <= A^T x
        [csr_matrix((1, n)), csr_matrix(-_unit(kf)), csr_matrix([[value - VALUE_TOL]]),
         csr_matrix((1, n))],                                                  # q0 >= l * value
        [-identity(n), csr_matrix((n, kf)), csr_matrix((n, 1)), identity(n)],   # t <= x
    ]
    a_ub = bmat(rows).tocsr()
    b_ub = np.zeros(a_ub.shape[0])
    a_eq = bmat([[csr_matrix(own), csr_matrix((ke, kf)), csr_matrix(-e[:, None]),
                  csr_matrix((ke, n))]]).tocsr()                                # E x = l e
    c = np.concatenate([np.zeros(n + kf + 1), -np.ones(n)])
    bounds = [(0, None)] * n + [(None, None)] * kf + [(1, MAX_SCALE)] + [(0, 1)] * n
    got = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.zeros(ke), bounds=bounds,
                  method="highs")
    if got.status != 0:
        raise RuntimeError(f"the widest-equilibrium LP failed: {got.message}")
    x = np.clip(got.x[:n], 0.0, None) / got.x[n + kf]
    return x, value


def _unit(size: int) -> np.ndarray:
    out = np.zeros((1, size))
    out[0, 0] = 1.0
    return out


def widest_equilibrium(form: SequenceForm, fallback: dict[str, dict[int, float]]
                       ) -> tuple[dict[str, dict[int, float]], float]:
    """(behaviour policy, game value for player 0) of the equilibrium whose plans have the
    largest support in ``X*`` and ``Y*``. At an information state its own player's plan never
    reaches (weight under :data:`REACH_TOL`), the policy is ``fallback``'s (any play there keeps the equilibrium)."""
    e, f = _constraints(form, 0), _constraints(form, 1)
    x, value = _widest(form.payoff, e, f)
    y, _ = _widest(-form.payoff.T, f, e)
    policy: dict[str, dict[int, float]] = {}
    for player, plan in ((0, x), (1, y)):
        where = {s: i for i, s in enumerate(form.sequences[player])}
        for key, parent in form.parents[player].items():
            legal = form.actions[player][key]
            reach = plan[parent]
            if reach > REACH_TOL:
                probs = {a: max(0.0, plan[where[(key, a)]]) / reach for a in legal}
                probs = {a: p if p >= REACH_TOL else 0.0 for a, p in probs.items()}
                total = sum(probs.values())
                policy[key] = {a: p / total for a, p in probs.items()}
            else:
                policy[key] = dict(fallback.get(key) or {a: 1.0 / len(legal) for a in legal})
    return policy, value
