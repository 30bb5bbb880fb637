"""What a skilled mock model (``mock-nash90``) answers to the prompts of the families other
than the matrix one, read from their wording (the mock server may know the games' prompts).

A skilled answer is drawn in a share ``skill`` of the answers (:class:`MockAnswerer` decides
which, per sample); every other answer is the dummy's (a uniformly random action), so two
mock models of different skill differ in a known order in every family:

- **bimatrix** (a payoff table of ``(row, column)`` cells, the model in the row or column
  seat) and **repeated** (one round of a 2x2 stage game, "If you play Action a and they play
  Action o: you get X, they get Y"): a tournament counts a game as won by the seat with the
  higher score, so the skilled player plays to win it: the row player's maximin strategy of
  the zero-sum game of score differences ``D = own - other`` (each seat's payoffs scaled to
  its own range first, as a bimatrix seat's score is), its safest pure action (best worst
  case) in pure mode. In a prisoner's dilemma that is to defect, whoever the opponent.
- **openspiel** (a rules text of :data:`distbench.games.openspiel.rules.RULES` and an
  information state): a draw from the exact reference's equilibrium policy at that
  information state (games at their default parameters with an equilibrium reference: Kuhn
  and Leduc poker, ...); other games (tic-tac-toe's minimax, parameters) get the dummy's
  answer.
- **negotiation** (the conversation of a seat, its introduction first: the items, its own
  values, the proposal keyword in the format example): the skilled player makes its secret
  proposal at once, in the protocol's form, asking for half of every type it values (the odd
  item of a type when it values that type above its average), so it never breaks the
  protocol and its proposal fits any other asking for no more than the rest
  (:func:`negotiation_answer`). An unskilled answer is the dummy's free text,
  which aborts the episode when a proposal is due (the seat that aborts scores lowest in a
  tournament).
- **fog** (a turn's observation, :func:`distbench.games.fog.text.render_observation`): the
  skilled player answers valid JSON (:func:`fog_answer`): its sovereign fortifies (or steps
  off the outer ring towards the centre), every other force moves a step towards the nearest
  living enemy, and its beliefs are flat; an unskilled answer is the dummy's text, which the
  parser reads as ``no_json`` (a tournament seat with an invalid answer forfeits its game).
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np

__all__ = ["difference_game", "fog_answer", "negotiation_answer", "openspiel_move", "skilled_answer", "safest"]

_BIMATRIX_ROW = re.compile(r"^Row (\d+)\s+((?:\(\s*-?[0-9][0-9.e+-]*,\s*-?[0-9][0-9.e+-]*\)\s*)+)$",
                           re.MULTILINE)
_CELL = re.compile(r"\(\s*(-?[0-9][0-9.e+-]*),\s*(-?[0-9][0-9.e+-]*)\)")
_SEAT = re.compile(r"You are the (row|column) player")
_REPEATED_CELL = re.compile(r"If you play Action ([12]) and they play Action ([12]): you get "
                            r"(-?[0-9][0-9.e+-]*), they get (-?[0-9][0-9.e+-]*)\.")
_RULES_LINE = re.compile(r"^Rules: (.*)$", re.MULTILINE)
_INFO = re.compile(r"Your information state \(OpenSpiel's notation\):\n(.*?)\n\n", re.DOTALL)
_LEGAL = re.compile(r"^Action (\d+): ", re.MULTILINE)
# a negotiation introduction (distbench.games.negotiation.prompts, any language): the items
# line ("...: 3 hats, 2 balls."), the values line ("...: hats: 4 points each; balls: ..."),
# the format example ("[Proposal: 1 hat, 2 balls]")
_ITEMS = re.compile(r"^[^\n]*?: ((?:\d+ [^,\n]+?)(?:, \d+ [^,\n]+?)*)\.$", re.MULTILINE)
_VALUES = re.compile(r"^[^\n]*?\): ((?:[^:;\n]+: [^;\n]*?\d+[^;\n]*)(?:; [^:;\n]+: [^;\n]*?\d+[^;\n]*)*)\.$",
                     re.MULTILINE)
_EXAMPLE = re.compile(r"\[(\w+): \d+ ")
# a fog observation (distbench.games.fog.text.render_observation)
_FOG_BOARD = re.compile(r"Board (\d+)x\d+, rows")
_FOG_OWN = re.compile(r"^  F(\d+) at row (\d+) col (\d+), power \d+( SOVEREIGN)?$", re.MULTILINE)
_FOG_ENEMY = re.compile(r"^  E(\d+) (?:at row (\d+) col (\d+)|dead)$", re.MULTILINE)
_FOG_PREFIX = '{"orders": {'  # completion style: the prompt ends with the JSON's start


def _scaled(p: np.ndarray) -> np.ndarray:
    span = float(p.max() - p.min())
    return (p - p.min()) / span if span > 0 else np.zeros_like(p)


def difference_game(own: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(m, n) the zero-sum game of score differences of a seat whose actions are the rows:
    its payoffs minus the other's, each scaled to its own range [0, 1]."""
    return _scaled(np.asarray(own, dtype=np.float64)) - _scaled(np.asarray(other, dtype=np.float64))


