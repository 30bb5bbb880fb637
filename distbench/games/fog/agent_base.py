"""The fog agents' common ground: the constants an agent's report is over, :class:`AgentReport`,
the :class:`Agent` interface, the exact :class:`Posterior` and the helpers the tiers and the
text agents share (:mod:`.agents` re-exports all of it: import from there)."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np

from distbench.games.fog.rules import (
    DIRS,
    ORDER_KINDS,
    POWERS,
    Deployment,
    Observation,
    Order,
    Rules,
    random_deployment,
    valid_power_vectors,
)

TIERS: tuple[str, ...] = ("tier1", "tier2", "tier3", "tier4")
OBJECTIVES: tuple[str, ...] = ("hunt_sovereign", "dominate", "defend")
"""The objectives an objective distribution is over, in this order."""
ACTION_KINDS: tuple[str, ...] = ORDER_KINDS
"""The order kinds an action distribution is over, in this order (hold, move, charge, scout,
fortify, ambush)."""
STRATEGIES: dict[str, str] = {"random": "tier1", "greedy": "tier2", "bayesian_hunter": "tier3",
                              "lookahead": "tier4"}
"""The design's strategy names of the tiers."""
TOLERANCE = 0.05
"""How far from 1 a stated distribution may sum (it is then renormalised)."""


@dataclass(slots=True)
class AgentReport:
    """What an agent states on a turn (a row of ``fog_reports``).

    Attributes:
        beliefs: (K, 5) probabilities of enemy force k having power 1..5; None if invalid.
        predicted_actions: Predicted order kind per enemy force (``""`` for a dead force).
        predicted_objective: The predicted enemy objective, one of :data:`OBJECTIVES`
            (``""`` when none).
        orders: The orders chosen, one per own force.
        confidence: Stated confidence in [0, 1], None when not given.
        status: ``ok`` or why the answer was invalid.
        raw_text: The model's answer (LLM agents only).
        extra: Free-form extras (not stored).
        action_probs: (K, 6) probability of each enemy force's order kind over
            :data:`ACTION_KINDS` (NaN rows: no prediction, e.g. a dead force); None when not
            given or invalid.
        objective_probs: (3,) probability of each enemy objective over :data:`OBJECTIVES`;
            None when not given or invalid.
        objective: The agent's own objective this turn (one of :data:`OBJECTIVES`, ``""`` when
            it states none); the opponent's objective prediction is scored against it.
    """

    beliefs: np.ndarray | None
    predicted_actions: tuple[str, ...]
    predicted_objective: str
    orders: list[Order]
    confidence: float | None
    status: str = "ok"
    raw_text: str | None = None
    extra: dict = field(default_factory=dict)
    action_probs: np.ndarray | None = None
    objective_probs: np.ndarray | None = None
    objective: str = ""

    # The design's names (``docs/v10``: action_predictions, objective_prediction, chosen_orders).
    @property
    def action_predictions(self) -> dict[str, dict[str, float]]:
        """``{"E0": {"move": 0.4, ...}, ...}`` for the forces with a distribution."""
        if self.action_probs is None:
            return {}
        return {f"E{j}": dict(zip(ACTION_KINDS, map(float, row), strict=True))
                for j, row in enumerate(self.action_probs) if np.isfinite(row).all()}

    @property
    def objective_prediction(self) -> dict[str, float]:
        """``{"hunt_sovereign": 0.6, "dominate": 0.2, "defend": 0.2}`` (empty when none)."""
        if self.objective_probs is None:
            return {}
        return dict(zip(OBJECTIVES, map(float, self.objective_probs), strict=True))

    @property
    def chosen_orders(self) -> list[Order]:
        return self.orders


