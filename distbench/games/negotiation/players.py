"""Players: the abstract interface, the scripted baselines and the model player.

Every player answers a batch of :class:`Ask` with text, and every text goes through the same
game master and parser, so scripted baselines follow the same protocol as a model.

Scripted baselines (GAMES.md leaves their policy open; fixed here) write one short localized
sentence and their proposal on their first turn, and answer any later ask with the same
proposal:

- ``scripted:fair``: half of every type (rounded down); the odd items left over go
  alternately to itself and to the other player, in decreasing order of its own value (ties:
  type order), starting with itself in seat a and with the other player in seat b (so two fair
  players with the same ranking split the leftovers compatibly).
- ``scripted:greedy``: every item of every type it values, nothing else.
- ``scripted:random``: a uniformly random amount ``0..count`` of each type, drawn from
  ``numpy.random.default_rng(ask.seed)`` (the per-turn seed derived from ``llm_seed``).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distbench.games.answers.reasoning import (
    COT_INSTRUCTION,
    reasoning_budget,
    reasoning_mode,
    split_final,
)
from distbench.games.base import seat_label
from distbench.games.negotiation.instances import Instance
from distbench.games.negotiation.prompts import format_proposal, text
from distbench.llm.base import Backend, BackendSpec, Request, Response

SCRIPTED: tuple[str, ...] = ("scripted:fair", "scripted:greedy", "scripted:random")
COT_FINAL = ("The final line is what you say to the other player, or your secret proposal; "
             "only that line is read, and only that line is passed on.")
"""With ``--reasoning cot``: what ends the player's last message after the shared
instruction (the reasoning is never relayed)."""
TASK = "negotiation"


@dataclass(frozen=True, slots=True)
class Ask:
    """What the game master asks one player for.

    Attributes:
        episode_id: The episode.
        seat: ``"a"`` or ``"b"``.
        turn: Turn number in the episode, from 0 (the answer's row in ``turns``).
        kind: ``"message"`` (a free turn), ``"must_propose"`` (the other player proposed) or
            ``"timeout_prompt"`` (messages ran out).
        messages: The player's conversation so far as (role, content) pairs, ending with the
            game master's ``user`` message.
        seed: Per-turn seed, stable (derived from ``llm_seed``, the episode, the turn, the seat).
        instance: The instance (scripted players read their own values from it).
        lang: Language of the episode.
        mode: Mode of the episode.
    """

    episode_id: str
    seat: str
    turn: int
    kind: str
    messages: tuple[tuple[str, str], ...]
    seed: int
    instance: Instance
    lang: str
    mode: str


@dataclass(frozen=True, slots=True)
class Reply:
    """A player's answer to an :class:`Ask`.

    Attributes:
        text: The answer text; None when the call failed.
        failed: The model call failed (the episode aborts with ``call_failed``).
        error: Why it failed.
        request: The model request (None for scripted players).
        response: The model response (None for scripted players).
        reasoning: A ``cot`` player's text before its final line (then ``text`` is the final
            line: what the game master reads and relays); None otherwise.
    """

    text: str | None
    failed: bool = False
    error: str = ""
    request: Request | None = None
    response: Response | None = None
    reasoning: str | None = None


class Player(abc.ABC):
    """A negotiation player: answers a batch of asks, in order."""

    label: str
    spec: BackendSpec | None = None

    @abc.abstractmethod
    async def respond(self, asks: Sequence[Ask]) -> list[Reply]:
        """Answers ``asks`` (one batch), in order; never raises for a failed call."""


class ScriptedPlayer(Player):
    """A baseline that needs no model: a short sentence and a fixed proposal."""

    name: str = ""

    def __init__(self) -> None:
        self.label = f"scripted:{self.name}"

    @abc.abstractmethod
    def amounts(self, ask: Ask) -> tuple[int, ...]:
        """The amounts it asks for, per type."""

    def say(self, ask: Ask) -> str:
        proposal = format_proposal(ask.instance, self.amounts(ask), ask.lang)
        return f"{text(ask.lang, self.name)} {proposal}"

    async def respond(self, asks: Sequence[Ask]) -> list[Reply]:
        return [Reply(text=self.say(ask)) for ask in asks]


class FairPlayer(ScriptedPlayer):
    name = "fair"

    def amounts(self, ask: Ask) -> tuple[int, ...]:
        inst = ask.instance
        own = inst.values(ask.seat)
        out = [c // 2 for c in inst.counts]
        odd = sorted((k for k, c in enumerate(inst.counts) if c % 2), key=lambda k: (-own[k], k))
        first = 0 if ask.seat == "a" else 1
        for rank, k in enumerate(odd):
            if rank % 2 == first:
                out[k] += 1
        return tuple(out)


class GreedyPlayer(ScriptedPlayer):
    name = "greedy"

    def amounts(self, ask: Ask) -> tuple[int, ...]:
        inst = ask.instance
        return tuple(c if v > 0 else 0 for c, v in zip(inst.counts, inst.values(ask.seat), strict=True))


class RandomPlayer(ScriptedPlayer):
    name = "random"

    def amounts(self, ask: Ask) -> tuple[int, ...]:
        rng = np.random.default_rng(ask.seed)
        return tuple(int(rng.integers(0, c + 1)) for c in ask.instance.counts)


def scripted_player(label: str) -> ScriptedPlayer:
    """The scripted baseline called ``label`` (``scripted:fair`` ...).

    Raises:
        ValueError: an unknown baseline.
    """
    players = {"scripted:fair": FairPlayer, "scripted:greedy": GreedyPlayer,
               "scripted:random": RandomPlayer}
    if label not in players:
        raise ValueError(f"unknown scripted player {label!r}; available: {', '.join(SCRIPTED)}")
    return players[label]()


class ModelPlayer(Player):
    """A model through its backend (an endpoint actor under Ray): one ``generate`` per batch.

    Completion-style models get the conversation as a transcript and stop before they would
    write the next ``User:`` turn themselves.
    """

    def __init__(self, spec: BackendSpec, backend: Backend, *, temperature: float,
                 max_tokens: int) -> None:
        self.spec = spec
        self.label = seat_label(spec)
        self.backend = backend
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.reasoning = reasoning_mode(spec)

    def request(self, ask: Ask) -> Request:
        stop = ("\nUser:", "\nAssistant:") if self.spec.style == "completion" else None
        messages, max_tokens = ask.messages, self.max_tokens
        if self.reasoning == "cot":  # the instruction ends the last message, never relayed
            role, content = messages[-1]
            messages = (*messages[:-1], (role, f"{content}\n\n{COT_INSTRUCTION} {COT_FINAL}"))
            max_tokens = reasoning_budget(self.spec)
        return Request(
            prompt=messages[-1][1],
            messages=messages,
            seed=ask.seed,
            task=TASK,
            max_tokens=max_tokens,
            temperature=self.temperature,
            stop=stop,
        )

    async def respond(self, asks: Sequence[Ask]) -> list[Reply]:
        requests = [self.request(ask) for ask in asks]
        responses = await self.backend.generate(requests) if requests else []
        out = []
        for req, resp in zip(requests, responses, strict=True):
            failed = resp.status != "ok" or resp.text is None
            text, reasoning = None if failed else resp.text, None
            if text is not None and self.reasoning == "cot":
                reasoning, text = split_final(text)
            out.append(Reply(text=text, failed=failed,
                             error=resp.error or ("call failed" if failed else ""),
                             request=req, response=resp, reasoning=reasoning))
        return out
