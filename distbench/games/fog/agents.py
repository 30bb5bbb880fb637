"""Agents of the fog-of-war skirmish: the interface, the scripted tiers and the exact posterior.

Every agent deploys, then each turn returns one order per force and an :class:`AgentReport`:
its beliefs over each enemy force's power (K x 5, rows sum to 1), a distribution over the
order kinds of each enemy force (K x 6 over :data:`ACTION_KINDS`: the design's five actions
plus ``hold``, which this game has), a distribution over the enemy's objective (over
:data:`OBJECTIVES`), its own objective of the turn (what the opponent's prediction is scored
against), point predictions (labels) and a confidence (mean of the top belief over the living
enemy forces, for the scripted tiers).

Objectives (the design's three; the rules of ``rules.py`` give three ways to win):
    - ``hunt_sovereign``: go for the enemy sovereign (its death wins at once);
    - ``dominate``: destroy enemy forces whichever they are (annihilation, or more surviving
      power at the turn limit);
    - ``defend``: keep one's own sovereign out of reach.
The scripted tiers' behaviour is not changed by objectives; each states the objective its rules
pursue that turn: Tier 1 none (``""``: it plays at random, so the opponent's objective
prediction is not scored); Tier 2 ``dominate`` (it attacks the nearest enemy, whichever it is);
Tiers 3-4 ``defend`` when an enemy is within 2 steps of their sovereign (which then evades),
else ``dominate`` (they hunt the weakest expected enemy). No scripted tier pursues
``hunt_sovereign`` (the enemy sovereign is hidden and they do not infer it); a model or a
user's agent may.

Tiers:
    1. ``tier1`` random: a uniformly random legal order per force; flat beliefs, uniform action
       and objective distributions (its point predictions are draws from them).
    2. ``tier2`` greedy: every force but the sovereign walks to the nearest enemy and attacks
       it; beliefs read from its scout reports only; it expects the enemy to play like itself
       (``move`` 0.5, every other kind 0.1; ``dominate`` 0.6, the others 0.2).
    3. ``tier3`` ``bayesian_hunter``: the exact posterior over the enemy power vector (uniform
       prior over the vectors the power rule allows, i.e. how scripted agents deploy,
       conditioned on every reveal and every fight); attacks when its win probability beats
       its loss probability, scouts uncertain enemies in range, otherwise hunts the weakest
       expected enemy; the sovereign stays in the safe zone and fortifies.
    4. ``tier4`` lookahead: Tier 3's posterior plus a one-ply expectimax per force: each
       candidate order is scored by its expectation over the enemy's powers (the posterior)
       and over each nearby enemy's reply (stay / fortify / step towards us, equally likely),
       counting material won and lost, the sovereign's safety and the noose.

Predicted opponent actions of Tiers 3-4 repeat each enemy force's last observed displacement
(2 cells: charge, 1: move, 0: hold) with probability 0.6 + 0.4/6, every other kind 0.4/6.
Their objective prediction reads the enemy's last moves (:func:`objective_from_moves`).

The design's names of the strategies (:data:`STRATEGIES`: ``random``, ``greedy``,
``bayesian_hunter``, ``lookahead``) are accepted wherever a tier name is, and ``mock:NAME``
(the fog seed's ``--agent mock:tier3``) is that strategy behind the text interface
(``text.MockLLMAgent``, registered in :data:`WRAPPERS`). A user's own agent class, named
``module:Class``, plays like a tier (:func:`load_agent_class`, :class:`UserAgent`); it may use
the fog seed's forms (:class:`UserAgent`).
"""

from __future__ import annotations

