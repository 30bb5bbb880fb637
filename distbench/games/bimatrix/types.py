"""The 144 ordinal 2x2 game types (the Robinson–Goforth topology), and payoffs true to them.

A strict ordinal 2x2 game gives each player a ranking 1 (worst) .. 4 (best) of the four
cells. Swapping the two rows or the two columns relabels actions without changing the game,
so each game has one representative in which

- the row player's best cell (4) is in the right column, and
- the column player's best cell (4) is in the top row,

as Robinson and Goforth lay out their periodic table. This leaves 12 rankings for each
player (the 4 in one of two cells, the other three in any order) and 12 x 12 = 144 types.

Indexing. A player's 12 rankings are ordered lexicographically by the ranks of the cells
``(0,0), (0,1), (1,0), (1,1)`` (row-major); type ``t = 12 r + c + 1`` (1 .. 144) pairs the
row player's ranking ``r`` (0-based) with the column player's ranking ``c``, and is named
``rg001`` .. ``rg144``. (This is this module's enumeration of the same 144 games; it is not
Robinson–Goforth's layer/tile naming.)

Payoffs true to a type: each player gets four distinct values sorted and assigned by rank,
so every draw has exactly the type's ordering (and is a nondegenerate game).
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["NUM_TYPES", "draw_type_payoffs", "type_name", "type_ranks"]

NUM_TYPES = 144


def _rankings(best_cells: tuple[int, int]) -> list[tuple[int, ...]]:
    """The 12 rankings (ranks of cells 0..3, row-major) whose 4 sits in one of ``best_cells``."""
    return sorted(p for p in itertools.permutations((1, 2, 3, 4)) if p.index(4) in best_cells)


_ROW = _rankings((1, 3))  # the row player's 4 in the right column
_COL = _rankings((0, 1))  # the column player's 4 in the top row


def type_ranks(t: int) -> tuple[np.ndarray, np.ndarray]:
    """The ordinal matrices (ranks 1..4) of type ``t`` (1 .. 144): ``(A, B)``, each (2, 2) int64.

    Raises:
        ValueError: ``t`` outside 1 .. 144.
    """
    if not 1 <= t <= NUM_TYPES:
        raise ValueError(f"a Robinson-Goforth type is 1..{NUM_TYPES}, got {t}")
    r, c = divmod(t - 1, 12)
    return (np.array(_ROW[r], dtype=np.int64).reshape(2, 2),
            np.array(_COL[c], dtype=np.int64).reshape(2, 2))


def type_name(t: int) -> str:
    """``rg001`` .. ``rg144``."""
    type_ranks(t)
    return f"rg{t:03d}"


def draw_type_payoffs(t: int, rng: np.random.Generator, low: int = 0,
                      high: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Integer payoffs with exactly type ``t``'s ordering: each player's four ranks mapped to
    four distinct values drawn from ``low .. high`` (sorted, so rank 4 gets the largest).

    Returns:
        ``(A, B)``, each (2, 2) float64.
    """
    if high - low < 3:
        raise ValueError(f"need at least 4 distinct values, got {low}..{high}")
    ra, rb = type_ranks(t)
    out = []
    for ranks in (ra, rb):
        values = np.sort(rng.choice(np.arange(low, high + 1), size=4, replace=False))
        out.append(values[ranks - 1].astype(np.float64))
    return out[0], out[1]
