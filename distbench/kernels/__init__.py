"""Numba kernels: exact zero-sum and bimatrix game solving and scoring of answers, in batch.

No I/O and no Ray here; public functions validate and allocate, private ``@njit(cache=True)``
kernels fill the outputs in place. The names below load their module when first used.
"""

import importlib
from typing import Any

_HOMES = {
    "BimatrixSolution": "bimatrix", "solve_bimatrix": "bimatrix",
    "cluster_resample_means": "resample",
    "INVALID_ACTION": "scoring", "TrialScores": "scoring", "score_actions": "scoring",
    "score_strategies": "scoring",
    "GAP_DEGENERATE_TOL": "zero_sum", "RESIDUAL_TOL": "zero_sum",
    "STATUS_INACCURATE": "zero_sum", "STATUS_ITERATION_LIMIT": "zero_sum",
    "STATUS_OK": "zero_sum", "SUPPORT_TOL": "zero_sum", "ZeroSumSolution": "zero_sum",
    "solve_zero_sum": "zero_sum",
}
"""Each public name's module: loaded when the name is first asked for (PEP 562), so that a
caller of one kernel does not load numba for the others (the bootstrap of a small summary
needs none)."""


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


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
