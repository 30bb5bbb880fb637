"""The games of the bimatrix family: random buckets, the 144 ordinal 2x2 types, named classes.

An **instance set** names where a game comes from; every game is drawn from its set, its seed
and its index alone (``numpy.random.default_rng(derive_seed("bimatrix", set, seed, index))``),
so a game does not depend on sharding.

- **Buckets** ``MxN_<spread>`` (``2x2`` .. ``5x5``; ``lowVar`` / ``midVar`` / ``highVar``):
  each player's payoffs are integers drawn uniformly from [-10, 10] / [-50, 50] /
  [-100, 100], as in the matrix family. Integer ties make some games degenerate; they are
  flagged (``degenerate``), not redrawn.
- **Types** ``type:rgNNN`` (``rg001`` .. ``rg144``, see :mod:`.types`): integer payoffs from
  0..10 with exactly the type's ordering.
- **Classes** ``class:<name>``: 2x2 games whose payoffs are drawn at random (integers 0..10)
  subject to the class's defining inequalities (drawn by
  :func:`distbench.games.answers.classes.draw_class`, which the ``repeated`` family's stage
  games share). Action 1 (index 0) is the cooperative action
  where the class has one (cooperate, stag, swerve), so ``cooperate`` reads the same in
  every class:

  ==================== ====================================== =======================
  class                payoffs (row; column gets the mirror)   conditions
  ==================== ====================================== =======================
  prisoners_dilemma    [[R, S], [T, P]], B = A^T              T > R > P > S, 2R > T + S
  stag_hunt            [[R, S], [T, P]], B = A^T              R > T > P > S
  chicken              [[R, S], [T, P]], B = A^T              T > R > S > P
  deadlock             [[R, S], [T, P]], B = A^T              T > P > R > S
  harmony              [[R, S], [T, P]], B = A^T              R > T > S > P
  battle_of_the_sexes  A = [[H, Z], [Z, L]], B = [[L, Z], [Z, H]]  H > L > Z
  pure_coordination    A = B = [[H, Z], [Z, L]]               H, L > Z
  matching_pennies     A = [[W, V], [V, W]], B = [[V, W], [W, V]]  W > V
  ==================== ====================================== =======================

  The **class rule** (the scripted opponent ``class``) plays action 1: cooperate, stag,
  swerve, the row player's favourite meeting place in Battle of the Sexes, the better
  coordination point, heads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from distbench.errors import did_you_mean
from distbench.games.answers.classes import CLASSES, COOPERATIVE, COORDINATION, draw_class
from distbench.games.base import derive_seed
from distbench.games.bimatrix.types import NUM_TYPES, draw_type_payoffs, type_name

__all__ = ["CLASSES", "COOPERATIVE", "COORDINATION", "InstanceSet", "draw", "draw_class",
           "game_id", "generate", "get_set", "type_sets"]

SPREADS: dict[str, int] = {"lowVar": 10, "midVar": 50, "highVar": 100}
MAX_ACTIONS = 5

_BUCKET_RE = re.compile(r"^([1-5])x([1-5])_(lowVar|midVar|highVar)$")
_TYPE_RE = re.compile(r"^type:rg(\d{3})$")


@dataclass(frozen=True, slots=True)
class InstanceSet:
    """Where games come from.

    Attributes:
        id: ``3x3_midVar``, ``type:rg017`` or ``class:stag_hunt``.
        kind: ``bucket``, ``type`` or ``class``.
        rows: Row actions.
        cols: Column actions.
        name: The class name (``class``), the type index as text (``type``), the spread
            (``bucket``).
    """

    id: str
    kind: str
    rows: int
    cols: int
    name: str

    @property
    def game_class(self) -> str | None:
        """The class name for a class set, else None."""
        return self.name if self.kind == "class" else None


def get_set(set_id: str) -> InstanceSet:
    """The instance set ``set_id`` (ValueError naming the accepted forms otherwise)."""
    found = _BUCKET_RE.match(set_id)
    if found:
        return InstanceSet(set_id, "bucket", int(found[1]), int(found[2]), found[3])
    found = _TYPE_RE.match(set_id)
    if found and 1 <= int(found[1]) <= NUM_TYPES:
        return InstanceSet(set_id, "type", 2, 2, found[1])
    if set_id.startswith("class:") and set_id[6:] in CLASSES:
        return InstanceSet(set_id, "class", 2, 2, set_id[6:])
    hint = did_you_mean(set_id.removeprefix("class:"), list(CLASSES))
    raise ValueError(f"unknown bimatrix game set {set_id!r}: use a bucket MxN_lowVar|midVar|"
                     f"highVar (sizes 1..{MAX_ACTIONS}), type:rg001..rg{NUM_TYPES:03d} or "
                     f"class:NAME ({', '.join(CLASSES)}).{hint}")


def type_sets(spec: str) -> list[str]:
    """``--types`` value: ``all`` or a comma list of indices / ``rgNNN`` names -> set ids."""
    if spec.strip() == "all":
        return [f"type:{type_name(t)}" for t in range(1, NUM_TYPES + 1)]
    out = []
    for part in spec.split(","):
        part = part.strip().removeprefix("rg")
        if not part.isdigit() or not 1 <= int(part) <= NUM_TYPES:
            raise ValueError(f"--types takes 'all' or indices 1..{NUM_TYPES} (or rg001..), got "
                             f"{part!r}")
        out.append(f"type:{type_name(int(part))}")
    return out


def game_id(set_id: str, seed: int, index: int) -> str:
    """``<set>/s<seed>/g<index>``."""
    return f"{set_id}/s{seed}/g{index}"


def generate(set_id: str, seed: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Games ``start..stop-1`` of ``(set_id, seed)``: ``(A, B)``, each (G, m, n) float64."""
    s = get_set(set_id)
    a = np.empty((stop - start, s.rows, s.cols))
    b = np.empty_like(a)
    for k, index in enumerate(range(start, stop)):
        rng = np.random.default_rng(derive_seed("bimatrix", set_id, seed, index))
        a[k], b[k] = draw(s, rng)
    return a, b


def draw(s: InstanceSet, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One game of set ``s``."""
    if s.kind == "bucket":
        hi = SPREADS[s.name]
        return (rng.integers(-hi, hi + 1, (s.rows, s.cols)).astype(np.float64),
                rng.integers(-hi, hi + 1, (s.rows, s.cols)).astype(np.float64))
    if s.kind == "type":
        return draw_type_payoffs(int(s.name), rng)
    return draw_class(s.name, rng)
