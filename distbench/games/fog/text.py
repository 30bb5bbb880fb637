"""The text interface of the fog-of-war skirmish: observation -> prompt, answer -> orders.

The model answers one JSON object::

    {"orders": {"F0": "move S", "F1": "scout E2", "F2": "fortify", ...},
     "beliefs": {"E0": [0.2, 0.2, 0.2, 0.2, 0.2], ...},
     "predictions": {"E0": "move", ...}, "objective": "attack", "confidence": 0.6}

Validation (:func:`parse_answer`): no JSON object -> ``no_json``; orders that are not a map of
known forces to known orders -> ``bad_orders`` (every force holds); beliefs missing, not five
non-negative numbers per living enemy force, or not summing to 1 within 0.05 -> ``bad_beliefs``
(orders are kept, beliefs stored as NULL; rows within tolerance are renormalised). A force
without an order holds; dead forces' beliefs default to flat when omitted. The status is the
first problem found, ``ok`` when none.
"""

from __future__ import annotations

import json
import re

import numpy as np

from distbench.games.fog.agents import Agent, AgentReport, flat_beliefs
from distbench.games.fog.rules import DIRS, HOLD, ORDER_KINDS, Observation, Order, format_order
from distbench.llm.base import Request, Response

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
        'Answer with JSON: {"orders": {"F0": "move S", ...} (hold, move D, charge D, scout EJ, '
        'fortify, ambush; D in N S E W), "beliefs": {"E0": [p1, p2, p3, p4, p5], ...} '
        '(probability of each power), "predictions": {"E0": "move", ...}, '
        '"objective": "attack", "confidence": 0.5}'
    )
    return "\n".join(lines)


COMPLETION_PREFIX = '{"orders": {'


def build_request(obs: Observation, *, style: str, seed: int, max_tokens: int,
                  temperature: float) -> Request:
    """The request of one player's turn; completion style ends with the start of the JSON."""
    text = render_observation(obs)
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
    preds_raw = data.get("predictions") if isinstance(data.get("predictions"), dict) else {}
    preds = tuple(
        (str(preds_raw.get(f"E{j}", "")).split() or [""])[0].lower()
        if obs.enemy_alive[j] else "" for j in range(k))
    preds = tuple(p if p in ORDER_KINDS else "" for p in preds)
    conf = data.get("confidence")
    confidence = float(conf) if isinstance(conf, int | float) and 0 <= conf <= 1 else None
    objective = str(data.get("objective", ""))[:40]
    return orders, AgentReport(beliefs, preds, objective, orders, confidence, status, text)


def answer_json(orders: list[Order], report: AgentReport) -> str:
    """A scripted agent's plan written as a model would answer."""
    out = {
        "orders": {f"F{i}": format_order(o) for i, o in enumerate(orders)},
        "beliefs": ({f"E{j}": [round(float(x), 6) for x in row]
                     for j, row in enumerate(report.beliefs)} if report.beliefs is not None else None),
        "predictions": {f"E{j}": p for j, p in enumerate(report.predicted_actions) if p},
        "objective": report.predicted_objective,
        "confidence": report.confidence,
    }
    return json.dumps(out)


class MockLLMAgent(Agent):
    """A scripted strategy behind the text interface: renders the prompt, writes the inner
    agent's plan as JSON text and parses it back like a model's answer (for tests)."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = f"mock:{inner.name}"
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

    def __init__(self, label: str, style: str, max_tokens: int, temperature: float) -> None:
        self.name = label
        self.style = style
        self.max_tokens = max_tokens
        self.temperature = temperature

    def request(self, observation: Observation, seed: int) -> Request:
        return build_request(observation, style=self.style, seed=seed,
                             max_tokens=self.max_tokens, temperature=self.temperature)

    def finish(self, response: Response, observation: Observation) -> tuple[list[Order], AgentReport]:
        if response.status != "ok" or response.text is None:
            orders, report = parse_answer(None, observation)
            report.raw_text = response.text
            return orders, report
        text = response.text
        full = COMPLETION_PREFIX + text if self.style == "completion" else text
        orders, report = parse_answer(full, observation)
        report.raw_text = text
        return orders, report

    def observe_and_plan(self, player_id, observation, rng):
        raise NotImplementedError("LLM agents are driven by the runner (batched per turn)")


__all__ = ["DIRS", "LLMAgent", "MockLLMAgent", "answer_json", "build_request", "parse_answer",
           "parse_order", "render_observation"]
