"""Agents of the fog-of-war skirmish: the interface, the scripted tiers and the exact posterior.

Every agent deploys, then each turn returns one order per force and an :class:`AgentReport`:
its beliefs over each enemy force's power (K x 5, rows sum to 1), a predicted order kind per
enemy force, a predicted objective and a confidence (mean of the top belief over the living
enemy forces, for the scripted tiers).

Tiers:
    1. ``tier1`` random: a uniformly random legal order per force; flat beliefs.
    2. ``tier2`` greedy: every force but the sovereign walks to the nearest enemy and attacks
       it; beliefs read from its scout reports only.
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
(2 cells: charge, 1: move, 0: hold); Tier 2 predicts ``move``; Tier 1 guesses at random.
"""

from __future__ import annotations

import abc
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
    valid_power_vectors,
)

TIERS: tuple[str, ...] = ("tier1", "tier2", "tier3", "tier4")
OBJECTIVES = ("attack", "defend", "hunt_sovereign", "scout")


@dataclass(slots=True)
class AgentReport:
    """What an agent states on a turn (a row of ``fog_reports``).

    Attributes:
        beliefs: (K, 5) probabilities of enemy force k having power 1..5; None if invalid.
        predicted_actions: Predicted order kind per enemy force (``""`` for a dead force).
        predicted_objective: One of :data:`OBJECTIVES` (free text for an LLM).
        orders: The orders chosen, one per own force.
        confidence: Stated confidence in [0, 1], None when not given.
        status: ``ok`` or why the answer was invalid.
        raw_text: The model's answer (LLM agents only).
    """

    beliefs: np.ndarray | None
    predicted_actions: tuple[str, ...]
    predicted_objective: str
    orders: list[Order]
    confidence: float | None
    status: str = "ok"
    raw_text: str | None = None
    extra: dict = field(default_factory=dict)


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
        return orders, AgentReport(beliefs, preds, OBJECTIVES[int(rng.integers(4))], orders,
                                   confidence_of(beliefs, obs.enemy_alive))


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
        return orders, AgentReport(beliefs, preds, "attack", orders,
                                   confidence_of(beliefs, obs.enemy_alive))

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
        objective = "scout" if any(o[0] == "scout" for o in orders) else "hunt_sovereign"
        return orders, AgentReport(beliefs, preds, objective, orders,
                                   confidence_of(beliefs, obs.enemy_alive))

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


def make_agent(name: str) -> Agent:
    """A fresh scripted agent by tier name."""
    try:
        return AGENTS[name]()
    except KeyError:
        raise ValueError(f"unknown scripted agent {name!r}; known: {', '.join(AGENTS)}") from None
