"""The game master: turn order, relay, the proposal protocol, time-out, aborts, outcome.

Rules (GAMES.md section 2; the choices it leaves open are fixed here):

- Seat a speaks first; seats alternate. Each seat has at most ``max_messages`` free turns
  (``kind="message"``); a proposal made on a free turn uses that turn.
- A free-turn answer without a proposal is a message: relayed verbatim to the other player
  (``The other player says: ...``). An answer holding a proposal is never relayed, not even the
  text around it: the other player is told only that a secret proposal was made and must now
  propose (``kind="must_propose"``).
- When both seats have used all their free turns without a proposal, both are asked for their
  proposal at once (``kind="timeout_prompt"``), each in its own conversation.
- Abort reasons: any rejected proposal (``malformed``, ``multiple_proposals``, ``bad_number``,
  ``unknown_item``, ``ambiguous_item``, ``repeated_item``, ``too_many_items``; see
  :mod:`.parse`), ``free_text_after_proposal`` (no proposal when the other proposed),
  ``no_proposal`` (no proposal at the time-out), ``call_failed`` (the model call failed).
  The first abort decides; answers already asked for in the same round are still recorded as
  turns.
- With clembench's prompts (``prompts``, an instance file's templates; see
  :mod:`.clembench`) the texts are the file's and messages are relayed verbatim; the turn order
  and everything above stay the same.
- Outcome: compatible when the two proposals together ask, per type, for at most the count;
  then each scores the value of what it asked for, else both score 0 (``lose``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from distbench.games.negotiation import parse as P
from distbench.games.negotiation.clembench import NO_RESPONSE, ClemPrompts
from distbench.games.negotiation.instances import Instance
from distbench.games.negotiation.players import Ask, Reply
from distbench.games.negotiation.prompts import example_proposal, intro, text

SEATS = ("a", "b")
FREE_TEXT_AFTER_PROPOSAL = "free_text_after_proposal"
NO_PROPOSAL = "no_proposal"
CALL_FAILED = "call_failed"
ABORT_REASONS: tuple[str, ...] = (*P.REJECTIONS, FREE_TEXT_AFTER_PROPOSAL, NO_PROPOSAL, CALL_FAILED)


def _other(seat: str) -> str:
    return "b" if seat == "a" else "a"


@dataclass
class Turn:
    """One answer of one player (a row of ``turns``)."""

    turn: int
    seat: str
    kind: str
    raw_text: str | None
    parse_status: str
    parse_detail: str
    proposal: tuple[int, ...] | None
    call_id: str | None
    reasoning_text: str | None = None


@dataclass
class Episode:
    """One game between the players in seats a and b; see the module docstring.

    Drive it with :meth:`asks` (what to ask now) and :meth:`receive` (an answer), until
    :attr:`done`.
    """

    episode_id: str
    instance: Instance
    mode: str
    lang: str
    max_messages: int
    seed_of: object  # callable (episode_id, turn, seat) -> int
    prompts: ClemPrompts | None = None
    turns: list[Turn] = field(default_factory=list)
    phase: str = "talk"  # talk | respond | timeout | done
    abort_reason: str | None = None
    abort_seat: str | None = None
    proposals: dict[str, tuple[int, ...] | None] = field(default_factory=lambda: {"a": None, "b": None})
    _transcripts: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: {"a": [], "b": []})
    _used: dict[str, int] = field(default_factory=lambda: {"a": 0, "b": 0})
    _next: str = "a"
    _pending: list[tuple[str, str]] = field(default_factory=list)  # (seat, kind) asked now

    def __post_init__(self) -> None:
        self._forms = list(self.instance.forms(self.lang))
        self._example = example_proposal(self.instance, self.lang)
        self._tell("a", self._text("start"))
        self._pending = [("a", "message")]

    @property
    def done(self) -> bool:
        return self.phase == "done"

    @property
    def aborted(self) -> bool:
        return self.abort_reason is not None

    def _text(self, key: str, **fields: str) -> str | None:
        """The game master's text ``key`` (start, relay, must, timeout); None: nothing."""
        if self.prompts is None:
            return text(self.lang, key, example=self._example, **fields)
        if key == "relay":
            return fields["text"] or NO_RESPONSE
        return {"start": None, "must": self.prompts.early, "timeout": self.prompts.timeout}[key]

    def _tell(self, seat: str, message: str | None) -> None:
        convo = self._transcripts[seat]
        if not convo:
            if self.prompts is None:
                first = intro(self.instance, seat, self.mode, self.lang, self.max_messages)
            else:
                first = self.prompts.first(self.instance, seat, self.lang, self.max_messages)
            convo.append(("user", first if message is None else f"{first}\n\n{message}"))
        elif convo[-1][0] == "user":
            convo[-1] = ("user", f"{convo[-1][1]}\n\n{message}")
        else:
            convo.append(("user", message))

    def asks(self) -> list[Ask]:
        """What to ask now (empty when the episode is done), in seat order."""
        if self.done:
            return []
        base = len(self.turns)
        return [
            Ask(
                episode_id=self.episode_id, seat=seat, turn=base + i, kind=kind,
                messages=tuple(self._transcripts[seat]), seed=self.seed_of(self.episode_id, base + i, seat),
                instance=self.instance, lang=self.lang, mode=self.mode,
            )
            for i, (seat, kind) in enumerate(self._pending)
        ]

    def receive_round(self, asks: list[Ask], replies: list[Reply], call_ids: list[str | None]) -> None:
        """Takes the answers to every ask of :meth:`asks`, in the same order."""
        for ask, reply, call_id in zip(asks, replies, call_ids, strict=True):
            self._receive(ask, reply, call_id)
        if not self.done and self.phase == "timeout" and all(self.proposals.values()):
            self.phase = "done"

    def _abort(self, seat: str, reason: str) -> None:
        if self.abort_reason is None:
            self.abort_reason, self.abort_seat = reason, seat
        self.phase = "done"

    def _receive(self, ask: Ask, reply: Reply, call_id: str | None) -> None:
        seat, kind = ask.seat, ask.kind
        if reply.failed or reply.text is None:
            self.turns.append(Turn(ask.turn, seat, kind, None, CALL_FAILED, reply.error, None, call_id))
            self._abort(seat, CALL_FAILED)
            return
        parsed = self._parse(reply.text)
        self.turns.append(Turn(ask.turn, seat, kind, reply.text, parsed.status, parsed.detail,
                               parsed.amounts, call_id, reply.reasoning))
        if self.aborted:
            return
        if parsed.status in P.REJECTIONS:
            self._abort(seat, parsed.status)
            return
        self._transcripts[seat].append(("assistant", reply.text))
        if kind == "message":
            self._used[seat] += 1
            other = _other(seat)
            if parsed.status == P.PROPOSAL:
                self.proposals[seat] = parsed.amounts
                self.phase = "respond"
                self._tell(other, self._text("must"))
                self._pending = [(other, "must_propose")]
            else:
                self._tell(other, self._text("relay", text=reply.text.strip()))
                if all(n >= self.max_messages for n in self._used.values()):
                    self.phase = "timeout"
                    for s in SEATS:
                        self._tell(s, self._text("timeout"))
                    self._pending = [(s, "timeout_prompt") for s in SEATS]
                else:
                    self._next = other if self._used[other] < self.max_messages else seat
                    self._pending = [(self._next, "message")]
        elif parsed.status != P.PROPOSAL:
            self._abort(seat, FREE_TEXT_AFTER_PROPOSAL if kind == "must_propose" else NO_PROPOSAL)
        else:
            self.proposals[seat] = parsed.amounts
            if kind == "must_propose":
                self.phase = "done"

    def _parse(self, text: str) -> P.Parsed:
        """Reads one answer (:func:`.parse.parse_message`; a replay may read otherwise)."""
        return P.parse_message(text, self._forms, self.instance.counts, self.lang)

    def outcome(self) -> tuple[bool, int | None, int | None]:
        """(compatible, score_a, score_b); scores None when aborted."""
        if self.aborted or not self.done:
            return False, None, None
        pa, pb = self.proposals["a"], self.proposals["b"]
        inst = self.instance
        compatible = all(x + y <= c for x, y, c in zip(pa, pb, inst.counts, strict=True))
        if not compatible:
            return False, 0, 0
        sa = sum(x * v for x, v in zip(pa, inst.values_a, strict=True))
        sb = sum(y * v for y, v in zip(pb, inst.values_b, strict=True))
        return True, sa, sb
