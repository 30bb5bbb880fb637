"""The bucket catalog of the matrix family.

A bucket names a game size, a payoff spread and an equilibrium kind, e.g. ``3x3_midVar_mixed``:

* size ``MxN``: M row actions (the model's), N column actions, each from 1 to 10;
* spread ``lowVar`` / ``midVar`` / ``highVar``: integer payoffs drawn uniformly from
  [-10, 10] / [-50, 50] / [-100, 100];
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
    """

    id: str
    rows: int
    cols: int
    spread: str
    kind: str
    low: int
    high: int


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
    if spread not in SPREADS:
        close = difflib.get_close_matches(spread, list(SPREADS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownBucketError(
            f"unknown payoff spread {spread!r} in bucket {bucket_id!r}: use one of "
            f"{', '.join(SPREADS)}.{hint}"
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
    half = SPREADS[spread]
    return Bucket(bucket_id, rows, cols, spread, kind, -half, half)


def default_bucket_id(rows: int, cols: int, kind: str = "any", spread: str = "midVar") -> str:
    """The bucket id used when only a size is given (``--num-rows/--num-cols``)."""
    return f"{rows}x{cols}_{spread}_{kind}"