class Agent(abc.ABC):
    """An agent plays one side of one game (it may keep state between turns)."""

    name: str = "agent"

    def deploy(self, player_id: int, rules: Rules, rng: np.random.Generator) -> Deployment:
        """Home-row columns, powers and sovereign; default: uniform valid vector."""
        return random_deployment(rules.board_size, rules.num_forces, rng)

    @abc.abstractmethod
    def observe_and_plan(self, player_id: int, observation: Observation,
                         rng: np.random.Generator) -> tuple[list[Order], AgentReport]:
        """Orders for every own force (dead ones: hold) and the turn's report."""


# -- beliefs ---------------------------------------------------------------------------------
class Posterior:
    """Exact posterior over the enemy power vector.

    The prior is uniform over :func:`valid_power_vectors`. A reveal's likelihood is
    ``accuracy`` for the exact value or ``1 - accuracy`` for the band, the same for every
    value the report allows and 0 otherwise; a fight's outcome is a deterministic function of
    the powers. So the posterior is the prior restricted to the consistent vectors.
    """

    def __init__(self, num_forces: int) -> None:
        self.vectors = valid_power_vectors(num_forces)
        self.mask = np.ones(len(self.vectors), dtype=bool)
        self._reveals = 0
        self._fights = 0

    def update(self, obs: Observation) -> None:
        v = self.vectors
        for rev in obs.reveals[self._reveals:]:
            col = v[:, rev.enemy]
            self.mask &= (col >= rev.low) & (col <= rev.high)
        for fight in obs.fights[self._fights:]:
            lo, hi = fight.bounds()
            col = v[:, fight.enemy]
            self.mask &= (col >= lo) & (col <= hi)
        self._reveals, self._fights = len(obs.reveals), len(obs.fights)
        if not self.mask.any():  # only when an opponent broke the rules it was told
            self.mask[:] = True

    def marginals(self) -> np.ndarray:
        """(K, 5) marginal distribution of each enemy force's power."""
        sub = self.vectors[self.mask]
        return (sub[:, :, None] == np.arange(1, 6, dtype=np.int8)).mean(axis=0)


def flat_beliefs(num_forces: int) -> np.ndarray:
    return np.full((num_forces, len(POWERS)), 1.0 / len(POWERS))


def reveal_beliefs(obs: Observation) -> np.ndarray:
    """Beliefs from the latest reveal of each force (uniform within it), flat otherwise."""
    out = flat_beliefs(obs.rules.num_forces)
    for rev in obs.reveals:
        row = np.zeros(len(POWERS))
        row[rev.low - 1:rev.high] = 1.0
        out[rev.enemy] = row / row.sum()
    return out


def persistence_predictions(obs: Observation) -> tuple[str, ...]:
    out = []
    for j, alive in enumerate(obs.enemy_alive):
        if not alive:
            out.append("")
            continue
        d = obs.enemy_moved[j] if obs.enemy_moved else (0, 0)
        step = abs(d[0]) + abs(d[1])
        out.append("charge" if step >= 2 else "move" if step == 1 else "hold")
    return tuple(out)


def confidence_of(beliefs: np.ndarray, alive: tuple[bool, ...]) -> float:
    mask = np.asarray(alive, dtype=bool)
    if not mask.any():
        return 1.0
    return float(beliefs[mask].max(axis=1).mean())


def action_distribution(labels: tuple[str, ...], weight: float) -> np.ndarray:
    """(K, 6): ``weight`` on each force's label plus (1 - weight) spread evenly over the six
    kinds; NaN rows for forces without a label (dead)."""
    n = len(ACTION_KINDS)
    out = np.full((len(labels), n), np.nan)
    for j, label in enumerate(labels):
        if label:
            out[j] = (1.0 - weight) / n
            out[j, ACTION_KINDS.index(label)] += weight
    return out


def uniform_actions(alive: tuple[bool, ...]) -> np.ndarray:
    return action_distribution(tuple("hold" if a else "" for a in alive), 0.0)


def _mode(probs: np.ndarray, names: tuple[str, ...]) -> str:
    return names[int(np.argmax(probs))] if np.isfinite(probs).all() else ""