import abc
import importlib
import inspect
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from distbench.games.fog.rules import (
    DIRS,
    HOLD,
    ORDER_KINDS,
    POWERS,
    Deployment,
    Observation,
    Order,
    Rules,
    chebyshev,
    random_deployment,
    seed_force_id,
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
class RandomAgent(Agent):
    """Tier 1."""

    name = "tier1"

    def observe_and_plan(self, player_id, observation, rng):
        obs = observation
        k = obs.rules.num_forces
        orders: list[Order] = []
        for i in range(k):
            if not obs.own_alive[i]:
                orders.append(HOLD)
                continue
            options: list[Order] = [HOLD, ("fortify", None), ("ambush", None)]
            for d in DIRS:
                if _dest(obs.own_pos[i], d, obs.rules.board_size) is not None:
                    options += [("move", d), ("charge", d)]
            if obs.rules.scouting:
                options += [("scout", j) for j in range(k) if obs.enemy_alive[j]]
            orders.append(options[int(rng.integers(len(options)))])
        beliefs = flat_beliefs(k)
        preds = tuple(ORDER_KINDS[int(rng.integers(len(ORDER_KINDS)))] if a else ""
                      for a in obs.enemy_alive)
        objective = OBJECTIVES[int(rng.integers(len(OBJECTIVES)))]
        return orders, AgentReport(
            beliefs, preds, objective, orders, confidence_of(beliefs, obs.enemy_alive),
            action_probs=uniform_actions(obs.enemy_alive),
            objective_probs=np.full(len(OBJECTIVES), 1.0 / len(OBJECTIVES)), objective="")


class GreedyAgent(Agent):
    """Tier 2."""

    name = "tier2"

    def beliefs(self, obs: Observation) -> np.ndarray:
        return reveal_beliefs(obs)

    def observe_and_plan(self, player_id, observation, rng):
        obs = observation
        n = obs.rules.board_size
        orders: list[Order] = []
        for i in range(obs.rules.num_forces):
            orders.append(self._order(obs, i, n) if obs.own_alive[i] else HOLD)
        beliefs = self.beliefs(obs)
        preds = tuple("move" if a else "" for a in obs.enemy_alive)
        return orders, AgentReport(
            beliefs, preds, "dominate", orders, confidence_of(beliefs, obs.enemy_alive),
            action_probs=action_distribution(preds, 0.4),
            objective_probs=np.array([0.2, 0.6, 0.2]), objective="dominate")

    def _order(self, obs: Observation, i: int, n: int) -> Order:
        pos = obs.own_pos[i]
        if i == obs.sovereign:
            d = _inward(pos, n) if obs.rules.on_ring(*pos) else None
            return ("move", d) if d else ("fortify", None)
        enemies = [j for j, a in enumerate(obs.enemy_alive) if a]
        if not enemies:
            return HOLD
        j = min(enemies, key=lambda j: (_manhattan(pos, obs.enemy_pos[j]), j))
        target = obs.enemy_pos[j]
        dist = _manhattan(pos, target)
        line = _straight_dir(pos, target)
        if dist == 2 and line:
            return ("charge", line)
        d = _toward(pos, target, n)
        return ("move", d) if d else HOLD


class BayesianHunter(Agent):
    """Tier 3 (``bayesian_hunter``)."""

    name = "tier3"

    def __init__(self) -> None:
        self.posterior: Posterior | None = None
        self.scouted: set[int] = set()

    def deploy(self, player_id: int, rules: Rules, rng: np.random.Generator) -> Deployment:
        """A uniform valid power vector (so the opponent's prior stays exact); the strongest
        force is the sovereign."""
        dep = random_deployment(rules.board_size, rules.num_forces, rng)
        return Deployment(dep.cols, dep.powers, int(np.argmax(dep.powers)))

    def _sovereign_order(self, obs: Observation, pos: tuple[int, int]) -> Order:
        """Leave the ring, then keep away from the nearest enemy inside the safe zone."""
        n = obs.rules.board_size
        if obs.rules.on_ring(*pos):
            d = _inward(pos, n)
            return ("move", d) if d else ("fortify", None)
        enemies = [obs.enemy_pos[j] for j, a in enumerate(obs.enemy_alive) if a]
        near = min(_manhattan(pos, e) for e in enemies)
        if near > 2:
            return ("fortify", None)
        best, best_d = None, near
        for d in DIRS:
            nxt = _dest(pos, d, n)
            if nxt is None or obs.rules.on_ring(*nxt) or nxt in obs.own_pos:
                continue
            nd = min(_manhattan(nxt, e) for e in enemies)
            if nd > best_d:
                best, best_d = d, nd
        return ("move", best) if best else ("fortify", None)

    def beliefs(self, obs: Observation) -> np.ndarray:
        if self.posterior is None:
            self.posterior = Posterior(obs.rules.num_forces)
        self.posterior.update(obs)
        return self.posterior.marginals()

    def observe_and_plan(self, player_id, observation, rng):
        obs = observation
        beliefs = self.beliefs(obs)
        orders = self.plan(obs, beliefs, rng)
        preds = persistence_predictions(obs)
        objective_probs = objective_from_moves(obs)
        return orders, AgentReport(
            beliefs, preds, objective_label(objective_probs), orders,
            confidence_of(beliefs, obs.enemy_alive),
            action_probs=action_distribution(preds, 0.6), objective_probs=objective_probs,
            objective="defend" if sovereign_threatened(obs) else "dominate")

    def plan(self, obs: Observation, beliefs: np.ndarray, rng) -> list[Order]:
        n = obs.rules.board_size
        k = obs.rules.num_forces
        values = np.arange(1, 6)
        mean = beliefs @ values
        ent = -(beliefs * np.log(np.clip(beliefs, 1e-12, 1))).sum(axis=1)
        enemies = [j for j in range(k) if obs.enemy_alive[j]]
        orders: list[Order] = []
        scouts = 0
        for i in range(k):
            pos = obs.own_pos[i]
            if not obs.own_alive[i] or not enemies:
                orders.append(HOLD)
                continue
            if i == obs.sovereign:
                orders.append(self._sovereign_order(obs, pos))
                continue
            power = obs.own_power[i]
            best, best_gain = None, 0.0
            for j in enemies:
                epos = obs.enemy_pos[j]
                dist = _manhattan(pos, epos)
                line = _straight_dir(pos, epos)
                if dist == 1:
                    eff, order = power, ("move", line)
                elif dist == 2 and line:
                    eff, order = power + 1, ("charge", line)
                else:
                    continue
                p_win = beliefs[j, values < eff].sum()
                p_loss = beliefs[j, values > eff].sum()
                gain = p_win - p_loss
                if gain > best_gain:
                    best, best_gain = order, gain
            if best is not None:
                orders.append(best)
                continue
            if obs.rules.scouting and scouts < 2:
                cands = [j for j in enemies if ent[j] > 0.5 and j not in self.scouted
                         and chebyshev(pos, obs.enemy_pos[j]) <= obs.rules.scout_range]
                if cands:
                    j = max(cands, key=lambda j: (ent[j], -j))
                    self.scouted.add(j)
                    scouts += 1
                    orders.append(("scout", j))
                    continue
            # hunt: weakest expected enemy that we beat on average
            j = min(enemies, key=lambda j: (mean[j] - power >= 0, _manhattan(pos, obs.enemy_pos[j]), j))
            epos = obs.enemy_pos[j]
            if _manhattan(pos, epos) <= 2 and mean[j] >= power:
                orders.append(("fortify", None))
                continue
            d = _toward(pos, epos, n)
            orders.append(("move", d) if d else ("fortify", None))
        return orders


class LookaheadAgent(BayesianHunter):
    """Tier 4: Tier 3's posterior plus a one-ply expectimax per force."""

    name = "tier4"
    SOVEREIGN_VALUE = 12.0

    MARGIN = 0.3

    def plan(self, obs: Observation, beliefs: np.ndarray, rng) -> list[Order]:
        """Tier 3's orders, each replaced by the expectimax best order when that scores
        ``MARGIN`` more than it (scouting orders are kept)."""
        base = super().plan(obs, beliefs, rng)
        n = obs.rules.board_size
        k = obs.rules.num_forces
        values = np.arange(1, 6)
        enemies = [j for j in range(k) if obs.enemy_alive[j]]
        alive_enemies = max(1, len(enemies))
        noose = _noose_soon(obs)
        orders: list[Order] = []
        for i in range(k):
            pos = obs.own_pos[i]
            if not obs.own_alive[i] or not enemies or base[i][0] == "scout":
                orders.append(base[i])
                continue
            power = obs.own_power[i]
            sov = i == obs.sovereign
            my_value = power + (self.SOVEREIGN_VALUE if sov else 0.0)
            cands: list[tuple[Order, tuple[int, int], bool]] = [
                (HOLD, pos, False), (("fortify", None), pos, False), (("ambush", None), pos, False)]
            for d in DIRS:
                one = _dest(pos, d, n)
                if one is not None:
                    cands.append((("move", d), one, True))
                two = _dest(pos, d, n, 2)
                if two is not None and two != one:
                    cands.append((("charge", d), two, True))
            scored: dict[Order, float] = {}
            for order, cell, moves in cands:
                val = self._score(obs, beliefs, values, enemies, alive_enemies, order, cell,
                                  moves, power, my_value, sov)
                if obs.rules.on_ring(*cell):
                    val -= (my_value + 1.0) if noose else 0.05
                scored[order] = val
            best = max(scored, key=lambda o: scored[o])
            keep = base[i] if base[i] in scored else HOLD
            orders.append(best if scored[best] > scored[keep] + self.MARGIN else base[i])
        return orders

    def _score(self, obs, beliefs, values, enemies, alive_enemies, order, cell, moves, power,
               my_value, sov) -> float:
        n = obs.rules.board_size
        kind = order[0]
        val = 0.0
        # fights this order starts: moving onto an enemy's cell (it stays, may fortify)
        for j in enemies:
            epos = obs.enemy_pos[j]
            e_value = float(beliefs[j] @ values) + self.SOVEREIGN_VALUE / alive_enemies
            dist_after = chebyshev(cell, epos)
            if moves and cell == epos:
                eff = power + (1 if kind == "charge" else 0)
                # enemy reply: stay (eff p) or fortify (eff p + 1), equally likely
                p_win = 0.5 * (beliefs[j, values < eff].sum() + beliefs[j, values + 1 < eff].sum())
                p_loss = 0.5 * (beliefs[j, values > eff].sum() + beliefs[j, values + 1 > eff].sum())
                p_tie = 1.0 - p_win - p_loss
                val += p_win * e_value - p_loss * my_value - p_tie * (my_value - e_value)
            elif _manhattan(cell, epos) <= 2:
                # enemy reply: it attacks our cell (move or charge), or not (half the time)
                my_eff = power + (1 if kind == "fortify" else 0)
                atk = values + (1 if _manhattan(cell, epos) == 2 else 0)
                if kind == "ambush":
                    p_win = beliefs[j, values <= power].sum()
                    p_loss = 1.0 - p_win
                else:
                    p_win = beliefs[j, atk < my_eff].sum()
                    p_loss = beliefs[j, atk > my_eff].sum()
                p_tie = 1.0 - p_win - p_loss
                w = 0.5 / max(1, dist_after)
                val += w * (p_win * e_value - p_loss * my_value - p_tie * (my_value - e_value))
        # position: approach the best expected prey, the sovereign keeps away
        dists = [_manhattan(cell, obs.enemy_pos[j]) for j in enemies]
        if sov:
            val += 0.1 * min(dists)
        else:
            prey = [float(beliefs[j, values < power + 1].sum()) for j in enemies]
            val -= 0.05 * min(d * (1.5 - p) for d, p in zip(dists, prey, strict=True))
        centre = (n - 1) / 2
        val -= 0.01 * (abs(cell[0] - centre) + abs(cell[1] - centre))
        return val


AGENTS: dict[str, type[Agent]] = {
    "tier1": RandomAgent, "tier2": GreedyAgent, "tier3": BayesianHunter, "tier4": LookaheadAgent,
}

_REF = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


def is_agent_ref(text: object) -> bool:
    """Whether ``text`` names an agent class as ``module:Class`` (``mypkg.agents:MyAgent``)."""
    return isinstance(text, str) and _REF.match(text) is not None


def load_agent_class(ref: str) -> type:
    """Imports the agent class ``module:Class`` and checks its API.

    The class needs ``observe_and_plan(player_id, observation, rng) -> (orders,
    AgentReport)`` (``deploy(player_id, rules, rng) -> Deployment`` is optional) and must be
    constructible without arguments; subclassing :class:`Agent` gives both.

    Raises:
        ValueError: one line naming what is wrong (not ``module:Class``, module not
            importable, no such class, not an agent class).
    """
    if not is_agent_ref(ref):
        raise ValueError(f"agent {ref!r}: name an agent class as module:Class "
                         "(such as mypkg.agents:MyAgent)")
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's to fix
        raise ValueError(f"agent {ref!r}: cannot import module {module_name!r} "
                         f"({type(exc).__name__}: {exc}); is it on PYTHONPATH?") from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValueError(f"agent {ref!r}: module {module_name!r} has no {attr!r}")
    api = ("it needs observe_and_plan(player_id, observation, rng) -> (orders, AgentReport); "
           "subclass distbench.games.fog.agents.Agent")
    if not isinstance(cls, type) or not callable(getattr(cls, "observe_and_plan", None)):
        raise ValueError(f"agent {ref!r}: not an agent class ({api})")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise ValueError(f"agent {ref!r}: abstract class (implement {missing})")
    try:
        inspect.signature(cls).bind()
    except TypeError:
        raise ValueError(f"agent {ref!r}: the class must be constructible without "
                         "arguments") from None
    except ValueError:  # no signature to read: constructed at play time
        pass
    return cls


WRAPPERS: dict[str, type[Agent]] = {}
"""``prefix`` -> a class wrapping an agent (``mock`` -> ``text.MockLLMAgent``, registered by
``distbench.games.fog.text``): ``mock:tier3`` is ``MockLLMAgent(make_agent("tier3"))``."""
MOCK_PREFIX = "mock:"


def check_agent(name: str) -> str:
    """The canonical name of a scripted agent (a tier or a :data:`STRATEGIES` name: its tier;
    ``mock:NAME``: ``mock:`` and NAME's canonical name) or a checked ``module:Class``
    (ValueError: one line)."""
    if isinstance(name, str) and name.startswith(MOCK_PREFIX):
        inner = name[len(MOCK_PREFIX):]
        if inner.startswith(MOCK_PREFIX) or not inner:
            raise ValueError(f"agent {name!r}: mock: takes a tier, a strategy name or "
                             "module:Class, such as mock:tier3")
        return MOCK_PREFIX + check_agent(inner)
    if name in AGENTS:
        return name
    if name in STRATEGIES:
        return STRATEGIES[name]
    if is_agent_ref(name):
        load_agent_class(name)
        return name
    raise ValueError(f"unknown agent {name!r}; use one of {', '.join(AGENTS)} "
                     f"({', '.join(STRATEGIES)}) or an agent class as module:Class")


def make_agent(name: str) -> Agent:
    """A fresh agent: a tier (``tier1``..``tier4``), a strategy name of the design
    (:data:`STRATEGIES`) or a user's class ``module:Class`` (wrapped in :class:`UserAgent`)."""
    if name in AGENTS or name in STRATEGIES:
        return AGENTS[STRATEGIES.get(name, name)]()
    if name.startswith(MOCK_PREFIX):
        if "mock" not in WRAPPERS:
            raise ValueError(f"agent {name!r}: import distbench.games.fog.text first (it "
                             "registers mock:)")
        return WRAPPERS["mock"](make_agent(name[len(MOCK_PREFIX):]))
    if is_agent_ref(name):
        return UserAgent(name, load_agent_class(name)())
    raise ValueError(f"unknown scripted agent {name!r}; known: {', '.join(AGENTS)} "
                     f"({', '.join(STRATEGIES)}) or module:Class")


# -- checking what an agent states -----------------------------------------------------------
def check_distribution(values: object, size: int) -> np.ndarray | None:
    """``size`` non-negative finite numbers summing to 1 within :data:`TOLERANCE`,
    renormalised; None otherwise."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if arr.shape != (size,) or not np.isfinite(arr).all() or (arr < 0).any() \
            or abs(arr.sum() - 1.0) > TOLERANCE:
        return None
    return arr / arr.sum()


def check_rows(values: object, alive: tuple[bool, ...], size: int,
               missing_ok: bool) -> np.ndarray | None:
    """(K, size) distributions, one per enemy force; a dead force's row (and a living force's
    when ``missing_ok``) may be None or NaN (stored as NaN). None when any row is invalid."""
    k = len(alive)
    out = np.full((k, size), np.nan)
    if values is None or isinstance(values, str | bytes) or not hasattr(values, "__len__") \
            or len(values) != k:
        return None
    for j in range(k):
        row = values[j]
        if _blank(row):
            if alive[j] and not missing_ok:
                return None
            continue
        arr = check_distribution(row, size)
        if arr is None:
            return None
        out[j] = arr
    return out


def _blank(row: object) -> bool:
    """None, or a row of NaNs (no distribution)."""
    if row is None:
        return True
    try:
        arr = np.asarray(row, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return arr.ndim == 1 and arr.size > 0 and bool(np.isnan(arr).all())


def _check_orders(orders: object, k: int) -> list[Order] | None:
    if not isinstance(orders, list | tuple) or len(orders) > k:
        return None
    out: list[Order] = []
    for o in orders:
        if isinstance(o, tuple) and len(o) == 2 and isinstance(o[0], str):
            o = (o[0].lower(), o[1])  # the seed's kinds are capitalised (Move, Charge, ...)
        if not isinstance(o, tuple) or len(o) != 2 or o[0] not in ORDER_KINDS:
            return None
        kind, arg = o
        ok = (arg in DIRS if kind in ("move", "charge") and isinstance(arg, str)
              else isinstance(arg, int | np.integer) and not isinstance(arg, bool)
              if kind == "scout" else arg is None)
        if not ok:
            return None
        out.append((kind, int(arg)) if kind == "scout" else (kind, arg))
    return out + [HOLD] * (k - len(out))


@dataclass(frozen=True, slots=True)
class SeedForce:
    """A force as the fog seed's ``deploy(player, rng)`` sees it: its ``id`` (``p1_f1``)."""

    id: str


