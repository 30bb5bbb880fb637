"""One game between two agents, turn by turn, with its telemetry.

A :class:`GameSession` owns the engine, the two agents' random streams and the records. The
runner drives many sessions at once so that LLM agents across games are asked in one batch
per turn; :func:`play_scripted` plays one game of scripted agents to the end.

Seeding: ``SeedSequence([seed, game_index])`` spawns three streams (engine, player a, player
b). The stream does not depend on the agents, so both seat orders and every pairing play the
same engine randomness for a given (seed, index) (common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import distbench.games.fog.text  # noqa: F401 - registers the mock:NAME agents
from distbench.games.fog.agents import Agent, AgentReport, make_agent
from distbench.games.fog.rules import Event, Game, Observation, Order, Rules


@dataclass(slots=True)
class TurnRecord:
    """One player's turn: its report and what the enemy actually ordered."""

    turn: int
    player: int
    report: AgentReport
    enemy_kinds: tuple[str, ...]
    enemy_alive: tuple[bool, ...]
    call_id: str | None = None


@dataclass(slots=True)
class GameSession:
    """A game in progress."""

    rules: Rules
    agents: tuple[Agent, Agent]
    seed: int
    index: int
    game_id: str
    game: Game = field(init=False)
    rngs: tuple[np.random.Generator, np.random.Generator] = field(init=False)
    records: list[TurnRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    true_powers: tuple[tuple[int, ...], tuple[int, ...]] = field(init=False)

    def __post_init__(self) -> None:
        streams = np.random.SeedSequence([self.seed, self.index]).spawn(3)
        engine, rng_a, rng_b = (np.random.default_rng(s) for s in streams)
        self.rngs = (rng_a, rng_b)
        deps = (self.agents[0].deploy(0, self.rules, rng_a),
                self.agents[1].deploy(1, self.rules, rng_b))
        self.game = Game(self.rules, deps, engine)
        self.true_powers = (tuple(deps[0].powers), tuple(deps[1].powers))

    @property
    def done(self) -> bool:
        return self.game.done

    def observations(self) -> tuple[Observation, Observation]:
        return self.game.observation(0), self.game.observation(1)

    def apply(self, plans: tuple[tuple[list[Order], AgentReport], tuple[list[Order], AgentReport]],
              call_ids: tuple[str | None, str | None] = (None, None)) -> list[Event]:
        """Plays the turn with both players' (orders, report)."""
        turn = self.game.turn + 1
        alive = [tuple(self.game.alive[p]) for p in (0, 1)]
        events = self.game.step((plans[0][0], plans[1][0]))
        kinds = [tuple(o[0] for o in self.game.last_orders[p]) for p in (0, 1)]
        for p in (0, 1):
            report = plans[p][1]
            report.orders = list(self.game.last_orders[p])
            self.records.append(TurnRecord(turn, p, report, kinds[1 - p], alive[1 - p],
                                           call_ids[p]))
        self.events.extend(events)
        return events

    def play_turn(self) -> list[Event]:
        """One turn where both agents are scripted (plan in-process)."""
        obs = self.observations()
        plans = tuple(self.agents[p].observe_and_plan(p, obs[p], self.rngs[p]) for p in (0, 1))
        return self.apply(plans)  # type: ignore[arg-type]


def play_scripted(rules: Rules, agent_a: str | Agent, agent_b: str | Agent, seed: int,
                  index: int, game_id: str = "") -> GameSession:
    """Plays one game to the end."""
    agents = tuple(make_agent(a) if isinstance(a, str) else a for a in (agent_a, agent_b))
    session = GameSession(rules, agents, seed, index, game_id)  # type: ignore[arg-type]
    while not session.done:
        session.play_turn()
    return session
