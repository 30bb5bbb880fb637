"""Presentations of one game: the same strategic situation written differently (``--perturb``).

An invariance test asks a model the same game in several presentations and compares the
underlying answers. Each presentation is a seeded, invertible map between what the model sees
and the game that is scored, so every answer is mapped back to the original game's actions and
scored there, in the original game's payoff units (the metrics of a perturbed answer are those
of the same answer in the original game). The maps, for a game with payoffs U (m x n) to the
model, m model actions:

- ``none``: the game as the family writes it (the base presentation every other one is
  compared with).
- ``labels``: the model's actions and the opponent's in another order (seeded uniform
  permutations ``row_order``, ``col_order``; labels stay ``1..m`` by position, so each action
  gets another label). Presented payoffs ``P[k, l] = U[row_order[k], col_order[l]]``; the answer
  "position k" is the underlying action ``row_order[k]``; a presented strategy ``p`` is the
  underlying ``x[row_order[k]] = p[k]``.
- ``seat``: the model plays the other seat of the same game: the column player of the game
  whose table is ``V = -U^T`` (n x m, payoffs to the row player, who is now the opponent).
  Choosing column j against row i pays the model ``-V[i, j] = U[j, i]``: exactly the original
  payoff, so column j *is* underlying action j (identity orders) and every metric maps back
  unchanged. Only the wording (which seat, whose payoffs the table shows, a sign) differs.
- ``affine``: payoffs ``scale * U + shift`` with a seeded ``scale > 0`` and ``shift``: a
  positive affine map keeps best responses, equilibria and the ordering of outcomes, so it is
  the same strategic game; scores are computed on U.
- ``framing``: the same payoffs, told as a short story (one of a few seeded templates, the
  family's prompts own the texts) instead of a table; identity orders.

A presentation's seed is a function of the game id and the presentation name only, so every
model and every run over the same games sees the same presentations (paired comparisons).
Everything here is family-neutral (``matrix`` uses it; ``bimatrix`` can present its row seat
the same way): orders, maps back, the presented payoff matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from distbench.games.base import derive_seed

__all__ = [
    "BASE",
    "PERTURBATIONS",
    "Presentation",
    "make_presentation",
    "parse_perturb",
    "presented_payoff",
    "to_underlying_actions",
    "to_underlying_strategies",
]

BASE = "none"
PERTURBATIONS: tuple[str, ...] = ("labels", "seat", "affine", "framing")
"""The perturbations ``--perturb`` accepts, in their canonical order."""

AFFINE_SCALES: tuple[float, ...] = (0.5, 2.0, 3.0, 4.0, 5.0)
"""The scales an ``affine`` presentation draws from (all > 0)."""
AFFINE_SHIFT = 50
"""An ``affine`` shift is a non-zero integer in [-AFFINE_SHIFT, AFFINE_SHIFT]."""
FRAMING_TEMPLATES = 3
"""Number of story templates a ``framing`` presentation draws from (the family writes them)."""


@dataclass(frozen=True, slots=True)
class Presentation:
    """One presentation of one game.

    Attributes:
        name: ``none`` or one of :data:`PERTURBATIONS`.
        presentation_id: Stable id ``<game_id>/<name>``.
        row_order: (m,) the underlying action shown at each position of the model's actions.
        col_order: (n,) the underlying opponent action shown at each opponent position.
        scale: Affine scale (> 0; 1 unless ``affine``).
        shift: Affine shift (0 unless ``affine``).
        seat: The model plays the column seat of ``-U^T`` (``seat``).
        template: Story template index (``framing``), -1 otherwise.
    """

    name: str
    presentation_id: str
    row_order: tuple[int, ...]
    col_order: tuple[int, ...]
    scale: float = 1.0
    shift: float = 0.0
    seat: bool = False
    template: int = -1


def parse_perturb(text: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The perturbations of a ``--perturb`` value (comma list) or a spec's list, canonical
    order, no duplicates; ``""``/None -> ``()``.

    Raises:
        ValueError: an unknown name (one line naming the known ones).
    """
    if text is None:
        return ()
    if not isinstance(text, (str, list, tuple)):
        raise ValueError(f"give the perturbations as a list or a comma-separated string of "
                         f"{', '.join(PERTURBATIONS)}, got {text!r}")
    items = text.split(",") if isinstance(text, str) else list(text)
    names = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"perturbations are names among {', '.join(PERTURBATIONS)}, "
                             f"got {item!r}")
        name = item.strip()
        if not name:
            continue
        if name not in PERTURBATIONS:
            raise ValueError(f"unknown perturbation {name!r}: choose among "
                             f"{', '.join(PERTURBATIONS)} (comma-separated)")
        names.append(name)
    return tuple(p for p in PERTURBATIONS if p in names)


