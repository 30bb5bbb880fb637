"""distbench's own words for GAMA-Bench's eight games, and the parser of the answers.

The conversation has GAMA's shape (GAMES.md §8): a system message describing the game; each
round a request (sent, not kept); then the round's report, kept, in three parts: a user
message with the round's outcome ending "You chose:", an assistant turn that is the canonical
echo of the seat's *parsed* answer (``Answer: 37``, never its raw text) and a user message with
what the seat got. Seats that did not act in a round (Battle Royale's other players) get the
outcome as one user message. Public Goods keeps only the last :data:`GOODS_WINDOW` rounds of
reports (GAMA's sliding window from round 11).

Every request asks for one final line ``Answer: <value>``; :func:`parse_answer` reads the last
such line and checks the value's range; an answer without one but with a JSON object of GAMA's
key (or ``value``, the replay backend's) is read as GAMA reads it (:func:`_gama_value`). The
statuses: the statuses are ``ok``, ``no_answer`` (no
``Answer:`` line nor JSON), ``bad_value`` (not of the game's kind) and ``out_of_range``.
Words may be given as numbers where the request says so (bar: 1 go, 0 stay; diner: 1 costly,
0 cheap; pirate votes: 1 accept, 0 reject; battle: the player's number, 0 to shoot into the
air), which is also how the dummy model, which answers integers, plays every game.

The words are distbench's own (GAMA-Bench's templates are read from a checkout the user points
to, never shipped).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from distbench.games.answers.reasoning import COT_INSTRUCTION
from distbench.games.gama import rules

GOODS_WINDOW = 10
"""Public Goods: rounds of reports kept in the conversation (GAMA keeps a sliding window)."""

_ANSWER = re.compile(r"answer\s*[:=]\s*(.+)", re.IGNORECASE)
_INT = re.compile(r"[-+]?\d+(?:\.0+)?")
_JSON_KEYS = {"guessing": ("chosen_number",), "bar": ("decision", "option"),
              "dollar": ("proposal", "bid_amount", "bid"), "goods": ("tokens_contributed",),
              "diner": ("chosen_dish", "option"), "auction": ("bid",),
              "battle": ("target",), "pirate": ("proposal", "decision")}
_WORDS = {"bar": {"go": "go", "1": "go", "stay": "stay", "0": "stay"},
          "diner": {"cheap": "cheap", "0": "cheap", "costly": "costly", "1": "costly",
                    "expensive": "costly"},
          "vote": {"accept": "accept", "1": "accept", "reject": "reject", "0": "reject"}}


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``value`` (the rules' kind: int, word, None for a deliberate miss, a
    plan as a list) when ``status`` is ``ok``; ``detail`` says why not."""

    value: Any
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def seat_name(seat: int) -> str:
    """How the prompts name a seat: ``Player 1`` for seat 0."""
    return f"Player {seat + 1}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def describe(state: rules.GameState, seat: int) -> str:
    """The system message of ``seat`` (the game's rules in distbench's words)."""
    p = state.params
    n, t = p.players, p.rounds
    head = f"This is a game of {n} players that lasts {t} rounds."
    game = state.game
    if game == "guessing":
        body = (f"Each round every player picks a whole number from {p.min} to {p.max}. The "
                f"round is won by whoever picks the number closest to {p.ratio_str} of the "
                "average of all the numbers picked that round, yours included.")
    elif game == "bar":
        body = (f"Each round every player decides to go to the bar or stay home. If at most "
                f"{p.ratio_str} of the players go, everyone who went gets {p.max}; if more "
                f"go, the bar is crowded and everyone who went gets {p.min}. Staying home "
                f"always gets {p.home}.")
        if p.mode == "implicit":
            body += " Players who stay home are not told how crowded the bar was."
    elif game == "dollar":
        body = (f"Each round the players share {p.golds} golds: each asks for an amount. If "
                f"the amounts add up to at most {p.golds}, everyone gets what they asked "
                "for; otherwise nobody gets anything.")
    elif game == "goods":
        body = (f"Each round every player holds {p.tokens} tokens and chooses how many to put "
                f"in a common pot. The pot is multiplied by {_num(p.multiplier)} and shared "
                "equally among all players; each keeps the tokens they did not put in.")
    elif game == "diner":
        body = (f"Each round the players dine together and each orders a cheap dish (price "
                f"{p.cheap_cost}, worth {p.cheap_utility} to you) or a costly one (price "
                f"{p.exp_cost}, worth {p.exp_utility} to you). The bill is split equally; "
                "your gain is what your dish is worth to you minus your share of the bill.")
    elif game == "auction":
        rule = "pays its own bid" if p.mode == "first" else "pays the second-highest bid"
        body = ("Each round an item is sold in a sealed-bid auction. Each player is told what "
                "the item is worth to them and makes one secret bid; the highest bid wins the "
                f"item and {rule} (ties are drawn at random). The winner gains its value minus "
                "what it paid; the others gain nothing.")
    elif game == "battle":
        rates = ", ".join(f"{seat_name(s)} {rules.hit_rate(p, s)}%" for s in range(n))
        body = ("The players take turns shooting, in the order of their hit rates, lowest "
                f"first: {rates}. On your turn you shoot at a living player (hit with your "
                "hit rate: they are out) or into the air. The last player standing wins; the "
                "game also ends after the last round.")
    elif game == "pirate":
        body = (f"The players are pirates who found {p.gold} golds; {seat_name(0)} is the "
                "most senior, then Player 2, and so on. The most senior pirate still on board "
                "proposes how to share the golds, and every pirate on board votes (the "
                "proposer accepts its own plan). If at least half accept, the golds are "
                "shared that way and the game ends; otherwise the proposer is thrown "
                "overboard and the next one proposes. Your first goal is to stay on board, "
                "the second to get as many golds as you can.")
    else:  # pragma: no cover - the game names are checked before
        raise ValueError(f"unknown gama game {game!r}")
    # the seat last, so that every seat's conversation shares the longest prefix (a local
    # model reuses the evaluated prefix of the previous prompt)
    return f"{head}\n\n{body}\n\nYou are {seat_name(seat)}."


