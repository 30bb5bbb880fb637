"""Numba kernels: exact zero-sum and bimatrix game solving and scoring of answers, in batch.

No I/O and no Ray here; public functions validate and allocate, private ``@njit(cache=True)``
kernels fill the outputs in place.
"""

from distbench.kernels.bimatrix import BimatrixSolution, solve_bimatrix
from distbench.kernels.resample import cluster_resample_means
from distbench.kernels.scoring import INVALID_ACTION, TrialScores, score_actions, score_strategies
from distbench.kernels.zero_sum import (
    GAP_DEGENERATE_TOL,
    RESIDUAL_TOL,
    STATUS_INACCURATE,
    STATUS_ITERATION_LIMIT,
    STATUS_OK,
    SUPPORT_TOL,
    ZeroSumSolution,
    solve_zero_sum,
)

__all__ = [
    "BimatrixSolution",
    "GAP_DEGENERATE_TOL",
    "INVALID_ACTION",
    "RESIDUAL_TOL",
    "STATUS_INACCURATE",
    "STATUS_ITERATION_LIMIT",
    "STATUS_OK",
    "SUPPORT_TOL",
    "TrialScores",
    "ZeroSumSolution",
    "cluster_resample_means",
    "score_actions",
    "score_strategies",
    "solve_bimatrix",
    "solve_zero_sum",
]