def safest(payoff: np.ndarray) -> tuple[np.ndarray, int]:
    """The row player's maximin strategy (m,) of a zero-sum ``payoff`` (m, n), solved by the
    project's kernel, and its safest pure action (0-based: the best worst case; ties to the
    more likely in the maximin strategy)."""
    from distbench.kernels.zero_sum import solve_zero_sum

    payoff = np.asarray(payoff, dtype=np.float64)
    x = np.asarray(solve_zero_sum(payoff[None]).row[0], dtype=np.float64)
    worst = payoff.min(axis=1)
    return x, max(range(payoff.shape[0]), key=lambda i: (worst[i], x[i]))


def _bimatrix_game(prompt: str) -> np.ndarray | None:
    """The difference game of a bimatrix prompt, the model's actions as rows; None when the
    prompt is not one."""
    seat = _SEAT.search(prompt)
    rows = _BIMATRIX_ROW.findall(prompt)
    if seat is None or not rows:
        return None
    cells = [[(float(a), float(b)) for a, b in _CELL.findall(text)] for _, text in rows]
    if len({len(r) for r in cells}) != 1:
        return None
    a = np.array([[c[0] for c in r] for r in cells])
    b = np.array([[c[1] for c in r] for r in cells])
    return difference_game(a, b) if seat.group(1) == "row" else difference_game(b.T, a.T)


def _repeated_game(prompt: str) -> np.ndarray | None:
    """The difference game of one round of a repeated prompt; None when it is not one."""
    found = _REPEATED_CELL.findall(prompt)
    if len(found) != 4:
        return None
    own, other = np.zeros((2, 2)), np.zeros((2, 2))
    for a, o, mine, theirs in found:
        own[int(a) - 1, int(o) - 1] = float(mine)
        other[int(a) - 1, int(o) - 1] = float(theirs)
    return difference_game(own, other)


@functools.lru_cache(maxsize=16)
def _game_of_rules(rules: str) -> str | None:
    from distbench.games.openspiel.rules import RULES

    return next((name for name, text in RULES.items() if text == rules), None)


def openspiel_move(prompt: str, draw: float) -> int | None:
    """The 0-based legal action a skilled player picks in an OpenSpiel prompt: the action
    of the reference's equilibrium at its information state that the cumulative probability
    reaches at ``draw`` (in [0, 1)); None when the prompt is not one or its game has no
    equilibrium reference there."""
    rules = _RULES_LINE.search(prompt)
    info = _INFO.search(prompt)
    if rules is None or info is None:
        return None
    game = _game_of_rules(rules.group(1).strip())
    if game is None:
        return None
    from distbench.games.openspiel.reference import reference

    ref = reference(game)
    state = info.group(1).strip()
    known = ref.infostates.get(state)
    policy = ref.policy.get(state)
    if known is None or not policy:
        return None
    legal = known[1]
    if len(legal) != len(_LEGAL.findall(prompt)):
        return None
    cumulative = np.cumsum([policy.get(a, 0.0) for a in legal])
    if cumulative[-1] <= 0:
        return None
    return int(min(np.searchsorted(cumulative / cumulative[-1], draw, side="right"),
                   len(legal) - 1))


