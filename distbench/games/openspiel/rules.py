"""What a model is shown and how its answer is read.

The prompt: a short rules text for the supported games (:data:`RULES`; any other game gets
OpenSpiel's own description, its long name and parameters, and the run warns), which seat the
model plays, its **information state string** exactly as OpenSpiel writes it, and its legal
actions numbered 1..m, each by its name (``state.action_to_string``). The prompt asks for
``Action: <number>``; its wording ("Choose one of your m actions") is the matrix family's, so
the project's mock server answers it as it answers a pure matrix question.

The answer is read strictly (:func:`parse_move`): the whole answer naming exactly one legal
action (its name, optionally after ``Action:``), or else the project's pure-action parser
(:func:`distbench.games.answers.parse.parse_pure`) on the numbers 1..m. Anything else (no
action, an ambiguous answer, a number out of range) is not a move: the game ends as a forfeit
of that player, with the raw text and the status kept. No action is ever substituted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from distbench.games.answers.logprob import DEFAULT_CUE
from distbench.games.answers.parse import ParseStatus, parse_pure

RULES: dict[str, str] = {
    "kuhn_poker": (
        "Kuhn poker. A deck of three cards: Jack (0), Queen (1), King (2). Each player antes "
        "1 chip and is dealt one card, which the other does not see. Player 0 acts first. "
        "'Pass' checks or folds, 'Bet' puts 1 more chip in (a bet or a call). Pass-pass, or "
        "bet-call: the higher card wins the pot. Bet-pass (a fold): the bettor wins the pot. "
        "The information state is your card (0, 1 or 2) followed by the moves so far: p = "
        "pass, b = bet. Your return is the chips you win (positive) or lose (negative)."),
    "leduc_poker": (
        "Leduc poker. A deck of six cards: two Jacks, two Queens, two Kings. Each player antes "
        "1 chip and gets one private card. Two betting rounds (at most two raises each, raise "
        "2 chips in round 1 and 4 in round 2); after the first round one public card is "
        "shown. Actions: Fold (give up the pot), Call (match the bet, or check), Raise. At "
        "showdown a pair with the public card wins, else the higher private card; equal "
        "cards split. The information state lists your private card, the public card (once "
        "shown), the pot, the chips left and the betting so far."),
    "tic_tac_toe": (
        "Tic-tac-toe on a 3x3 board. Player 0 plays x, player 1 plays o, in turn; a move "
        "places your mark on an empty cell, named x(row,col) or o(row,col) with rows and "
        "columns 0..2. Three of your marks in a row, column or diagonal win (+1, the other "
        "-1); a full board without a line is a draw (0). The information state is the moves "
        "so far as cell numbers (0-8, row by row); the board is shown below it (rows top to "
        "bottom, '.' empty)."),
    "liars_dice": (
        "Liar's Dice. Each player rolls their dice in secret. Players take turns bidding "
        "'q-f': at least q dice among ALL dice show face f (the highest face is wild). Each "
        "bid must be higher than the last (more dice, or the same number of a higher face). "
        "Instead of bidding you may call 'Liar' on the last bid: the dice are shown; if the "
        "bid holds, the caller loses (-1), otherwise the bidder loses. The information state "
        "is your dice followed by the bids so far."),
    "goofspiel": (
        "Goofspiel. Each player holds the cards 1..N; a deck of point cards 1..N is revealed "
        "one at a time. For each point card both players bid one of their remaining cards at "
        "the same time (here: in turn, without seeing the other's bid); the higher bid wins "
        "the point card's points, equal bids win nothing. Bid cards are used up. The player "
        "with more points at the end wins (+1; the other -1; equal points: 0). The "
        "information state shows your cards, the point cards, the points and past bids."),
}

REFERENCES: dict[str, str] = {
    "kuhn_poker": "equilibrium",
    "leduc_poker": "equilibrium",
    "tic_tac_toe": "minimax",
    "liars_dice": "none",
    "goofspiel": "none",
}
"""The exact reference (:mod:`.reference`) each game of :data:`RULES` has at its default
parameters: ``equilibrium`` (CFR+), ``minimax`` or ``none`` (too large; its regrets are NULL),
as ``distbench list games`` shows it (pinned by a test against :func:`.reference.compute`
for the quick ones; Leduc poker (100 s), Liar's Dice (1 die each, 6 sides) and goofspiel
(13 cards) checked by hand: the last two exceed the limits; smaller parameters may not, e.g.
``liars_dice(dice_sides=4)`` has an equilibrium reference)."""

PROMPT_CUE = "Action:"


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    """A parsed answer.

    Attributes:
        status: ``ok`` or why it is not a move (the project's parse statuses).
        index: 0-based index into the legal actions when ok, else None.
        detail: Short reason when not ok.
    """

    status: str
    index: int | None
    detail: str


def rules_text(game: Any, short: str) -> tuple[str, bool]:
    """(the rules shown for ``game``, whether they are distbench's own text)."""
    if short in RULES:
        return RULES[short], True
    gtype = game.get_type()
    params = ", ".join(f"{k}={v}" for k, v in sorted(game.get_parameters().items()))
    return (f"{gtype.long_name} (OpenSpiel's game '{gtype.short_name}'"
            f"{', ' + params if params else ''}), played by OpenSpiel's rules."), False


def prompt(rules: str, player: int, info_state: str, names: list[str], *,
           cue: str | None = None, observation: str | None = None) -> str:
    """The prompt of one move: rules, seat, information state (and, for a perfect-information
    game, its observation: the board) and the numbered legal actions. With ``cue`` (logprob
    mode) it ends with the cue, for a completion."""
    m = len(names)
    lines = [
        "You are playing a two-player game.",
        "",
        f"Rules: {rules}",
        "",
        f"You are player {player}.",
        "Your information state (OpenSpiel's notation):",
        info_state.strip() or "(empty: no move yet)",
        "",
    ]
    if observation:
        lines += ["What you see now:", observation.rstrip(), ""]
    lines += [
        "Your legal actions:",
        *(f"Action {k + 1}: {name}" for k, name in enumerate(names)),
        "",
        f"Choose one of your {m} actions to play now, to maximise your expected return.",
    ]
    if cue is not None:
        return "\n".join(lines) + "\n\n" + cue
    lines.append(f"Answer with '{PROMPT_CUE} <number>' on the last line (a number from 1 to {m}).")
    return "\n".join(lines)


def logprob_prompt(rules: str, player: int, info_state: str, names: list[str]) -> str:
    """The completion prompt of logprob mode, ending with the project's cue."""
    return prompt(rules, player, info_state, names, cue=DEFAULT_CUE)


_PREFIX = re.compile(r"^\s*(?:action|answer|move)\s*[:=]\s*", re.IGNORECASE)


def parse_move(text: str, names: list[str], *, continuation: bool = False) -> MoveAnswer:
    """Reads one answer (module docstring). Never raises on a string."""
    bare = _PREFIX.sub("", text.strip().strip("*`").strip()).rstrip(".").strip()
    lowered = [n.lower() for n in names]
    if bare and lowered.count(bare.lower()) == 1:
        return MoveAnswer(ParseStatus.OK.value, lowered.index(bare.lower()), "")
    answer = parse_pure(text, len(names), continuation=continuation)
    if answer.ok:
        return MoveAnswer(ParseStatus.OK.value, answer.action, "")
    return MoveAnswer(answer.status.value, None, answer.detail)