@dataclass(frozen=True, slots=True)
class SeedPlayer:
    """The player the fog seed's ``deploy(player, rng)`` receives: ``id`` (``p1``/``p2``)
    and its ``forces`` (:class:`SeedForce`, in force order)."""

    id: str
    forces: tuple[SeedForce, ...]


def seed_player_id(player: int) -> str:
    """``0`` (seat a) -> ``"p1"``, ``1`` -> ``"p2"``: the fog seed's player ids."""
    return f"p{player + 1}"


def _force_index(key: object, side: int, k: int) -> int | None:
    """The force index of a key naming one of ``side``'s forces: the seed's ``p2_f1``
    (1-based), distbench's ``E0`` / ``F0`` (0-based) or an int; None when it names none."""
    if isinstance(key, int | np.integer) and not isinstance(key, bool):
        j = int(key)
    else:
        text = str(key)
        m = re.fullmatch(r"p([12])_f(\d+)", text)
        if m:
            if int(m[1]) != side + 1:
                return None
            j = int(m[2]) - 1
        elif re.fullmatch(r"[EF]\d+", text):
            j = int(text[1:])
        else:
            return None
    return j if 0 <= j < k else None


def _keyed_row(row: object, labels: tuple) -> object:
    """One distribution given as a mapping (the seed's ``BeliefState``, ``{1: 0.2, ...}``,
    ``{"Move": 0.3, ...}``) as a list over ``labels`` (names matched without case, missing
    ones 0); anything else unchanged. A name outside ``labels`` makes it invalid."""
    row = getattr(row, "distribution", row)  # the seed's BeliefState
    if not isinstance(row, Mapping):
        return row
    index = {str(x).lower(): i for i, x in enumerate(labels)}
    out: list[object] = [0.0] * len(labels)
    for key, value in row.items():
        i = index.get(str(key).lower())
        if i is None:
            return ["invalid"]
        out[i] = value
    return out