def negotiation_answer(conversation: str) -> str | None:
    """A skilled negotiator's answer to a seat's conversation (its introduction first): its
    secret proposal of half of every type it values, the odd item of a type counted for it
    when it values that type above its average; None when the text is not a negotiation."""
    items, values, example = (_ITEMS.search(conversation), _VALUES.search(conversation),
                              _EXAMPLE.search(conversation))
    if items is None or values is None or example is None:
        return None
    counts = [entry.split(" ", 1) for entry in items.group(1).split(", ")]
    points = [int(re.findall(r"\d+", entry.split(":", 1)[1])[0])
              for entry in values.group(1).split("; ")]
    if len(points) != len(counts):
        return None
    mean = sum(points) / len(points)
    wanted = []
    for (n, name), v in zip(counts, points, strict=True):
        k = int(n) // 2 + (int(n) % 2 if v > mean else 0)  # the odd one of a type it prizes
        if v > 0 and k:
            wanted.append(f"{k} {name}")
    return f"[{example.group(1)}: {', '.join(wanted)}]"


def _step(frm: tuple[int, int], to: tuple[int, int]) -> str:
    """The direction (N = towards row 0) of one step from ``frm`` towards ``to``."""
    dr, dc = to[0] - frm[0], to[1] - frm[1]
    if abs(dr) >= abs(dc):
        return "S" if dr > 0 else "N"
    return "E" if dc > 0 else "W"


def fog_answer(prompt: str, completion: bool) -> str | None:
    """A skilled fog player's JSON answer to a turn's observation (see the module docstring;
    in completion style without the JSON's start, which the prompt holds); None when the
    prompt is not a fog turn."""
    board = _FOG_BOARD.search(prompt)
    own = _FOG_OWN.findall(prompt)
    enemies = _FOG_ENEMY.findall(prompt)
    if board is None or not own or not enemies:
        return None
    n = int(board.group(1))
    centre = ((n - 1) // 2, (n - 1) // 2)
    living = [(int(r), int(c)) for _, r, c in enemies if r]
    orders = {}
    for i, r, c, sovereign in own:
        at = (int(r), int(c))
        if sovereign:
            ring = min(at[0], at[1], n - 1 - at[0], n - 1 - at[1]) == 0
            orders[f"F{i}"] = f"move {_step(at, centre)}" if ring and at != centre else "fortify"
        elif living:
            near = min(living, key=lambda e: (abs(e[0] - at[0]) + abs(e[1] - at[1]), e))
            orders[f"F{i}"] = f"move {_step(at, near)}" if near != at else "fortify"
        else:
            orders[f"F{i}"] = "hold"
    beliefs = {f"E{j}": [0.2] * 5 for j, r, _ in enemies if r}
    text = json.dumps({"orders": orders, "beliefs": beliefs, "my_objective": "dominate",
                       "confidence": 0.5})
    return text[len(_FOG_PREFIX):] if completion and prompt.rstrip().endswith(_FOG_PREFIX) \
        else text


def skilled_answer(prompt: str, mode: str, m: int, draw: float) -> tuple[str, object] | None:
    """A skilled player's answer to a bimatrix, repeated or OpenSpiel prompt of ``m`` actions:
    ``("pure", k)`` with k 1-based, or ``("mixed", [p1..pm])``; None for any other prompt (or
    one whose game cannot be read). ``draw`` in [0, 1) picks among an equilibrium's actions."""
    move = openspiel_move(prompt, draw) if "OpenSpiel's notation" in prompt else None
    if move is not None:
        return ("pure", move + 1) if mode == "pure" else None
    game = _bimatrix_game(prompt)
    if game is None:
        game = _repeated_game(prompt)
    if game is None or game.shape[0] != m:
        return None
    x, k = safest(game)
    return ("pure", k + 1) if mode == "pure" else ("mixed", [float(p) for p in x])
