"""GAMA-Bench's own prompts, rendered from a checkout the user points to
(``--option templates=PATH``): nothing of GAMA's wording is shipped with distbench.

GAMA keeps its words in ``prompt_template/<game>/{description,request,report}_<v>.txt``
(a header, a ``<commentblockmarker>###</commentblockmarker>`` line, then the text with
``!<INPUT i>!`` slots; ``<part>///</part>`` splits a report into the user / assistant / user
turns), ``cot_prompts/cot<k>.txt`` and ``role_prompts/role<k>.txt``; the answer-format sentence
of each request and a few short report phrases live in ``games/<game>.py`` and are read from
there (:func:`code_string`). With them, the round-1 description, request and report rendered
here for a record's parameters equal the ones GAMA stored, byte for byte
(``benchmarks/bench_gama_templates.py``).

API: :func:`open_templates`, :func:`render` (GAMA's substitution), :func:`description`,
:func:`request`, :func:`report`, :func:`cot_message`, :func:`role_message`.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from distbench.games.gama.rules import (
    GAMA_FOLDERS,
    GameState,
    RoundOutcome,
    hit_rate,
    valuations,
)

MARKER = "<commentblockmarker>###</commentblockmarker>"
PART = "<part>///</part>"


class TemplateError(ValueError):
    """A checkout without the template or code a prompt needs (one line naming the file)."""


@dataclass(frozen=True)
class Templates:
    """A GAMA-Bench checkout's prompts.

    Attributes:
        root: The checkout (holds ``prompt_template/``; ``games/`` for the answer formats).
        version: Template version 'v1'..'v5'.
    """

    root: Path
    version: str = "v1"

    @property
    def folder(self) -> Path:
        """The checkout's ``prompt_template`` folder."""
        return self.root / "prompt_template"


def open_templates(path: str | Path, version: str = "v1") -> Templates:
    """The templates of a checkout (``path``: the checkout or its ``prompt_template``
    folder). TemplateError (one line naming the option) when there is none."""
    root = Path(path).expanduser()
    if root.name == "prompt_template":
        root = root.parent
    if not (root / "prompt_template").is_dir():
        raise TemplateError(f"--option templates={path}: no prompt_template folder there "
                            "(give the path of a GAMA-Bench checkout)")
    if version not in ("v1", "v2", "v3", "v4", "v5"):
        raise TemplateError(f"--option version={version}: one of v1..v5")
    return Templates(root=root, version=version)


def read_template(path: Path) -> str:
    """A template's text after its comment block, stripped (GAMA's ``get_prompt``); read once
    per process (a game renders the same few templates thousands of times)."""
    return _read_template(str(path))


