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
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from distbench.games.gama.rules import (
    GAMA_FOLDERS,
    GameState,
    RoundOutcome,
    hit_rate,
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
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

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
    """A template's text after its comment block, stripped (GAMA's ``get_prompt``)."""
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
        inputs = [p.players, rounds, p.cheap_cost, p.cheap_utility, p.exp_cost, p.exp_utility,
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


def request(t: Templates, state: GameState, seat: int, cot: int | None = None,
            plan: list[int] | None = None) -> str:
    """The request GAMA sends ``seat`` in the next round (``plan``: Pirate Game voters, the
    proposer's golds). Its last sentence, the answer format, is read from the checkout's
    ``games/<game>.py``."""
    raise NotImplementedError("filled in by the next commit")


def report(t: Templates, before: GameState, outcome: RoundOutcome, seat: int) -> list[str]:
    """The report GAMA gives ``seat`` after the round: its parts (user text, GAMA's canonical
    echo of the seat's answer as the assistant turn, user text), or one part for Battle
    Royale's report to the other players."""
    raise NotImplementedError("filled in by the next commit")


@lru_cache(maxsize=64)
def _code_tree(path: str) -> ast.Module:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        raise TemplateError(f"{path}: cannot read GAMA's game code") from None


def code_string(t: Templates, game: str, target: str, index: int, **names: Any) -> str:
    """The value of the ``index``-th assignment to ``target`` in the checkout's
    ``games/<game>.py`` (a string or f-string of GAMA's, e.g. its answer-format sentence),
    evaluated with ``names`` (``self``, ``player``, ``cot_msg``, ...: plain values wrapped
    in namespaces); nothing but the expression is run, without builtins."""
    path = t.root / "games" / f"{_prompt_folder(game)}.py"
    tree = _code_tree(str(path))
    found = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and any(isinstance(tg, ast.Name) and tg.id == target for tg in node.targets)]
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    if index >= len(found):
        raise TemplateError(f"{path}: no assignment #{index + 1} to {target}")
    code = compile(ast.Expression(found[index]), str(path), "eval")
    scope = {k: (SimpleNamespace(**v) if isinstance(v, dict) else v) for k, v in names.items()}
    return str(eval(code, {"__builtins__": {"str": str, "int": int}}, scope))  # noqa: S307