def _format(line: str, cot: bool) -> str:
    return (f"{COT_INSTRUCTION} The final line must be: {line}" if cot
            else f"End your reply with one line: {line}")


def request(state: rules.GameState, seat: int, *, cot: bool = False,
            plan: list[int] | None = None) -> str:
    """The request of this round to ``seat`` (``plan``: a pirate voter's proposal)."""
    p = state.params
    t = state.round + 1
    game = state.game
    if game == "guessing":
        ask, line = "Pick your number.", f"Answer: <a whole number from {p.min} to {p.max}>"
    elif game == "bar":
        ask, line = "Go to the bar or stay home?", "Answer: go, or Answer: stay (1 is go, 0 is stay)"
    elif game == "dollar":
        ask, line = "How many golds do you ask for?", f"Answer: <a whole number from 0 to {p.golds}>"
    elif game == "goods":
        ask, line = ("How many of your tokens do you put in the pot?",
                     f"Answer: <a whole number from 0 to {p.tokens}>")
    elif game == "diner":
        ask, line = ("Which dish do you order?",
                     "Answer: cheap, or Answer: costly (0 is cheap, 1 is costly)")
    elif game == "auction":
        value = rules.valuations(p, t)[seat]
        ask = f"This round's item is worth {value} to you. What do you bid?"
        line = f"Answer: <a whole number from 0 to {p.valuation_max}>"
    elif game == "battle":
        living = ", ".join(f"{seat_name(s)} ({rules.hit_rate(p, s)}%)" for s in state.alive
                           if s != seat)
        ask = (f"It is your turn to shoot; you hit with {rules.hit_rate(p, seat)}%. Players "
               f"still in the game besides you: {living}.")
        line = "Answer: <the number of the player you shoot at>, or Answer: 0 to shoot into the air"
    elif game == "pirate":
        alive = list(state.alive)
        if plan is None:
            names = ", ".join(seat_name(s) for s in alive)
            ask = (f"You are the most senior pirate on board: propose how to share the "
                   f"{p.gold} golds among the pirates on board, in order of seniority: {names}.")
            line = f"Answer: <{len(alive)} whole numbers separated by commas, adding up to {p.gold}>"
        else:
            shown = ", ".join(f"{seat_name(s)} {g}" for s, g in zip(alive, plan, strict=True))
            mine = plan[alive.index(seat)]
            ask = (f"{seat_name(alive[0])} proposes: {shown}. You would get {mine}. Do you "
                   "accept?")
            line = "Answer: accept, or Answer: reject (1 is accept, 0 is reject)"
    else:  # pragma: no cover
        raise ValueError(f"unknown gama game {game!r}")
    return f"Round {t}. {ask}\n\n{_format(line, cot)}"


def echo(game: str, value: Any, *, proposer: bool = False) -> str:
    """The canonical assistant turn of a parsed answer (kept in the conversation)."""
    if game == "battle":
        return "Answer: 0" if value is None else f"Answer: {int(value) + 1}"
    if game == "pirate" and proposer:
        return "Answer: " + ", ".join(str(g) for g in value)
    return f"Answer: {value}"


