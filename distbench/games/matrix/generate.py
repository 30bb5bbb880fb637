"""Seeded generation of matrix games, bucket by bucket.

Games of one ``(bucket, seed)`` form an infinite, numbered stream: game ``k`` is the same
whatever shard asks for it. The stream is cut into blocks of :data:`BLOCK` games; block ``b``
is drawn from its own generator, ``SeedSequence([seed, *bucket_key, b])``, so a shard
generating games ``[start, stop)`` draws only the blocks it covers and nothing depends on how
the work was sharded.

Within a block, payoffs are integers drawn uniformly from the bucket's range (real numbers,
uniform in ``[low, high)``, for a ``...Float`` spread: the seed tool's draws), and:

* ``any`` buckets keep every draw;
* ``mixed`` buckets keep the draws without a saddle point (rejection sampling, vectorised);
* ``pure`` buckets keep the draws with a saddle point (rejection sampling) while the
  saddle-point rate of uniform payoffs, ``m! n! / (m + n - 1)!`` for continuous payoffs, is at
  least :data:`PLANT_BELOW`; for larger games, where rejection would need hundreds of draws per
  game, a saddle point is planted instead: a uniform cell ``(i, j)`` keeps its value ``v``,
  the rest of row ``i`` is redrawn uniformly from ``[v, high]`` and the rest of column ``j``
  from ``[low, v]`` (integers or reals, as the bucket draws).

A game has a saddle point exactly when ``max_i min_j U[i, j] == min_j max_i U[i, j]``.
"""

from __future__ import annotations

import math

import numpy as np

from distbench.games.base import derive_seed
from distbench.games.matrix.buckets import Bucket, get_bucket

BLOCK = 256
PLANT_BELOW = 0.05


def stable_key(text: str) -> list[int]:
    """Two 32-bit words derived from ``text``, stable across processes and Python versions."""
    value = derive_seed(text)
    return [value & 0xFFFF_FFFF, value >> 32]


def has_saddle_point(payoffs: np.ndarray) -> np.ndarray:
    """Whether each game has a pure saddle point.

    Args:
        payoffs: (B, m, n) payoffs to the row player.

    Returns:
        (B,) bool.
    """
    maximin = payoffs.min(axis=2).max(axis=1)
    minimax = payoffs.max(axis=1).min(axis=1)
    return maximin == minimax


def saddle_point_rate(rows: int, cols: int) -> float:
    """Probability that an iid continuous ``rows x cols`` game has a saddle point."""
    return math.exp(
        math.lgamma(rows + 1) + math.lgamma(cols + 1) - math.lgamma(rows + cols)
    )


def _draw(rng: np.random.Generator, bucket: Bucket, count: int) -> np.ndarray:
    if bucket.floats:
        return rng.uniform(bucket.low, bucket.high, size=(count, bucket.rows, bucket.cols))
    return rng.integers(bucket.low, bucket.high + 1, size=(count, bucket.rows, bucket.cols))


def _between(rng: np.random.Generator, bucket: Bucket, lo: np.ndarray | int,
             hi: np.ndarray | int, size: tuple[int, int]) -> np.ndarray:
    """Uniform draws in ``[lo, hi]``, broadcast to ``size``, of the bucket's kind of number."""
    if bucket.floats:
        return rng.uniform(lo, hi, size=size)
    return rng.integers(lo, np.asarray(hi) + 1, size=size)


def _plant_saddle(rng: np.random.Generator, bucket: Bucket, count: int) -> np.ndarray:
    games = _draw(rng, bucket, count)
    idx = np.arange(count)
    i = rng.integers(0, bucket.rows, size=count)
    j = rng.integers(0, bucket.cols, size=count)
    v = games[idx, i, j]
    row = _between(rng, bucket, v[:, None], bucket.high, (count, bucket.cols))
    col = _between(rng, bucket, bucket.low, v[:, None], (count, bucket.rows))
    games[idx, i, :] = row
    games[idx, :, j] = col
    games[idx, i, j] = v
    return games


def _reject(rng: np.random.Generator, bucket: Bucket, count: int, want_saddle: bool) -> np.ndarray:
    rate = saddle_point_rate(bucket.rows, bucket.cols)
    rate = rate if want_saddle else 1.0 - rate
    kept: list[np.ndarray] = []
    have = 0
    while have < count:
        batch = max(64, int(1.25 * (count - have) / max(rate, 1e-3)))
        cand = _draw(rng, bucket, batch)
        ok = has_saddle_point(cand) == want_saddle
        kept.append(cand[ok])
        have += int(ok.sum())
    return np.concatenate(kept)[:count]


def generate_block(bucket: Bucket, seed: int, block: int) -> np.ndarray:
    """Games ``[block * BLOCK, (block + 1) * BLOCK)`` of the stream of ``(bucket, seed)``.

    Returns:
        (BLOCK, rows, cols) int64 payoffs (float64 for a ``...Float`` spread).
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, *stable_key(bucket.id), block]))
    if bucket.kind == "any":
        return _draw(rng, bucket, BLOCK)
    if bucket.kind == "pure" and saddle_point_rate(bucket.rows, bucket.cols) < PLANT_BELOW:
        return _plant_saddle(rng, bucket, BLOCK)
    return _reject(rng, bucket, BLOCK, want_saddle=bucket.kind == "pure")


def generate_games(bucket_id: str | Bucket, seed: int, start: int, stop: int) -> np.ndarray:
    """Games ``[start, stop)`` of the stream of ``(bucket, seed)``.

    Args:
        bucket_id: A bucket id such as ``"3x3_midVar_mixed"``, or a :class:`Bucket`.
        seed: Non-negative integer seed.
        start: Index of the first game (>= 0).
        stop: One past the index of the last game (>= start).

    Returns:
        (stop - start, rows, cols) float64 payoffs to the row player.
    """
    bucket = bucket_id if isinstance(bucket_id, Bucket) else get_bucket(bucket_id)
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not 0 <= start <= stop:
        raise ValueError(f"need 0 <= start <= stop, got start={start}, stop={stop}")
    out = np.empty((stop - start, bucket.rows, bucket.cols), dtype=np.float64)
    first, last = start // BLOCK, (stop - 1) // BLOCK
    for block in range(first, last + 1) if stop > start else ():
        games = generate_block(bucket, int(seed), block)
        lo = max(start, block * BLOCK)
        hi = min(stop, (block + 1) * BLOCK)
        out[lo - start : hi - start] = games[lo - block * BLOCK : hi - block * BLOCK]
    return out


def game_ids(bucket_id: str, seed: int, start: int, stop: int) -> list[str]:
    """Stable ids of games ``[start, stop)``: ``"<bucket>/s<seed>/g<index>"``."""
    return [f"{bucket_id}/s{seed}/g{k}" for k in range(start, stop)]
