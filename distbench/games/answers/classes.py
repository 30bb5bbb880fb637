"""The named classes of 2x2 games, with payoffs drawn true to the class: shared by the
``bimatrix`` family (class games) and the ``repeated`` family (stage games).

Payoffs are integers 0..10 drawn subject to the class's defining inequalities. In the
symmetric classes ``A = [[R, S], [T, P]]`` and ``B = A^T``; action 1 (index 0) is the
cooperative action (cooperate, stag, swerve), so "cooperate" reads the same in every class:

==================== ============================================ ==========================
class                payoffs                                      conditions
==================== ============================================ ==========================
prisoners_dilemma    A = [[R, S], [T, P]], B = A^T                T > R > P > S, 2R > T + S
stag_hunt            A = [[R, S], [T, P]], B = A^T                R > T > P > S
chicken              A = [[R, S], [T, P]], B = A^T                T > R > S > P
deadlock             A = [[R, S], [T, P]], B = A^T                T > P > R > S
harmony              A = [[R, S], [T, P]], B = A^T                R > T > S > P
battle_of_the_sexes  A = [[H, Z], [Z, L]], B = [[L, Z], [Z, H]]   H > L > Z
pure_coordination    A = B = [[H, Z], [Z, L]]                     H > L > Z
matching_pennies     A = [[W, V], [V, W]], B = [[V, W], [W, V]]   W > V
==================== ============================================ ==========================
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLASSES", "CONDITIONS", "COOPERATIVE", "COORDINATION", "draw_class"]

CLASSES: tuple[str, ...] = ("prisoners_dilemma", "stag_hunt", "chicken", "battle_of_the_sexes",
                            "matching_pennies", "pure_coordination", "deadlock", "harmony")
#: Each class's defining payoff order, one line (``distbench list classes``): R, S, T, P the
#: row player's payoffs of (C, C), (C, D), (D, C), (D, D); H > L the two meeting points.
CONDITIONS: dict[str, str] = {
    "prisoners_dilemma": "symmetric, T > R > P > S and 2R > T + S",
    "stag_hunt": "symmetric, R > T > P > S",
    "chicken": "symmetric, T > R > S > P",
    "battle_of_the_sexes": "two meeting points, each player prefers another (H > L > 0 apart)",
    "matching_pennies": "the row player wins on a match, the column player on a mismatch",
    "pure_coordination": "both prefer the same meeting point (H, L > 0 apart)",
    "deadlock": "symmetric, T > P > R > S",
    "harmony": "symmetric, R > T > S > P",
}
#: Classes whose action 1 is the cooperative one.
COOPERATIVE = ("prisoners_dilemma", "stag_hunt", "chicken", "deadlock", "harmony")
#: Classes where landing on a pure equilibrium (coordination) is the classic rate.
COORDINATION = ("stag_hunt", "battle_of_the_sexes", "pure_coordination")


def _distinct(rng: np.random.Generator, k: int) -> np.ndarray:
    """``k`` distinct integers from 0..10, ascending."""
    return np.sort(rng.choice(11, size=k, replace=False)).astype(np.float64)


def draw_class(name: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A game of class ``name`` with random payoffs true to it: ``(A, B)``, each (2, 2)."""
    if name in ("prisoners_dilemma", "stag_hunt", "chicken", "deadlock", "harmony"):
        while True:
            v = _distinct(rng, 4)  # v[0] < v[1] < v[2] < v[3]
            r, s, t, p = {
                "prisoners_dilemma": (v[2], v[0], v[3], v[1]),  # T > R > P > S
                "stag_hunt": (v[3], v[0], v[2], v[1]),  # R > T > P > S
                "chicken": (v[2], v[1], v[3], v[0]),  # T > R > S > P
                "deadlock": (v[1], v[0], v[3], v[2]),  # T > P > R > S
                "harmony": (v[3], v[1], v[2], v[0]),  # R > T > S > P
            }[name]
            if name != "prisoners_dilemma" or 2 * r > t + s:
                break
        a = np.array([[r, s], [t, p]])
        return a, a.T.copy()
    if name == "battle_of_the_sexes":
        z, lo, hi = _distinct(rng, 3)
        return np.array([[hi, z], [z, lo]]), np.array([[lo, z], [z, hi]])
    if name == "pure_coordination":
        z, lo, hi = _distinct(rng, 3)
        a = np.array([[hi, z], [z, lo]])
        return a, a.copy()
    if name == "matching_pennies":
        v, w = _distinct(rng, 2)
        return np.array([[w, v], [v, w]]), np.array([[v, w], [w, v]])
    raise ValueError(f"unknown class {name!r}; use one of {', '.join(CLASSES)}")