def make_presentation(game_id: str, name: str, m: int, n: int) -> Presentation:
    """The presentation ``name`` of game ``game_id`` (m model actions, n opponent actions),
    a function of the game id and the name alone (seeded by :func:`derive_seed`)."""
    if name != BASE and name not in PERTURBATIONS:
        raise ValueError(f"unknown presentation {name!r}")
    identity_rows, identity_cols = tuple(range(m)), tuple(range(n))
    pid = f"{game_id}/{name}"
    if name == BASE:
        return Presentation(name, pid, identity_rows, identity_cols)
    rng = np.random.default_rng(np.random.SeedSequence([derive_seed("presentation", game_id,
                                                                    name)]))
    if name == "labels":
        return Presentation(name, pid, tuple(int(i) for i in rng.permutation(m)),
                            tuple(int(j) for j in rng.permutation(n)))
    if name == "seat":
        return Presentation(name, pid, identity_rows, identity_cols, seat=True)
    if name == "affine":
        scale = float(AFFINE_SCALES[int(rng.integers(len(AFFINE_SCALES)))])
        shift = int(rng.integers(1, AFFINE_SHIFT + 1)) * (1 if rng.random() < 0.5 else -1)
        return Presentation(name, pid, identity_rows, identity_cols, scale=scale,
                            shift=float(shift))
    return Presentation(name, pid, identity_rows, identity_cols,
                        template=int(rng.integers(FRAMING_TEMPLATES)))


def presented_payoff(payoff: np.ndarray, pres: Presentation) -> np.ndarray:
    """The payoff table the model is shown.

    Args:
        payoff: (m, n) payoffs to the model in the original game.
        pres: The presentation.

    Returns:
        (m, n) ``scale * U[row_order][:, col_order] + shift`` from the model's seat, or, for a
        ``seat`` presentation, (n, m) ``-U^T``: the row player's (the opponent's) payoffs, the
        model choosing a column.
    """
    u = np.asarray(payoff, dtype=np.float64)
    shown = u[np.asarray(pres.row_order)][:, np.asarray(pres.col_order)]
    shown = pres.scale * shown + pres.shift
    return -shown.T if pres.seat else shown


def to_underlying_actions(positions: np.ndarray, row_orders: np.ndarray) -> np.ndarray:
    """Underlying actions of presented positions.

    Args:
        positions: (T,) the position the model chose (0-based), -1 when invalid.
        row_orders: (T, m) each trial's presentation order.

    Returns:
        (T,) int64 underlying actions, -1 where ``positions`` is -1.
    """
    positions = np.asarray(positions, dtype=np.int64)
    orders = np.asarray(row_orders, dtype=np.int64)
    ok = positions >= 0
    out = np.full(positions.shape, -1, dtype=np.int64)
    out[ok] = orders[np.flatnonzero(ok), positions[ok]]
    return out


def to_underlying_strategies(presented: np.ndarray, row_orders: np.ndarray) -> np.ndarray:
    """Underlying strategies of presented ones: ``x[row_order[k]] = p[k]`` (NaN rows stay NaN).

    Args:
        presented: (T, m) probabilities by presented position.
        row_orders: (T, m) each trial's presentation order.
    """
    presented = np.asarray(presented, dtype=np.float64)
    orders = np.asarray(row_orders, dtype=np.int64)
    out = np.empty_like(presented)
    np.put_along_axis(out, orders, presented, axis=1)
    return out