def labels_of(action_probs: np.ndarray) -> tuple[str, ...]:
    """The most likely kind per force (``""`` for a NaN row); ties: the first kind."""
    return tuple(_mode(row, ACTION_KINDS) for row in action_probs)


def objective_label(objective_probs: np.ndarray | None) -> str:
    return "" if objective_probs is None else _mode(objective_probs, OBJECTIVES)


def objective_from_moves(obs: Observation) -> np.ndarray:
    """Tiers 3-4's objective prediction, read from the enemy's last moves.

    ``a``: share of living enemy forces whose last move brought them closer to our nearest
    force; ``h``: share of those that came closer to our sovereign and have it as (one of) our
    nearest forces. Then p = 0.1 + 0.7 * (a h, a (1 - h), 1 - a) over (hunt_sovereign,
    dominate, defend). On turn 1 (no move seen yet): (0.25, 0.5, 0.25).
    """
    if obs.turn == 1 or not obs.enemy_moved:
        return np.array([0.25, 0.5, 0.25])
    own = [p for p, alive in zip(obs.own_pos, obs.own_alive, strict=True) if alive]
    enemies = [j for j, alive in enumerate(obs.enemy_alive) if alive]
    if not own or not enemies:
        return np.full(len(OBJECTIVES), 1.0 / len(OBJECTIVES))
    sov = obs.own_pos[obs.sovereign] if obs.own_alive[obs.sovereign] else None
    advancing = toward_sov = 0
    for j in enemies:
        now = obs.enemy_pos[j]
        d = obs.enemy_moved[j]
        prev = (now[0] - d[0], now[1] - d[1])
        near_now = min(_manhattan(now, f) for f in own)
        if near_now < min(_manhattan(prev, f) for f in own):
            advancing += 1
            if sov is not None and _manhattan(now, sov) < _manhattan(prev, sov) \
                    and _manhattan(now, sov) == near_now:
                toward_sov += 1
    a = advancing / len(enemies)
    h = toward_sov / advancing if advancing else 0.0
    return 0.1 + 0.7 * np.array([a * h, a * (1.0 - h), 1.0 - a])


def sovereign_threatened(obs: Observation, reach: int = 2) -> bool:
    """An enemy force stands within ``reach`` steps (Manhattan) of our living sovereign."""
    if not obs.own_alive[obs.sovereign]:
        return False
    sov = obs.own_pos[obs.sovereign]
    return any(_manhattan(sov, obs.enemy_pos[j]) <= reach
               for j, alive in enumerate(obs.enemy_alive) if alive)


# -- geometry helpers ------------------------------------------------------------------------
def _dest(pos: tuple[int, int], d: str, n: int, steps: int = 1) -> tuple[int, int] | None:
    r, c = pos
    dr, dc = DIRS[d]
    out = None
    for _ in range(steps):
        nr, nc = r + dr, c + dc
        if not (0 <= nr < n and 0 <= nc < n):
            break
        r, c = nr, nc
        out = (r, c)
    return out


def _manhattan(a, b) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _toward(pos: tuple[int, int], target: tuple[int, int], n: int) -> str | None:
    best, best_d = None, _manhattan(pos, target)
    for d in ("N", "S", "E", "W"):
        nxt = _dest(pos, d, n)
        if nxt is not None and _manhattan(nxt, target) < best_d:
            best, best_d = d, _manhattan(nxt, target)
    return best


def _inward(pos: tuple[int, int], n: int) -> str | None:
    centre = (n // 2, n // 2)
    return _toward(pos, centre, n)


def _straight_dir(a, b) -> str | None:
    """Direction from a to b when they share a row or column."""
    if a[0] == b[0]:
        return "E" if b[1] > a[1] else "W"
    if a[1] == b[1]:
        return "S" if b[0] > a[0] else "N"
    return None


def _noose_soon(obs: Observation) -> bool:
    r = obs.rules
    return any(r.noose_turn(t) for t in (obs.turn, obs.turn + 1))


# -- tiers -----------------------------------------------------------------------------------
