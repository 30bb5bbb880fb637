"""Exact optimum computations over every split of the items, in batch (numba).

A split gives seat a ``x_k`` items of type ``k`` (``0 <= x_k <= counts_k``) and seat b the rest.
With at most 8 items in at most 5 types there are at most 108 splits (counts 2, 2, 2, 1, 1),
so the kernel enumerates them all. Outcomes that leave items unallocated are dominated by a
split (values are non-negative), so splits are enough for every quantity below.

For an outcome ``(o_a, o_b)`` (the two players' scores):

- ``max_pareto_improvement`` = max over splits with ``s_a >= o_a`` and ``s_b >= o_b`` of
  ``max(s_a - o_a, s_b - o_b)`` (0 when nothing improves on the outcome);
- ``pareto_optimal`` = ``max_pareto_improvement == 0`` (no split improves one player without
  hurting the other).

This module keeps the kernel beside the family (the task brief confines it to
``distbench/games/negotiation``); it follows the ``distbench/kernels`` style: the public wrapper
validates and allocates, the private ``@njit(cache=True)`` kernel fills the outputs in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

PAD_TYPES = 5
NO_OUTCOME = -1


@dataclass(frozen=True)
class ParetoResult:
    """Optimum quantities of a batch of B instances.

    Attributes:
        max_sum: (B,) int64, the largest ``s_a + s_b`` over splits.
        max_a: (B,) int64, seat a's largest score.
        max_b: (B,) int64, seat b's largest score.
        frontier_size: (B,) int64, number of distinct Pareto-optimal score pairs.
        max_improvement: (B,) int64, max Pareto improvement of the outcome; -1 where no
            outcome was given.
        pareto_optimal: (B,) bool, ``max_improvement == 0`` (False where no outcome).
    """

    max_sum: np.ndarray
    max_a: np.ndarray
    max_b: np.ndarray
    frontier_size: np.ndarray
    max_improvement: np.ndarray
    pareto_optimal: np.ndarray


@njit(cache=True)
def _pareto_kernel(counts, va, vb, out_a, out_b, max_sum, max_a, max_b, frontier, improve):
    n_inst, n_types = counts.shape
    sa = np.empty(256, dtype=np.int64)
    sb = np.empty(256, dtype=np.int64)
    x = np.zeros(n_types, dtype=np.int64)
    for g in range(n_inst):
        # Enumerate every split with a mixed-radix counter over x.
        x[:] = 0
        n = 0
        while True:
            a = 0
            b = 0
            for k in range(n_types):
                a += x[k] * va[g, k]
                b += (counts[g, k] - x[k]) * vb[g, k]
            sa[n] = a
            sb[n] = b
            n += 1
            k = 0
            while k < n_types and x[k] == counts[g, k]:
                x[k] = 0
                k += 1
            if k == n_types:
                break
            x[k] += 1
        best_sum = -1
        best_a = -1
        best_b = -1
        for i in range(n):
            if sa[i] + sb[i] > best_sum:
                best_sum = sa[i] + sb[i]
            if sa[i] > best_a:
                best_a = sa[i]
            if sb[i] > best_b:
                best_b = sb[i]
        max_sum[g] = best_sum
        max_a[g] = best_a
        max_b[g] = best_b
        # Distinct non-dominated score pairs.
        size = 0
        for i in range(n):
            dominated = False
            duplicate = False
            for j in range(n):
                if sa[j] >= sa[i] and sb[j] >= sb[i] and (sa[j] > sa[i] or sb[j] > sb[i]):
                    dominated = True
                    break
                if j < i and sa[j] == sa[i] and sb[j] == sb[i]:
                    duplicate = True
            if not dominated and not duplicate:
                size += 1
        frontier[g] = size
        oa = out_a[g]
        ob = out_b[g]
        if oa < 0 or ob < 0:
            improve[g] = -1
            continue
        gain = 0
        for i in range(n):
            if sa[i] >= oa and sb[i] >= ob:
                d = max(sa[i] - oa, sb[i] - ob)
                if d > gain:
                    gain = d
        improve[g] = gain


def _as_padded(rows, name: str) -> np.ndarray:
    arr = np.zeros((len(rows), PAD_TYPES), dtype=np.int64)
    for g, row in enumerate(rows):
        row = np.asarray(row)
        if row.ndim != 1 or not 1 <= row.shape[0] <= PAD_TYPES:
            raise ValueError(f"{name}[{g}] must hold 1 to {PAD_TYPES} values, got {row.tolist()}")
        if not np.issubdtype(row.dtype, np.integer) or (row < 0).any():
            raise ValueError(f"{name}[{g}] must be non-negative integers, got {row.tolist()}")
        arr[g, : row.shape[0]] = row
    return arr


def pareto_batch(counts, values_a, values_b, outcome_a=None, outcome_b=None) -> ParetoResult:
    """Optimum quantities of B instances and (optionally) the outcome of each.

    Args:
        counts: B sequences of item counts (1 to 5 types each, at most 8 items).
        values_a: B sequences of seat a's values, aligned with ``counts``.
        values_b: B sequences of seat b's values.
        outcome_a: (B,) seat a's score per instance, -1 for none (default: none).
        outcome_b: (B,) seat b's score per instance, -1 for none.

    Raises:
        ValueError: lengths disagree, values are negative or not integers, an instance has
            more than 8 items.
    """
    n = len(counts)
    if len(values_a) != n or len(values_b) != n:
        raise ValueError(f"counts, values_a and values_b must have the same length, got "
                         f"{n}, {len(values_a)}, {len(values_b)}")
    c = _as_padded(counts, "counts")
    va = _as_padded(values_a, "values_a")
    vb = _as_padded(values_b, "values_b")
    for g in range(n):
        if len(values_a[g]) != len(counts[g]) or len(values_b[g]) != len(counts[g]):
            raise ValueError(f"instance {g}: values and counts have different lengths")
    if n and np.prod(c + 1, axis=1).max() > 256:
        raise ValueError("an instance has more than 256 splits (at most 8 items are supported)")
    oa = np.full(n, NO_OUTCOME, dtype=np.int64) if outcome_a is None else np.asarray(outcome_a, dtype=np.int64)
    ob = np.full(n, NO_OUTCOME, dtype=np.int64) if outcome_b is None else np.asarray(outcome_b, dtype=np.int64)
    if oa.shape != (n,) or ob.shape != (n,):
        raise ValueError(f"outcome_a and outcome_b must have shape ({n},)")
    outs = [np.empty(n, dtype=np.int64) for _ in range(5)]
    if n:
        _pareto_kernel(c, va, vb, oa, ob, *outs)
    max_sum, max_a, max_b, frontier, improve = outs
    return ParetoResult(max_sum, max_a, max_b, frontier, improve, improve == 0)