def report(before: rules.GameState, outcome: rules.RoundOutcome, seat: int,
           answer: Any) -> list[tuple[str, str]]:
    """The round's report to ``seat`` as conversation messages: (user, assistant echo, user)
    for a seat that answered, one user message for one that did not."""
    p = before.params
    game = before.game
    rec, t = outcome.record, outcome.round
    pay = outcome.payoffs.get(seat)
    acted = seat in outcome.actors
    if game == "guessing":
        head = (f"Round {t}: the average was {rec['mean']:.2f}, the target ({p.ratio_str} of "
                f"it) {rec['mean_ratio']:.2f}, and the winning number {rec['winner']}.")
        tail = "You won this round." if seat in outcome.winners else "You did not win this round."
    elif game == "bar":
        crowded = rec["winner"] != "go"
        if p.mode == "explicit" or answer == "go":
            head = (f"Round {t}: {rec['go_num']} of {p.players} players went to the bar; it "
                    f"was {'crowded' if crowded else 'not crowded'}.")
        else:
            head = f"Round {t} is over."
        tail = f"You got {_num(pay)}."
    elif game == "dollar":
        head = f"Round {t}: the players asked for {rec['total_proposal']} golds in all (there are {p.golds})."
        tail = f"You got {_num(pay)} golds."
    elif game == "goods":
        head = (f"Round {t}: {rec['total_tokens']} tokens went in the pot, so every player "
                f"got {_num(outcome.extra['share'])} back.")
        tail = f"You ended the round with {_num(pay)} tokens."
    elif game == "diner":
        head = (f"Round {t}: {rec['cheap_player']} players ordered the cheap dish and "
                f"{p.players - rec['cheap_player']} the costly one; each paid "
                f"{_num(rec['avg_cost'])}.")
        tail = f"Your gain this round: {_num(pay)}."
    elif game == "auction":
        winner = int(str(rec["bid_winner"]).split("_")[-1])
        head = (f"Round {t}: the highest bid was {rec['bid_winner_proposed']}, by "
                f"{seat_name(winner)}, who paid {rec['bid_winner_payment']}.")
        tail = f"Your gain this round: {_num(pay)}."
    elif game == "battle":
        shooter = outcome.actors[0]
        target = outcome.extra.get("target")
        if target is None:
            head = f"Round {t}: {seat_name(shooter)} shot into the air."
        else:
            hit = "hit: they are out" if outcome.extra.get("hit") else "missed"
            head = f"Round {t}: {seat_name(shooter)} shot at {seat_name(int(target))} and {hit}."
        alive = ", ".join(seat_name(s) for s in outcome.survivors)
        tail = f"Still in the game: {alive}."
        if not acted:
            return [("user", f"{head} {tail}")]
    elif game == "pirate":
        alive = list(before.alive)
        plan = rec["gold_distribution"]
        shown = ", ".join(f"{seat_name(s)} {g}" for s, g in zip(alive, plan, strict=True))
        head = (f"Round {t}: {seat_name(alive[0])} proposed {shown}; "
                f"{outcome.extra['accepted']} of {len(alive)} pirates accepted.")
        tail = ("The plan passed: the golds are shared that way." if outcome.extra["passed"]
                else f"The plan failed: {seat_name(alive[0])} was thrown overboard.")
    else:  # pragma: no cover
        raise ValueError(f"unknown gama game {game!r}")
    proposer = game == "pirate" and seat == list(before.alive)[0]
    return [("user", f"{head} You chose:"), ("assistant", echo(game, answer, proposer=proposer)),
            ("user", tail)]


def answer_bound(state: rules.GameState, *, proposer: bool = False) -> int:
    """The largest integer a seat's answer may be this round (the dummy model's task size)."""
    p = state.params
    return {"guessing": getattr(p, "max", 1), "bar": 1, "dollar": getattr(p, "golds", 1),
            "goods": getattr(p, "tokens", 1), "diner": 1,
            "auction": getattr(p, "valuation_max", 1), "battle": p.players,
            "pirate": getattr(p, "gold", 1) if proposer else 1}[state.game]


def _last_answer(text: str) -> str | None:
    found = [m.group(1).strip() for m in _ANSWER.finditer(text)]
    return found[-1].strip().strip("`*.\"'") if found else None


