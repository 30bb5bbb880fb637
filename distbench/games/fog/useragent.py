"""A user's agent class behind the checks of what it states (:class:`UserAgent`), and the seed
tool's dict shapes it may answer in (:mod:`.agents` re-exports it: import from there)."""

from __future__ import annotations

import inspect
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from distbench.games.fog.agent_base import (
    ACTION_KINDS,
    OBJECTIVES,
    TOLERANCE,
    Agent,
    AgentReport,
    labels_of,
    objective_label,
)
from distbench.games.fog.rules import (
    DIRS,
    HOLD,
    ORDER_KINDS,
    POWERS,
    Deployment,
    Observation,
    Order,
    Rules,
    random_deployment,
    seed_force_id,
)


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