def _keyed_rows(values: object, side: int, k: int, labels: tuple) -> object:
    """Per-force distributions given as a mapping keyed by force (``{"p2_f1": ...}``, as the
    fog seed reports them) as K rows (None for a force not named); a mapping naming no force
    of ``side`` is invalid (None); rows given as a list are read row by row."""
    if isinstance(values, Mapping):
        rows: list[object] = [None] * k
        for key, row in values.items():
            j = _force_index(key, side, k)
            if j is None:
                return None
            rows[j] = _keyed_row(row, labels)
        return rows
    if isinstance(values, list | tuple):
        return [_keyed_row(r, labels) for r in values]
    return values


def _seed_report(out: object) -> object:
    """The fog seed's ``(orders, AgentReport)`` (its report: ``beliefs``,
    ``action_predictions``, ``objective_prediction`` mappings, ``confidence``,
    ``raw_reasoning``) as distbench's; anything else unchanged."""
    if not (isinstance(out, tuple) and len(out) == 2) or isinstance(out[1], AgentReport) \
            or not hasattr(out[1], "beliefs"):
        return out
    seed = out[1]
    return out[0], AgentReport(
        getattr(seed, "beliefs", None), (), "", [], getattr(seed, "confidence", None),
        raw_text=getattr(seed, "raw_reasoning", None) or None,
        action_probs=getattr(seed, "action_predictions", None) or None,
        objective_probs=getattr(seed, "objective_prediction", None) or None,
        objective=getattr(seed, "objective", "") or "")