@lru_cache(maxsize=512)
def _read_template(name: str) -> str:
    path = Path(name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise TemplateError(f"{path}: no such template") from None
    if MARKER not in text:
        raise TemplateError(f"{path}: not a GAMA template (no {MARKER})")
    return text.split(MARKER)[1].strip()


def substitute(text: str, inputs: list[Any]) -> str | list[str]:
    """GAMA's substitution: ``!<INPUT i>!`` -> ``str(inputs[i])``, in order; a text with
    ``<part>///</part>`` becomes its stripped parts."""
    for index, item in enumerate(inputs):
        text = text.replace(f"!<INPUT {index}>!", str(item))
    if PART in text:
        return [p.strip() for p in text.split(PART)]
    return text


def render(t: Templates, relative: str, inputs: list[Any]) -> str | list[str]:
    """``prompt_template/<relative>`` rendered with ``inputs`` (see :func:`substitute`)."""
    return substitute(read_template(t.folder / relative), inputs)


def cot_message(t: Templates, cot: int | None) -> str:
    """GAMA's step-by-step sentence ``cot<k>`` with its leading space ('' for None)."""
    return " " + str(render(t, f"cot_prompts/cot{cot}.txt", [])) if cot else ""


def role_message(t: Templates, role: int | None) -> str:
    """GAMA's role prompt ``role<k>`` with its leading space ('' for None)."""
    return " " + str(render(t, f"role_prompts/role{role}.txt", [])) if role else ""


def _prompt_folder(game: str) -> str:
    return GAMA_FOLDERS[game]


def description(t: Templates, state: GameState, seat: int = 0, role: int | None = None) -> str:
    """The system message GAMA gives ``seat`` at the start of the game."""
    p = state.params
    g = state.game
    rounds = p.rounds
    role_msg = role_message(t, role)
    if g == "guessing":
        inputs = [p.players, rounds, p.min, p.max, p.ratio_str, role_msg]
    elif g == "bar":
        inputs = [p.players, rounds, p.ratio_str, p.max, p.min, p.home, role_msg]
    elif g == "dollar":
        inputs = [p.players, rounds, p.golds, role_msg]
    elif g == "goods":
        inputs = [p.players, rounds, _number(p.multiplier), role_msg]
    elif g == "diner":
        inputs = [p.players, rounds, p.exp_cost, p.exp_utility, p.cheap_cost, p.cheap_utility,
                  role_msg]
    elif g == "auction":
        inputs = [p.players, rounds, _auction_mode(p.mode), role_msg]
    elif g == "battle":
        inputs = [p.players, battle_roster(state), f"player_{seat}", hit_rate(p, seat),
                  seat + 1, role_msg]
    else:
        inputs = [p.players, p.gold, seat + 1, role_msg]
    return str(render(t, f"{_prompt_folder(g)}/description_{t.version}.txt", inputs))


def _number(value: float) -> Any:
    return int(value) if float(value).is_integer() else value


def _auction_mode(mode: str) -> str:
    return "second highest bid" if mode == "second" else "highest bid"


def battle_roster(state: GameState) -> str:
    """Battle Royale: the living players with their hit rates in shooting order, as GAMA
    prints them (a JSON list, ``indent=0``)."""
    rows = []
    for order, seat in enumerate(state.alive, start=1):
        rows.append({f"The {_ordinal(order)} player to shot": f"player_{seat}",
                     "hit_rate": f"{hit_rate(state.params, seat)}%"})
    return json.dumps(rows, indent=0)


def _ordinal(num: int) -> str:
    if 10 <= num % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(num % 10, "th")
    return f"{num}{suffix}"


def output_format(t: Templates, state: GameState, seat: int, cot: int | None = None,
                  proposer: bool = False) -> str:
    """The answer-format sentence that ends GAMA's request, read from the checkout's
    ``games/<game>.py`` (its step-by-step variant with ``cot``)."""
    p = state.params
    cot_msg = cot_message(t, cot)
    # each game's code assigns the cot sentence first, then the plain one; the Pirate Game
    # assigns the proposer's pair, then the voters'
    index = (0 if cot else 1) + (2 if state.game == "pirate" and not proposer else 0)
    this = SimpleNamespace(min=getattr(p, "min", 0), max=getattr(p, "max", 0),
                           golds=getattr(p, "golds", 0))
    player = SimpleNamespace(tokens=[_number(state.tokens[seat]) if state.tokens else 0],
                             valuation=[_valuation(state, seat)])
    return code_string(t, state.game, "output_format", index, self=this, player=player,
                       cot_msg=cot_msg, g_input_0=seat + 1, g_input_2=p.players)


def _valuation(state: GameState, seat: int) -> int:
    if state.game != "auction":
        return 0
    return valuations(state.params, state.round + 1)[seat]


def plan_text(plan: list[int], first: int) -> str:
    """A pirate plan as GAMA prints the parsed proposal (a Python dict of ``'<k>-th'`` to golds,
    ``first`` the proposer's rank)."""
    return str({f"{first + i}-th": g for i, g in enumerate(plan)})


def request(t: Templates, state: GameState, seat: int, cot: int | None = None,
            plan: list[int] | dict | None = None) -> str:
    """The request GAMA sends ``seat`` in the next round. ``plan``: Pirate Game voters, the
    proposer's golds (a list, printed as GAMA prints a plan of integers) or the proposal
    object as the proposer wrote it (a dict, printed as is: GAMA prints the parsed JSON, so
    ``'98'`` and ``98`` differ). Its last sentence, the answer format, is read from the
    checkout's ``games/<game>.py``."""
    p = state.params
    g = state.game
    t_next = state.round + 1
    folder = _prompt_folder(g)
    if g == "pirate":
        proposer = state.alive[0]
        if seat == proposer:
            fmt = output_format(t, state, seat, cot, proposer=True)
            return str(render(t, f"{folder}/request2_{t.version}.txt", [seat + 1, p.gold, fmt]))
        if plan is None:
            raise ValueError("pirate: a voter's request needs the plan")
        golds = [int(g) for g in (plan.values() if isinstance(plan, dict) else plan)]
        text = str(plan) if isinstance(plan, dict) else plan_text(golds, proposer + 1)
        mine = golds[list(state.alive).index(seat)]
        fmt = output_format(t, state, seat, cot)
        return str(render(t, f"{folder}/request1_{t.version}.txt", [t_next, text, mine, fmt]))
    fmt = output_format(t, state, seat, cot)
    if g == "guessing":
        inputs = [t_next, p.ratio_str, p.min, p.max, fmt]
    elif g == "bar":
        inputs = [t_next, p.ratio_str, fmt]
    elif g == "dollar":
        inputs = [t_next, p.golds, fmt]
    elif g == "goods":
        inputs = [t_next, _number(state.tokens[seat]), fmt]
    elif g == "diner":
        inputs = [t_next, fmt]
    elif g == "auction":
        inputs = [t_next, _valuation(state, seat), fmt]
    else:
        inputs = [t_next, battle_roster(state), f"player_{seat}", hit_rate(p, seat),
                  list(state.alive).index(seat) + 1, fmt]
    return str(render(t, f"{folder}/request_{t.version}.txt", inputs))


def _parts(value: str | list[str]) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def report(t: Templates, before: GameState, outcome: RoundOutcome, seat: int,
           proposal: dict | None = None) -> list[str]:
    """The report GAMA gives ``seat`` after the round (``before``: the state the round was
    played from): its parts (user text, GAMA's canonical echo of the seat's answer as the
    assistant turn, user text). Battle Royale: the shooter's three parts then the report
    every living player gets (one part); Pirate Game: every pirate living before the round
    (``proposal``: the plan as the proposer wrote it, see :func:`request`)."""
    p = before.params
    g = before.game
    r = outcome.record
    n = p.players
    t_now = outcome.round
    folder = _prompt_folder(g)
    if g == "guessing":
        mine = outcome.answers[seat]
        msg = code_string(t, g, "won_msg", 0, won=mine == r["winner"])
        inputs = [t_now, r["mean"], p.ratio_str, f"{r['mean_ratio']:.2f}", r["winner"], mine, msg]
        return _parts(render(t, f"{folder}/report_{t.version}.txt", inputs))
    if g == "bar":
        mine = outcome.answers[seat]
        utility = _number(outcome.payoffs[seat])
        if p.mode == "implicit" and mine == "stay":
            return _parts(render(t, f"bar_game/report_implicit_{t.version}.txt",
                                 [t_now, mine, utility]))
        number = code_string(t, g, "number_msg", 0, round_record=r)
        fun = code_string(t, g, "fun_msg", 0, round_record=r)
        inputs = [t_now, r["go_num"], n - r["go_num"], n, number, fun, p.ratio_str, mine, utility]
        return _parts(render(t, f"bar_game/report_explicit_{t.version}.txt", inputs))
    if g == "dollar":
        mine = outcome.answers[seat]
        won = r["total_proposal"] <= p.golds
        msg = code_string(t, g, "round_msg", 0, won=won)
        inputs = [t_now, mine, r["total_proposal"], msg, p.golds, mine if won else 0]
        return _parts(render(t, f"{folder}/report_{t.version}.txt", inputs))
    if g == "goods":
        mine = outcome.answers[seat]
        total = r["total_tokens"]
        after = [round(before.tokens[s] - r["responses"][s] + total * _number(p.multiplier) / n, 2)
                 for s in range(n)]
        gain = round(total * _number(p.multiplier) / n - mine, 2)
        inputs = [t_now, r["responses"], mine, total, gain, after[seat], after]
        return _parts(render(t, f"{folder}/report_{t.version}.txt", inputs))
    if g == "diner":
        mine = outcome.answers[seat]
        utility = p.cheap_utility if mine == "cheap" else p.exp_utility
        revenue = utility - r["avg_cost"]
        msg = code_string(t, g, "player_revenue_msg", 0, player_utility=utility, round_record=r,
                          self=SimpleNamespace(player_num=n), player_revenue=revenue)
        inputs = [t_now, n - r["cheap_player"], r["cheap_player"], r["cost_msg"], r["avg_cost"],
                  mine, msg]
        return _parts(render(t, f"{folder}/report_{t.version}.txt", inputs))
    if g == "auction":
        mine = outcome.answers[seat]
        result = code_string(t, g, "result", 0, round_record=r,
                             player=SimpleNamespace(id=f"player_{seat}"))
        inputs = [t_now, outcome.extra["valuations"][seat], mine, str(r["bid_winner_proposed"]),
                  str(r["bid_winner_payment"]), result, r["utility"][seat]]
        return _parts(render(t, f"{folder}/report_{t.version}.txt", inputs))
    if g == "battle":
        return _battle_report(t, before, outcome, seat)
    return _pirate_report(t, before, outcome, seat, proposal)


def _battle_report(t: Templates, before: GameState, outcome: RoundOutcome, seat: int) -> list[str]:
    r = outcome.record
    folder = _prompt_folder("battle")
    # GAMA's code: result/result2 = '' (0), the miss sentence (1), 'shot at ...' (2); then
    # += ' and hit ...' (3) or ' but missed.' (4)
    def sentence(name: str) -> str:
        if r["action"] == "miss":
            return code_string(t, "battle", name, 1, round_record=r)
        text = code_string(t, "battle", name, 2, round_record=r)
        return text + code_string(t, "battle", name, 3 if r["out"] else 4, round_record=r)

    living = len(outcome.survivors)
    parts: list[str] = []
    shooter = int(r["player_shooting"])
    if seat == shooter:
        parts += _parts(render(t, f"{folder}/report2_{t.version}.txt",
                               [outcome.round, r["action"], r["shot_player"], sentence("result2"),
                                living]))
    parts += _parts(render(t, f"{folder}/report_{t.version}.txt",
                           [outcome.round, f"player_{shooter}", sentence("result"), living]))
    return parts


def seniority(rank: int) -> str:
    """GAMA's pirate rank text: '1-st', '2-nd', '3-rd', then '<k>-th'."""
    return f"{rank}-" + {1: "st", 2: "nd", 3: "rd"}.get(rank, "th")


def _pirate_report(t: Templates, before: GameState, outcome: RoundOutcome, seat: int,
                   proposal: dict | None) -> list[str]:
    r = outcome.record
    plan = r["gold_distribution"]
    alive = list(before.alive)
    proposer = alive[0]
    passed = outcome.extra["passed"]
    rank = proposer + 1
    this = SimpleNamespace(player_id_manipulation=seniority, current_round=outcome.round)
    # GAMA's code: majority 'Equal to or greater' (0) or 'Less' (1); result: proposer accepted
    # (0), another's plan accepted (1), proposer rejected (2), another thrown overboard (3)
    majority = code_string(t, "pirate", "majority", 0 if passed else 1)
    index = (0 if seat == proposer else 1) if passed else (2 if seat == proposer else 3)
    result = code_string(t, "pirate", "result", index, gold_distribution=plan, count=0, self=this)
    vote = r["responses"][alive.index(seat)]
    text = str(proposal) if proposal is not None else plan_text(plan, rank)
    inputs = [seniority(outcome.round), text, outcome.extra["accepted"],
              len(alive), vote, majority, result]
    return _parts(render(t, f"{_prompt_folder('pirate')}/report_{t.version}.txt", inputs))


@lru_cache(maxsize=256)
def _assignments(path: str, target: str) -> tuple[Any, ...]:
    """The compiled right-hand sides of the assignments to ``target`` in a game's code, in the
    file's order (parsed once per process)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        raise TemplateError(f"{path}: cannot read GAMA's game code") from None
    found = [node.value for node in ast.walk(tree)
             if (isinstance(node, ast.Assign) and any(
                 isinstance(tg, ast.Name) and tg.id == target for tg in node.targets))
             or (isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
                 and node.target.id == target)]
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    return tuple(compile(ast.Expression(n), path, "eval") for n in found)


def code_string(t: Templates, game: str, target: str, index: int, **names: Any) -> str:
    """The value of the ``index``-th assignment to ``target`` in the checkout's
    ``games/<game>.py`` (a string or f-string of GAMA's, e.g. its answer-format sentence),
    evaluated with ``names`` (``self``, ``player``, ``cot_msg``, ...; assignments and
    augmented assignments count, in the file's order); nothing but the expression is run,
    without builtins."""
    path = str(t.root / "games" / f"{_prompt_folder(game)}.py")
    found = _assignments(path, target)
    if index >= len(found):
        raise TemplateError(f"{path}: no assignment #{index + 1} to {target}")
    code = found[index]
    return str(eval(code, {"__builtins__": {"str": str, "int": int}}, dict(names)))  # noqa: S307