def _from_json(game: str, text: str) -> tuple[bool, Any]:
    """(found, value) of GAMA's JSON answer: the object from the first ``{`` to the last
    ``}``, its key for the game (or ``value``, as the replay backend writes it)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return False, None
    try:
        obj = json.loads(text[start:end + 1])
    except ValueError:
        return False, None
    if not isinstance(obj, dict):
        return False, None
    for key in (*_JSON_KEYS[game], "value"):
        if key in obj:
            return True, obj[key]
    return False, None


def _gama_value(state: rules.GameState, value: Any, *, proposer: bool) -> Parsed:
    """An answer in GAMA's JSON format read as GAMA reads it: Guess an integer in its range
    (GAMA re-asks otherwise); Dollar, Goods and Auction any integer (GAMA checks no range);
    Diner any text (only exactly ``cheap`` is the cheap dish); Battle Royale a 0-based player
    id (``3``, ``player_3``) or ``null``; the Pirate Game a list of golds or accept/reject."""
    game = state.game
    text = str(value).strip()
    if game == "diner":
        return Parsed(text, "ok")
    if game == "bar" or (game == "pirate" and not proposer):
        allowed = ("go", "stay") if game == "bar" else ("accept", "reject")
        return (Parsed(text, "ok") if text in allowed
                else Parsed(None, "bad_value", f"{text!r} is not one of {list(allowed)}"))
    if game == "pirate":
        golds = value if isinstance(value, list) else None
        if golds is None or any(_integer(str(g)) is None for g in golds):
            return Parsed(None, "bad_value", f"{text!r} is not a list of whole numbers")
        try:
            return Parsed(rules.check_plan(state, [_integer(str(g)) for g in golds]), "ok")
        except ValueError as exc:
            return Parsed(None, "out_of_range", str(exc))
    if game == "battle":
        if value is None or text == "null" or "-1" in text:
            return Parsed(None, "ok")
        seat = _integer(text.rsplit("_", 1)[-1])
        return (Parsed(seat, "ok") if seat is not None
                else Parsed(None, "bad_value", f"{text!r} is not a player id"))
    number = _integer(text)
    if number is None:
        return Parsed(None, "bad_value", f"{text!r} is not a whole number")
    p = state.params
    if game == "guessing" and not p.min <= number <= p.max:
        return Parsed(None, "out_of_range", f"{number} is outside {p.min}..{p.max}")
    return Parsed(number, "ok")


def _integer(text: str) -> int | None:
    m = _INT.fullmatch(text.strip())
    return int(float(m.group(0))) if m else None


def parse_answer(state: rules.GameState, seat: int, text: str | None, *,
                 proposer: bool = False, plan: list[int] | None = None) -> Parsed:
    """The answer of ``seat`` this round read from ``text``, range-checked (module docstring).

    Args:
        state: The game before the round.
        seat: Who answered.
        text: The reply (None: nothing to read).
        proposer: Pirate Game: the answer is a plan.
        plan: Pirate Game: the plan a voter votes on.
    """
    if not text:
        return Parsed(None, "no_answer", "empty reply")
    game = state.game
    raw = _last_answer(text)
    if raw is None:
        found, value = _from_json(game, text)
        if found:
            return _gama_value(state, value, proposer=proposer)
        return Parsed(None, "no_answer", "no 'Answer:' line")
    word = raw.lower().split()[0] if raw.split() else ""
    p = state.params
    if game in ("bar", "diner") or (game == "pirate" and not proposer):
        table = _WORDS["vote" if game == "pirate" else game]
        if word not in table:
            return Parsed(None, "bad_value", f"{raw!r} is not one of {sorted(set(table.values()))}")
        return Parsed(table[word], "ok")
    if game == "pirate":
        parts = [x for x in re.split(r"[\s,;\[\]]+", raw) if x]
        golds = [_integer(x) for x in parts]
        if not golds or any(g is None for g in golds):
            return Parsed(None, "bad_value", f"{raw!r} is not a list of whole numbers")
        try:
            return Parsed(rules.check_plan(state, golds), "ok")
        except ValueError as exc:
            return Parsed(None, "out_of_range", str(exc))
    value = _integer(word.rstrip(",.;"))
    if game == "battle":
        if value is None:
            m = re.fullmatch(r"player[_ ]?(\d+)", raw.strip().lower())
            value = int(m.group(1)) if m else None
        if value is None:
            if word in ("null", "none", "air", "miss"):
                return Parsed(None, "ok")
            return Parsed(None, "bad_value", f"{raw!r} is not a player's number")
        if value == 0:
            return Parsed(None, "ok")
        target = value - 1
        if target == seat or target not in state.alive:
            return Parsed(None, "out_of_range", f"{seat_name(target)} is not a living opponent")
        return Parsed(target, "ok")
    if value is None:
        return Parsed(None, "bad_value", f"{raw!r} is not a whole number")
    low, high = {"guessing": (getattr(p, "min", 0), getattr(p, "max", 0)),
                 "dollar": (0, getattr(p, "golds", 0)), "goods": (0, getattr(p, "tokens", 0)),
                 "auction": (0, getattr(p, "valuation_max", 0))}[game]
    if not low <= value <= high:
        return Parsed(None, "out_of_range", f"{value} is outside {low}..{high}")
    return Parsed(value, "ok")
