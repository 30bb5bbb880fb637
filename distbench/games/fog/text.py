"""The text interface of the fog-of-war skirmish: observation -> prompt, answer -> orders.

The model answers one JSON object::

    {"orders": {"F0": "move S", "F1": "scout E2", "F2": "fortify", ...},
     "beliefs": {"E0": [0.2, 0.2, 0.2, 0.2, 0.2], ...},
     "predictions": {"E0": {"move": 0.6, "hold": 0.3, "charge": 0.1}, ...},
     "objective": {"hunt_sovereign": 0.2, "dominate": 0.5, "defend": 0.3},
     "my_objective": "dominate", "confidence": 0.6}

``predictions`` gives, per enemy force, a distribution over its order kinds this turn (hold,
move, charge, scout, fortify, ambush; kinds left out have probability 0; a bare kind such as
``"move"`` is probability 1 on it); ``objective`` a distribution over the enemy's objective
(hunt_sovereign, dominate, defend; a bare name is probability 1 on it); ``my_objective`` the
model's own objective, against which the opponent's prediction is scored. The design's key
names ``action_predictions`` and ``objective_prediction`` are read too.

Validation (:func:`parse_answer`): no JSON object -> ``no_json``; orders that are not a map of
known forces to known orders -> ``bad_orders`` (every force holds); beliefs missing, not five
non-negative numbers per living enemy force, or not summing to 1 within 0.05 -> ``bad_beliefs``
(orders are kept, beliefs stored as NULL; rows within tolerance are renormalised); predictions
or objective given but not distributions over the known names (unknown name, negative, or not
summing to 1 within 0.05) -> ``bad_predictions`` / ``bad_objective`` (stored as NULL, the rest
kept). A force without an order holds; dead forces' beliefs default to flat when omitted; a
living force without a prediction is not scored; an own objective outside the three counts as
none. The status is the first problem found, ``ok`` when none.
"""

from __future__ import annotations

import json
import re

import numpy as np

from distbench.games.answers.reasoning import COT_COMPLETION_CUE, COT_INSTRUCTION, split_final
from distbench.games.fog.agents import (
    ACTION_KINDS,
    OBJECTIVES,
    TOLERANCE,
    WRAPPERS,
    Agent,
    AgentReport,
    flat_beliefs,
    labels_of,
    make_agent,
    objective_label,
)
from distbench.games.fog.rules import DIRS, HOLD, Observation, Order, format_order
from distbench.llm.base import Request, Response

PARSER_VERSION = "fog.1"
"""The version of :func:`parse_answer` (an LLM agent's answer read into orders and a report),
stored with every report it read (``fog_reports.parser_version``). Bump the number when a
change can change what some text reads as (orders, beliefs, predictions, status); a refactor
that keeps every output does not. ``distbench rescore`` re-reads stored answers with the
current version."""

SYSTEM = (
    "You command forces in a two-player grid war game with hidden powers. Reply with one JSON "
    "object only."
)