class UserAgent(Agent):
    """A user's agent class (``module:Class``) behind the checks every answer gets.

    Whatever the class returns is checked like a model's answer (text.py): orders that are not
    ``(kind, arg)`` pairs of known kinds -> ``bad_orders`` (every force holds); beliefs that are
    not K rows of 5 probabilities -> ``bad_beliefs`` (stored NULL); an action or objective
    distribution given but invalid -> ``bad_predictions`` / ``bad_objective`` (stored NULL);
    not a pair ``(orders, AgentReport)`` -> ``bad_report``; an exception -> ``agent_error``
    (every force holds, the exception kept as ``raw_text``). The status is the first problem
    found. Missing point predictions are read from the distributions (their most likely kind
    or objective); an own objective outside :data:`OBJECTIVES` counts as none.

    The fog seed's forms are accepted beside these (its ``benchmark.llm_agent_interface``):

    - ``deploy(player, rng)`` without ``rules`` (called with the player id, or, for a class
      with ``seed_api = True``, a :class:`SeedPlayer`), returning a :class:`Deployment` or the
      seed's ``{force_id: power}`` (``p1_f1`` or an index; home columns and sovereign are then
      drawn as a random deployment draws them);
    - a class with ``seed_api = True`` (``benchmark.llm_agent_interface.LLMAgent``) gets the
      seed's player id ``"p1"`` / ``"p2"`` and a ``random.Random`` (seeded from the game's
      generator) instead of ``0`` / ``1`` and a numpy generator;
    - the seed's report (``benchmark.telemetry.AgentReport``: ``beliefs``,
      ``action_predictions``, ``objective_prediction``, ``confidence``, ``raw_reasoning``),
      and distributions as mappings keyed by force (``p2_f1``, 1-based, or ``E0``) of
      mappings keyed by value or kind (``{1: 0.2, ...}``, the seed's ``BeliefState``,
      ``{"Move": 0.3, "Charge": 0.2, ...}``: kinds without case, a kind not named is 0);
    - order kinds in any case (``("Move", "N")``).

    The observation stays distbench's :class:`Observation` (the seed's ``GameState`` methods
    are not emulated) and orders are distbench's ``(kind, arg)`` pairs.
    """

    def __init__(self, name: str, inner: object) -> None:
        self.name = name
        self.inner = inner
        self.seed_api = bool(getattr(inner, "seed_api", False))

    def _ids(self, player_id: int, rng: np.random.Generator) -> tuple[object, object]:
        if not self.seed_api:
            return player_id, rng
        return seed_player_id(player_id), random.Random(int(rng.integers(2**62)))

    def deploy(self, player_id: int, rules: Rules, rng: np.random.Generator) -> Deployment:
        deploy = getattr(self.inner, "deploy", None)
        if deploy is None:
            return super().deploy(player_id, rules, rng)
        try:
            takes_rules = len(inspect.signature(deploy).parameters) >= 3
        except (TypeError, ValueError):
            takes_rules = True
        if takes_rules:
            dep = deploy(player_id, rules, rng)
        else:  # the fog seed's deploy(player, rng)
            who, seed_rng = self._ids(player_id, rng)
            if self.seed_api:
                who = SeedPlayer(str(who), tuple(SeedForce(seed_force_id(player_id, i))
                                                 for i in range(rules.num_forces)))
            dep = deploy(who, seed_rng)
        if isinstance(dep, Mapping):
            dep = self._seed_deployment(dep, player_id, rules, rng)
        if not isinstance(dep, Deployment):
            raise ValueError(f"agent {self.name!r}: deploy returned {type(dep).__name__}, "
                             "not a Deployment (or the seed's {force_id: power})")
        return dep

    def _seed_deployment(self, powers: Mapping, player_id: int, rules: Rules,
                         rng: np.random.Generator) -> Deployment:
        """The seed's ``{force_id: power}``, on a random deployment's columns and sovereign."""
        k = rules.num_forces
        base = random_deployment(rules.board_size, k, rng)
        out: list[int] = [0] * k
        named = set()
        for key, power in powers.items():
            j = _force_index(key, player_id, k)
            if j is None or isinstance(power, bool) or not isinstance(power, int | np.integer):
                raise ValueError(f"agent {self.name!r}: deploy: {key!r}: {power!r} is not "
                                 f"a force id ({seed_force_id(player_id, 0)}..) and a power")
            out[j] = int(power)
            named.add(j)
        if len(named) != k:
            raise ValueError(f"agent {self.name!r}: deploy names {len(named)} of the {k} "
                             "forces; each needs a power")
        return Deployment(base.cols, tuple(out), base.sovereign)

    def observe_and_plan(self, player_id, observation, rng):
        k = observation.rules.num_forces
        hold = [HOLD] * k
        who, agent_rng = self._ids(player_id, rng)
        try:
            out = _seed_report(self.inner.observe_and_plan(who, observation, agent_rng))
        except Exception as exc:  # noqa: BLE001 - failures are data
            return hold, AgentReport(None, ("",) * k, "", hold, None, "agent_error",
                                     f"{type(exc).__name__}: {exc}")
        if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], AgentReport)):
            return hold, AgentReport(None, ("",) * k, "", hold, None, "bad_report",
                                     repr(out)[:500])
        return check_report(out[0], out[1], observation)


