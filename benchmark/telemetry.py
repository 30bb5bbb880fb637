"""The fog seed's report types (its ``benchmark/telemetry.py``), as an agent builds them.

:class:`AgentReport` and :class:`BeliefState` have the seed's fields and constructors
(``AgentReport(turn=5, player_id="p1", strategy="mine")``, ``report.beliefs["p2_f1"] =
BeliefState.uniform()``, ``report.action_predictions["p2_f1"] = {"Move": 0.4, ...}``); an
agent returns ``(orders, report)`` and distbench reads the report as its own
(``distbench.games.fog.agents.UserAgent``): beliefs per enemy force ``p2_f1``..``p2_f5`` over
powers 1..5, action predictions over the order kinds (any case; distbench also has ``hold``),
``objective_prediction`` over ``hunt_sovereign``, ``dominate``, ``defend``, ``confidence`` and
``raw_reasoning`` (stored as the answer text). The seed's ``EventLog`` and ``GameTelemetry``
are not here: distbench writes the events and games itself (``fog_events``, whose combat rows
carry the seed's ``attacker_id``, ``defender_id``, ``attacker_power``, ``defender_power`` and
``result``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class BeliefState:
    """A distribution over an enemy force's hidden power (1..5)."""

    distribution: dict[int, float] = field(default_factory=dict)

    def entropy(self) -> float:
        """Shannon entropy in bits."""
        return -sum(p * math.log2(p) for p in self.distribution.values() if p > 0)

    def max_probability(self) -> float:
        return max(self.distribution.values()) if self.distribution else 0.0

    def predicted_power(self) -> int:
        if not self.distribution:
            return 0
        return max(self.distribution, key=self.distribution.__getitem__)

    @staticmethod
    def uniform() -> BeliefState:
        """0.2 on each power 1..5."""
        return BeliefState(distribution={i: 0.2 for i in range(1, 6)})

    def to_dict(self) -> dict[str, float]:
        return {str(k): v for k, v in self.distribution.items()}


@dataclass
class AgentReport:
    """An agent's turn report, with the seed's fields."""

    turn: int
    player_id: str
    strategy: str
    beliefs: dict[str, BeliefState] = field(default_factory=dict)
    action_predictions: dict[str, dict[str, float]] = field(default_factory=dict)
    objective_prediction: dict[str, float] = field(default_factory=dict)
    chosen_orders: list = field(default_factory=list)
    confidence: float = 0.5
    raw_reasoning: str = ""

    def to_dict(self) -> dict:
        return {"turn": self.turn, "player_id": self.player_id, "strategy": self.strategy,
                "beliefs": {k: v.to_dict() for k, v in self.beliefs.items()},
                "action_predictions": self.action_predictions,
                "objective_prediction": self.objective_prediction,
                "chosen_orders": [str(o) for o in self.chosen_orders],
                "confidence": self.confidence}


__all__ = ["AgentReport", "BeliefState"]