def render_observation(obs: Observation) -> str:
    """The observation as text (no hidden information: it renders only an Observation)."""
    r = obs.rules
    lines = [
        f"Turn {obs.turn} of {r.max_turns}. Board {r.board_size}x{r.board_size}, rows 0-{r.board_size - 1}"
        f" (N = towards row 0). You are player {'ab'[obs.player]}.",
        "Rules: powers 1-5, each value used at most twice per side. Forces meeting in a cell "
        "fight; higher effective power wins, a tie removes both. charge = 2 steps, +1 when it "
        "moves into a fight; fortify = +1 when fighting without moving; ambush = strike first "
        "at an enemy ending next to you (you win ties); "
        + (f"scout EJ = reveal enemy J within distance {r.scout_range} (exact with "
           f"probability {r.scout_accuracy:g}, else a band: low 1-2, mid 3, high 4-5). "
           if r.scouting else "scouting is off. ")
        + f"From turn {r.noose_start}, every {r.noose_every} turns, forces on the outer ring die. "
        "Kill the enemy sovereign to win.",
        "Your forces:",
    ]
    for i, (pos, p, alive) in enumerate(zip(obs.own_pos, obs.own_power, obs.own_alive, strict=True)):
        if alive:
            tag = " SOVEREIGN" if i == obs.sovereign else ""
            lines.append(f"  F{i} at row {pos[0]} col {pos[1]}, power {p}{tag}")
    lines.append("Enemy forces (powers hidden):")
    for j, (pos, alive) in enumerate(zip(obs.enemy_pos, obs.enemy_alive, strict=True)):
        lines.append(f"  E{j} at row {pos[0]} col {pos[1]}" if alive else f"  E{j} dead")
    if obs.reveals:
        lines.append("Scout reports: " + "; ".join(
            f"turn {v.turn} E{v.enemy} {'= ' + str(v.low) if v.kind == 'exact' else v.kind}"
            for v in obs.reveals))
    if obs.fights:
        lines.append("Fights: " + "; ".join(
            f"turn {f.turn} F{f.own} (eff {f.own_eff}) vs E{f.enemy} (bonus {f.enemy_bonus}): {f.outcome}"
            for f in obs.fights[-6:]))
    lines.append(
        "Objectives: hunt_sovereign (go for the enemy sovereign), dominate (destroy enemy "
        "forces, whichever they are), defend (keep your sovereign out of reach)."
    )
    lines.append(
        'Answer with JSON: {"orders": {"F0": "move S", ...} (hold, move D, charge D, scout EJ, '
        'fortify, ambush; D in N S E W), "beliefs": {"E0": [p1, p2, p3, p4, p5], ...} '
        '(probability of each power), "predictions": {"E0": {"move": 0.6, "hold": 0.4}, ...} '
        "(probability of each enemy force's order this turn over hold, move, charge, scout, "
        'fortify, ambush), "objective": {"hunt_sovereign": 0.3, "dominate": 0.4, '
        '"defend": 0.3} (the enemy\'s objective), "my_objective": "dominate", '
        '"confidence": 0.5}'
    )
    return "\n".join(lines)


COMPLETION_PREFIX = '{"orders": {'


COT_FINAL = "The final line is your JSON answer, on one line."
"""With ``--reasoning cot``: what follows the shared instruction in the prompt."""


def build_request(obs: Observation, *, style: str, seed: int, max_tokens: int,
                  temperature: float, reasoning: str = "direct") -> Request:
    """The request of one player's turn; completion style ends with the start of the JSON
    (with ``reasoning="cot"``: with ``Reasoning:``, the JSON expected on the final line)."""
    text = render_observation(obs)
    if reasoning == "cot":
        text = f"{text}\n\n{COT_INSTRUCTION} {COT_FINAL}"
        if style == "completion":
            return Request(prompt=f"{text}\n\n{COT_COMPLETION_CUE}", seed=seed,
                           task="fog.turn", max_tokens=max_tokens, temperature=temperature)
    if style == "completion":
        return Request(prompt=text + "\nJSON answer:\n" + COMPLETION_PREFIX, seed=seed,
                       task="fog.turn", max_tokens=max_tokens, temperature=temperature,
                       stop=("\n\n",))
    return Request(prompt=text, seed=seed, task="fog.turn", max_tokens=max_tokens,
                   temperature=temperature, messages=(("system", SYSTEM), ("user", text)))


_ORDER_RE = re.compile(r"^(hold|fortify|ambush|move ([NSEW])|charge ([NSEW])|scout E(\d+))$")


def parse_order(text: object, num_forces: int) -> Order | None:
    if not isinstance(text, str):
        return None
    m = _ORDER_RE.match(" ".join(text.strip().split()).lower().replace(" e", " E")
                        .replace(" n", " N").replace(" s", " S").replace(" w", " W"))
    if m is None:
        return None
    kind = m.group(1).split()[0]
    if kind in ("move", "charge"):
        return (kind, m.group(2) or m.group(3))
    if kind == "scout":
        j = int(m.group(4))
        return ("scout", j) if j < num_forces else None
    return (kind, None)


