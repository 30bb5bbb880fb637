"""The bucket catalog of the matrix family.

A bucket names a game size, a payoff spread and an equilibrium kind, e.g. ``3x3_midVar_mixed``:

* size ``MxN``: M row actions (the model's), N column actions, each from 1 to 10;
* spread ``lowVar`` / ``midVar`` / ``highVar``: integer payoffs drawn uniformly from
  [-10, 10] / [-50, 50] / [-100, 100]; ``lowVarFloat`` / ``midVarFloat`` / ``highVarFloat``:
  real (float) payoffs drawn uniformly from the same ranges, as the seed tool drew them
  (:data:`FLOAT_SUFFIX`; :func:`seed_payoffs` turns a bucket id into its seed-tool twin);
* kind ``pure``: the game has a pure saddle point; ``mixed``: it has none, so every Nash
  equilibrium is mixed; ``any``: no condition (plain uniform payoffs, what ``distbench run
  --num-rows/--num-cols`` draws when no bucket is named). (``MxN`` with M or N equal to 1
  always has a saddle point, so ``mixed`` needs M, N >= 2.)

Any id of that form is valid, so the catalog is open-ended; :data:`DEFAULT_BUCKETS` lists the
six buckets of the seed research suite.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

SPREADS: dict[str, int] = {"lowVar": 10, "midVar": 50, "highVar": 100}
FLOAT_SUFFIX = "Float"
"""A spread ending in it (``highVarFloat``) draws real payoffs uniformly in the spread's range."""
PAYOFFS: tuple[str, ...] = ("int", "seed")
"""Payoff distributions by name: ``int`` (distbench's default: integers), ``seed`` (the seed
tool's: floats uniform in the bucket's range; [-100, 100] when no bucket is named)."""
KINDS: tuple[str, ...] = ("pure", "mixed", "any")
MAX_ACTIONS = 10

_BUCKET_RE = re.compile(r"^(\d+)x(\d+)_([A-Za-z]+)_([A-Za-z]+)$")

DEFAULT_BUCKETS: tuple[str, ...] = (
    "2x2_lowVar_pure",
    "2x2_lowVar_mixed",
    "3x3_midVar_pure",
    "3x3_midVar_mixed",
    "4x4_highVar_pure",
    "4x4_highVar_mixed",
)


class UnknownBucketError(ValueError):
    """A bucket id that does not name a valid bucket."""


@dataclass(frozen=True, slots=True)
class Bucket:
    """One bucket of matrix games.

    Attributes:
        id: The bucket id, e.g. ``"3x3_midVar_mixed"``.
        rows: Number of row actions (the model's).
        cols: Number of column actions.
        spread: Spread name, a key of :data:`SPREADS`.
        kind: ``"pure"`` (has a saddle point), ``"mixed"`` (has none) or ``"any"``.
        low: Smallest payoff that can be drawn.
        high: Largest payoff that can be drawn.
        floats: Payoffs are real numbers drawn uniformly in ``[low, high]`` (a ``...Float``
            spread), not integers.
    """

    id: str
    rows: int
    cols: int
    spread: str
    kind: str
    low: int
    high: int
    floats: bool = False


def _example_ids() -> list[str]:
    sizes = [f"{k}x{k}" for k in range(2, MAX_ACTIONS + 1)]
    return [f"{s}_{sp}_{k}" for s in sizes for sp in SPREADS for k in KINDS]


def get_bucket(bucket_id: str) -> Bucket:
    """Parses and validates a bucket id.

    Args:
        bucket_id: e.g. ``"4x4_highVar_mixed"``.

    Returns:
        The bucket.

    Raises:
        UnknownBucketError: with a message that says what is wrong and suggests a close id.
    """
    match = _BUCKET_RE.match(bucket_id.strip()) if isinstance(bucket_id, str) else None
    if match is None:
        close = difflib.get_close_matches(str(bucket_id), _example_ids(), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownBucketError(
            f"unknown bucket {bucket_id!r}: expected ROWSxCOLS_SPREAD_KIND such as "
            f"'3x3_midVar_mixed' (spreads: {', '.join(SPREADS)}; kinds: {', '.join(KINDS)}).{hint}"
        )
    rows, cols, spread, kind = int(match[1]), int(match[2]), match[3], match[4]
    floats = spread.endswith(FLOAT_SUFFIX) and spread[: -len(FLOAT_SUFFIX)] in SPREADS
    base = spread[: -len(FLOAT_SUFFIX)] if floats else spread
    if base not in SPREADS:
        close = difflib.get_close_matches(spread, list(SPREADS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownBucketError(
            f"unknown payoff spread {spread!r} in bucket {bucket_id!r}: use one of "
            f"{', '.join(SPREADS)} (integer payoffs), or one of them with '{FLOAT_SUFFIX}' "
            f"(real payoffs, as the seed tool drew them).{hint}"
        )
    if kind not in KINDS:
        raise UnknownBucketError(
            f"unknown equilibrium kind {kind!r} in bucket {bucket_id!r}: use one of {', '.join(KINDS)}."
        )
    if not (1 <= rows <= MAX_ACTIONS and 1 <= cols <= MAX_ACTIONS):
        raise UnknownBucketError(
            f"bucket {bucket_id!r}: sizes run from 1 to {MAX_ACTIONS} actions per player."
        )
    if kind == "mixed" and min(rows, cols) < 2:
        raise UnknownBucketError(
            f"bucket {bucket_id!r}: a game with a single action for one player always has a "
            "saddle point, so a 'mixed' bucket needs at least 2x2."
        )
    half = SPREADS[base]
    return Bucket(bucket_id, rows, cols, spread, kind, -half, half, floats)


def default_bucket_id(rows: int, cols: int, kind: str = "any", spread: str = "midVar") -> str:
    """The bucket id used when only a size is given (``--num-rows/--num-cols``)."""
    return f"{rows}x{cols}_{spread}_{kind}"


def with_payoffs(bucket_id: str, payoffs: str) -> str:
    """``bucket_id`` drawing ``payoffs`` (a name of :data:`PAYOFFS`): ``seed`` turns
    ``3x3_midVar_mixed`` into ``3x3_midVarFloat_mixed``; ``int`` the other way round.

    Raises:
        UnknownBucketError: a bad bucket id.
        ValueError: an unknown distribution name.
    """
    if payoffs not in PAYOFFS:
        raise ValueError(f"unknown payoff distribution {payoffs!r}: use one of {', '.join(PAYOFFS)}")
    bucket = get_bucket(bucket_id)
    base = bucket.spread[: -len(FLOAT_SUFFIX)] if bucket.floats else bucket.spread
    spread = base + FLOAT_SUFFIX if payoffs == "seed" else base
    return f"{bucket.rows}x{bucket.cols}_{spread}_{bucket.kind}"


def seed_bucket(bucket_id: str) -> dict[str, object]:
    """The seed tool's description of a bucket (``suite_metadata.json``'s ``buckets``): its id
    as the seed named it (a ``...Float`` spread is the seed's own, so it loses the suffix),
    ``num_rows``, ``num_cols``, ``payoff_range`` and ``nash_type``."""
    bucket = get_bucket(bucket_id)
    return {"bucket_id": with_payoffs(bucket_id, "int"), "num_rows": bucket.rows,
            "num_cols": bucket.cols, "payoff_range": [bucket.low, bucket.high],
            "nash_type": bucket.kind}
