"""Bradley–Terry strengths by (penalised) maximum likelihood, in batch.

For ``n`` players with log-strengths ``theta``, player ``i`` beats ``j`` with probability
``sigma(theta_i - theta_j)``. Given a batch of win matrices ``wins[b, i, j]`` (the wins of
``i`` over ``j``; fractional counts allowed, so a tie can count as half a win each way), the
kernel minimises::

    f(theta) = alpha * sum_i theta_i**2 - sum_{i != j} wins[i, j] * log sigma(theta_i - theta_j)

by Newton's method with step halving, from ``theta = 0``. ``alpha`` is the penalty of
``choix.opt_pairwise`` (a Gaussian prior of variance ``1 / (2 alpha)``); with ``alpha = 0``
this is the maximum-likelihood estimate, defined up to a common shift, and the kernel returns
it centred (mean 0), as ``choix`` does. The Hessian of the likelihood part is a weighted graph
Laplacian, singular along the all-ones direction; adding ``(1/n) 1 1^T`` makes it invertible
without changing the step (the gradient sums to 0), and every iterate is re-centred.

Convergence: the largest gradient entry below ``tol`` (the returned ``converged`` flag).
With ``alpha = 0`` the maximum exists only when the graph "``i`` has beaten ``j``" is
strongly connected; otherwise the iterates drift off and ``converged`` stays False after
``max_iter`` steps (the public wrapper in :mod:`distbench.report.ratings` checks first).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["fit_bradley_terry_batch"]


def fit_bradley_terry_batch(wins: np.ndarray, alpha: float, *, tol: float = 1e-10,
                            max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Fits every win matrix of a batch.

    Args:
        wins: (B, n, n) non-negative float array, ``wins[b, i, j]`` the wins of ``i`` over
            ``j`` in data set ``b`` (diagonal ignored).
        alpha: non-negative L2 penalty (``choix``'s convention).
        tol: largest gradient entry at convergence.
        max_iter: Newton steps at most.

    Returns:
        (theta, converged): (B, n) float64 centred log-strengths and (B,) bool.

    Raises:
        ValueError: a bad shape, a negative or non-finite count, a negative alpha.
    """
    w = np.ascontiguousarray(wins, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"wins must have shape (B, n, n), got {w.shape}; for one data set "
                         "pass wins[None]")
    if w.shape[1] < 2:
        raise ValueError(f"at least 2 players are needed, got {w.shape[1]}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("wins must be finite and non-negative")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    theta = np.zeros(w.shape[:2])
    converged = np.zeros(w.shape[0], dtype=np.bool_)
    _fit_batch(w, float(alpha), float(tol), int(max_iter), theta, converged)
    return theta, converged


@njit(cache=True)
def _objective(w, alpha, theta):  # pragma: no cover - compiled
    n = theta.shape[0]
    val = 0.0
    for i in range(n):
        val += alpha * theta[i] * theta[i]
        for j in range(n):
            if i != j and w[i, j] > 0.0:
                d = theta[i] - theta[j]
                # -log sigma(d) = log(1 + exp(-d)), computed stably
                if d > 0:
                    val += w[i, j] * np.log1p(np.exp(-d))
                else:
                    val += w[i, j] * (-d + np.log1p(np.exp(d)))
    return val


@njit(cache=True)
def _fit_batch(w, alpha, tol, max_iter, theta, converged):  # pragma: no cover - compiled
    batch, n = theta.shape[0], theta.shape[1]
    grad = np.zeros(n)
    hess = np.zeros((n, n))
    trial = np.zeros(n)
    for b in range(batch):
        t = theta[b]
        for _ in range(max_iter):
            for i in range(n):
                grad[i] = 2.0 * alpha * t[i]
                for j in range(n):
                    hess[i, j] = 1.0 / n if alpha == 0.0 else 0.0
                hess[i, i] += 2.0 * alpha
            for i in range(n):
                for j in range(i + 1, n):
                    m = w[b, i, j] + w[b, j, i]
                    if m <= 0.0:
                        continue
                    p = 1.0 / (1.0 + np.exp(-(t[i] - t[j])))  # P(i beats j)
                    g = m * p - w[b, i, j]
                    grad[i] += g
                    grad[j] -= g
                    h = m * p * (1.0 - p)
                    hess[i, i] += h
                    hess[j, j] += h
                    hess[i, j] -= h
                    hess[j, i] -= h
            if np.max(np.abs(grad)) < tol:
                converged[b] = True
                break
            step = np.linalg.solve(hess, grad)
            f0 = _objective(w[b], alpha, t)
            scale = 1.0
            for _half in range(40):
                for i in range(n):
                    trial[i] = t[i] - scale * step[i]
                if _objective(w[b], alpha, trial) <= f0 + 1e-12 * abs(f0):
                    break
                scale *= 0.5
            mean = 0.0
            for i in range(n):
                mean += trial[i]
            mean /= n
            for i in range(n):
                t[i] = trial[i] - mean