def _first_json(text: str) -> dict | None:
    start = text.find("{")
    while start >= 0:
        depth = 0
        for end in range(start, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        out = json.loads(text[start:end + 1])
                    except json.JSONDecodeError:
                        break
                    return out if isinstance(out, dict) else None
        start = text.find("{", start + 1)
    return None


def parse_answer(text: str | None, obs: Observation) -> tuple[list[Order], AgentReport]:
    """Validates an answer; see the module docstring for the statuses."""
    k = obs.rules.num_forces
    hold = [HOLD] * k
    if text is None:
        return hold, AgentReport(None, ("",) * k, "", hold, None, "call_failed", None)
    data = _first_json(text)
    if data is None:
        return hold, AgentReport(None, ("",) * k, "", hold, None, "no_json", text)
    status = "ok"
    orders = list(hold)
    raw_orders = data.get("orders")
    if not isinstance(raw_orders, dict):
        status = "bad_orders"
    else:
        for key, value in raw_orders.items():
            m = re.fullmatch(r"F(\d+)", str(key).strip())
            order = parse_order(value, k)
            if m is None or int(m.group(1)) >= k or order is None:
                status, orders = "bad_orders", list(hold)
                break
            orders[int(m.group(1))] = order
    beliefs: np.ndarray | None = flat_beliefs(k)
    raw_beliefs = data.get("beliefs")
    if not isinstance(raw_beliefs, dict):
        beliefs = None
    else:
        for j in range(k):
            row = raw_beliefs.get(f"E{j}")
            if row is None and not obs.enemy_alive[j]:
                continue
            ok = (isinstance(row, list) and len(row) == 5
                  and all(isinstance(x, int | float) and not isinstance(x, bool) for x in row))
            arr = np.asarray(row, dtype=np.float64) if ok else None
            if arr is None or not np.isfinite(arr).all() or (arr < 0).any() or abs(arr.sum() - 1) > 0.05:
                beliefs = None
                break
            beliefs[j] = arr / arr.sum()
    if beliefs is None and status == "ok":
        status = "bad_beliefs"
    raw_preds = data.get("predictions", data.get("action_predictions"))
    action_probs = _action_rows(raw_preds, obs.enemy_alive)
    if raw_preds is not None and action_probs is None and status == "ok":
        status = "bad_predictions"
    raw_obj = data.get("objective", data.get("objective_prediction"))
    objective_probs = None if raw_obj is None else _distribution(raw_obj, OBJECTIVES)
    if raw_obj is not None and objective_probs is None and status == "ok":
        status = "bad_objective"
    preds = labels_of(action_probs) if action_probs is not None else ("",) * k
    conf = data.get("confidence")
    confidence = (float(conf) if isinstance(conf, int | float) and not isinstance(conf, bool)
                  and 0 <= conf <= 1 else None)
    mine = data.get("my_objective")
    own = mine.strip().lower() if isinstance(mine, str) else ""
    return orders, AgentReport(beliefs, preds, objective_label(objective_probs), orders,
                               confidence, status, text, action_probs=action_probs,
                               objective_probs=objective_probs,
                               objective=own if own in OBJECTIVES else "")


def _distribution(value: object, names: tuple[str, ...]) -> np.ndarray | None:
    """A distribution over ``names`` from a map name -> p (names left out: 0), a list of
    len(names) numbers, or a bare name (p = 1); None when invalid."""
    if isinstance(value, str):  # a bare name ("move S" reads as move)
        name = (value.strip().split() or [""])[0].lower()
        return (np.arange(len(names)) == names.index(name)).astype(np.float64) \
            if name in names else None
    if isinstance(value, dict):
        out = np.zeros(len(names))
        for key, p in value.items():
            name = str(key).strip().lower()
            if name not in names or isinstance(p, bool) or not isinstance(p, int | float):
                return None
            out[names.index(name)] += p
    elif isinstance(value, list) and len(value) == len(names) and all(
            isinstance(p, int | float) and not isinstance(p, bool) for p in value):
        out = np.asarray(value, dtype=np.float64)
    else:
        return None
    if not np.isfinite(out).all() or (out < 0).any() or abs(out.sum() - 1.0) > TOLERANCE:
        return None
    return out / out.sum()


def _action_rows(value: object, alive: tuple[bool, ...]) -> np.ndarray | None:
    """(K, 6) action distributions from ``{"E0": ..., ...}`` (NaN rows: dead or not given);
    None when not a map or any living force's entry is invalid."""
    if not isinstance(value, dict):
        return None
    out = np.full((len(alive), len(ACTION_KINDS)), np.nan)
    for key, entry in value.items():
        m = re.fullmatch(r"E(\d+)", str(key).strip())
        if m is None or int(m.group(1)) >= len(alive):
            return None
        j = int(m.group(1))
        if not alive[j]:
            continue
        row = _distribution(entry, ACTION_KINDS)
        if row is None:
            return None
        out[j] = row
    return out


def answer_json(orders: list[Order], report: AgentReport) -> str:
    """A scripted agent's plan written as a model would answer."""
    def rounded(row) -> list[float]:
        return [round(float(x), 6) for x in row]

    out = {
        "orders": {f"F{i}": format_order(o) for i, o in enumerate(orders)},
        "beliefs": ({f"E{j}": rounded(row) for j, row in enumerate(report.beliefs)}
                    if report.beliefs is not None else None),
        "predictions": (
            {f"E{j}": dict(zip(ACTION_KINDS, rounded(row), strict=True))
             for j, row in enumerate(report.action_probs) if np.isfinite(row).all()}
            if report.action_probs is not None
            else {f"E{j}": p for j, p in enumerate(report.predicted_actions) if p}),
        "objective": (dict(zip(OBJECTIVES, rounded(report.objective_probs), strict=True))
                      if report.objective_probs is not None
                      else report.predicted_objective or None),
        "my_objective": report.objective,
        "confidence": report.confidence,
    }
    if out["objective"] is None:
        del out["objective"]
    return json.dumps(out)


class MockLLMAgent(Agent):
    """A scripted strategy behind the text interface: renders the prompt, writes the inner
    agent's plan as JSON text and parses it back like a model's answer (for tests and for
    checking a harness without a model).

    ``MockLLMAgent(strategy_name="bayesian_hunter")`` (the design's API; ``strategy=`` works
    too) plays a scripted strategy: a tier (``tier1``..``tier4``), one of the design's names
    (``random``, ``greedy``, ``bayesian_hunter``, ``lookahead``) or a user's class
    ``module:Class``; ``MockLLMAgent(agent)`` wraps an agent object.
    """

    def __init__(self, inner: Agent | str | None = None, *, strategy_name: str | None = None,
                 strategy: str | None = None) -> None:
        names = [x for x in (inner if isinstance(inner, str) else None, strategy_name, strategy)
                 if x is not None]
        if len(names) + (isinstance(inner, Agent)) != 1:
            raise TypeError("MockLLMAgent takes one agent: an Agent object, or a strategy "
                            "name (strategy_name='bayesian_hunter')")
        self.inner = inner if isinstance(inner, Agent) else make_agent(names[0])
        self.strategy_name = names[0] if names else self.inner.name
        self.name = f"mock:{self.inner.name}"
        self.last_prompt = ""

    def deploy(self, player_id, rules, rng):
        return self.inner.deploy(player_id, rules, rng)

    def observe_and_plan(self, player_id, observation, rng):
        self.last_prompt = render_observation(observation)
        orders, report = self.inner.observe_and_plan(player_id, observation, rng)
        return parse_answer(answer_json(orders, report), observation)


class LLMAgent(Agent):
    """A model behind the text interface. The runner batches :meth:`request` across games and
    hands each answer to :meth:`finish`; an invalid answer holds every force."""

    def __init__(self, label: str, style: str, max_tokens: int, temperature: float,
                 reasoning: str = "direct") -> None:
        self.name = label
        self.style = style
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.reasoning = reasoning

    def request(self, observation: Observation, seed: int) -> Request:
        return build_request(observation, style=self.style, seed=seed,
                             max_tokens=self.max_tokens, temperature=self.temperature,
                             reasoning=self.reasoning)

    def answer_part(self, text: str) -> tuple[str | None, str]:
        """(reasoning, the text to parse) of an answer: ``cot`` parses the final line only;
        ``direct`` the whole text (after the completion prefix, in completion style)."""
        if self.reasoning == "cot":
            return split_final(text)
        return None, COMPLETION_PREFIX + text if self.style == "completion" else text

    def finish(self, response: Response, observation: Observation) -> tuple[list[Order], AgentReport]:
        if response.status != "ok" or response.text is None:
            orders, report = parse_answer(None, observation)
            report.raw_text = response.text
            return orders, report
        text = response.text
        reasoning, full = self.answer_part(text)
        orders, report = parse_answer(full, observation)
        report.raw_text = text
        report.extra["reasoning"] = reasoning
        return orders, report

    def observe_and_plan(self, player_id, observation, rng):
        raise NotImplementedError("LLM agents are driven by the runner (batched per turn)")


WRAPPERS["mock"] = MockLLMAgent  # mock:NAME, the fog seed's --agent mock:tier3

__all__ = ["DIRS", "PARSER_VERSION", "LLMAgent", "MockLLMAgent", "answer_json", "build_request",
           "parse_answer",
           "parse_order", "render_observation"]
