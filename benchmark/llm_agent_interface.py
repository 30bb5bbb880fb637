"""The fog seed's agent interface (its ``benchmark/llm_agent_interface.py``) on distbench.

An agent file written for the seed (``from benchmark.llm_agent_interface import LLMAgent``)
imports unchanged and plays wherever a tier does, named ``module:Class``
(``distbench run --family fog --agent myagents:Mine``, ``fog tournament --agent ...``, a sweep's
``[fog] opponents``). As in the seed:

- ``observe_and_plan(player_id, game_state, rng) -> (orders, AgentReport)`` with
  ``player_id`` ``"p1"`` (seat a) or ``"p2"`` and ``rng`` a ``random.Random`` (seeded from the
  game's seed: deterministic); the report is the seed's (:mod:`benchmark.telemetry`) or
  distbench's;
- ``deploy(player, rng) -> {force_id: power}`` without the ``rules`` argument, ``player``
  having the seed's ``id`` and ``forces`` (each with its ``id``, ``p1_f1``..); optional
  (default: a random valid deployment); home columns and sovereign are drawn at random;
- ``name``: the strategy's name;
- :class:`MockLLMAgent` ``(strategy_name="bayesian_hunter")``: a scripted strategy behind
  the text interface (``--agent mock:tier3`` on the command line).

Not as in the seed: ``game_state`` is distbench's ``Observation`` (own positions, powers and
alive flags, the enemy's positions, the reveals and fights seen: no hidden information, and
none of the seed's ``GameState`` methods), and orders are distbench's ``(kind, arg)`` pairs
(``("move", "N")``, ``("charge", "NE")``, ``("scout", 2)``, ``("fortify", None)``; kinds in
any case), one per own force (``distbench/games/fog/rules.py``).
"""

from __future__ import annotations

import abc
import random
from typing import Any

from benchmark.telemetry import AgentReport, BeliefState
from distbench.games.fog.text import MockLLMAgent


class LLMAgent(abc.ABC):
    """The seed's abstract agent: subclass it, implement :meth:`observe_and_plan` (and
    optionally :meth:`deploy`), construct it without arguments."""

    seed_api = True
    """Tells distbench to call it with the seed's player ids and ``random.Random``."""

    @abc.abstractmethod
    def observe_and_plan(self, player_id: str, game_state: Any,
                         rng: random.Random) -> tuple[list, AgentReport]:
        """Orders for every own force and the turn's report."""

    @property
    def name(self) -> str:
        return type(self).__name__


__all__ = ["AgentReport", "BeliefState", "LLMAgent", "MockLLMAgent"]