def check_report(orders: object, report: AgentReport,
                 obs: Observation) -> tuple[list[Order], AgentReport]:
    """A user's (orders, report) checked as :class:`UserAgent` says; returns new objects."""
    k = obs.rules.num_forces
    alive = obs.enemy_alive
    enemy = 1 - obs.player
    problems: list[str] = []
    checked = _check_orders(orders, k)
    report = AgentReport(  # the fog seed's forms: mappings keyed by force, value or kind
        _keyed_rows(report.beliefs, enemy, k, POWERS), report.predicted_actions,
        report.predicted_objective, report.orders, report.confidence, report.status,
        report.raw_text, report.extra,
        _keyed_rows(report.action_probs, enemy, k, ACTION_KINDS),
        _keyed_row(report.objective_probs, OBJECTIVES), report.objective)
    if checked is None:
        problems.append("bad_orders")
        checked = [HOLD] * k
    beliefs = check_rows(report.beliefs, alive, len(POWERS), missing_ok=False)
    if beliefs is not None:  # a dead force's omitted beliefs: flat, as for a model
        beliefs[~np.isfinite(beliefs).all(axis=1)] = 1.0 / len(POWERS)
    else:
        problems.append("bad_beliefs")
    actions = None
    if report.action_probs is not None:
        actions = check_rows(report.action_probs, alive, len(ACTION_KINDS), missing_ok=True)
        if actions is None:
            problems.append("bad_predictions")
        else:
            actions[~np.asarray(alive, dtype=bool)] = np.nan
    objective_probs = None
    if report.objective_probs is not None:
        objective_probs = check_distribution(report.objective_probs, len(OBJECTIVES))
        if objective_probs is None:
            problems.append("bad_objective")
    given = tuple(report.predicted_actions or ())
    derived = labels_of(actions) if actions is not None else ("",) * k
    preds = tuple(
        (str(given[j]) if j < len(given) and str(given[j]) in ORDER_KINDS else derived[j])
        if alive[j] else "" for j in range(k))
    predicted_objective = (report.predicted_objective
                           if report.predicted_objective in OBJECTIVES
                           else objective_label(objective_probs))
    conf = report.confidence
    confidence = (float(conf) if isinstance(conf, int | float) and not isinstance(conf, bool)
                  and 0 <= conf <= 1 else None)
    own = report.objective if report.objective in OBJECTIVES else ""
    return checked, AgentReport(
        beliefs, preds, predicted_objective, checked, confidence,
        problems[0] if problems else "ok", report.raw_text, dict(report.extra or {}),
        actions, objective_probs, own)
