"""Agents of the fog-of-war skirmish: the interface, the scripted tiers and the exact posterior.
(The interface and the posterior are written in :mod:`.agent_base`, a user's agent in
:mod:`.useragent`; every name is importable from here.)

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

import importlib
import inspect
import re

import numpy as np

from distbench.games.fog.agent_base import (  # noqa: F401 - the agents' names, importable from here
    ACTION_KINDS,
    OBJECTIVES,
    STRATEGIES,
    TIERS,
    TOLERANCE,
    Agent,
    AgentReport,
    Posterior,
    _dest,
    _inward,
    _manhattan,
    _mode,
    _noose_soon,
    _straight_dir,
    _toward,
    action_distribution,
    confidence_of,
    flat_beliefs,
    labels_of,
    objective_from_moves,
    objective_label,
    persistence_predictions,
    reveal_beliefs,
    sovereign_threatened,
    uniform_actions,
)
from distbench.games.fog.rules import (
    DIRS,
    HOLD,
    ORDER_KINDS,
    Deployment,
    Observation,
    Order,
    Rules,
    chebyshev,
    random_deployment,
)
from distbench.games.fog.useragent import (  # noqa: F401 - likewise
    SeedForce,
    SeedPlayer,
    UserAgent,
    check_distribution,
    check_report,
    check_rows,
    seed_player_id,
)


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
