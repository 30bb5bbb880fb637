"""GAMA-Bench's ``raw_results`` JSON files, read as published (never changed) into plain data.

A file is ``{"meta": {...parameters, "round_id", "version", ["models"]}, "round_records": [...],
"player_data": [{"model", "id", "prompt", "records", "utility", ["tokens"]}, ...]}``; its name
is ``[<model>_]<game folder>_<version>[_<tag>].json`` (no model prefix: GAMA's default
GPT-3.5-0125 runs; tag ``1``..``5`` for the leaderboard's five runs, ``r<k>``/``t<k>`` and
others for its variants). Variants handled: El Farol ``bar_game_implicit``/``explicit``, the
auction under ``first_price``/``second_price``, Gemini records whose prompts are
``{"role", "parts"}`` lists (their requests stored), Public Goods' ``tokens``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distbench.games.gama import rules


class RecordError(ValueError):
    """A file that is not a GAMA record as published: the message names the file and the
    problem, in one line."""


FILE_GAMES: dict[str, tuple[str, str]] = {
    "guessing_game": ("guessing", ""),
    "bar_game_implicit": ("bar", "implicit"),
    "bar_game_explicit": ("bar", "explicit"),
    "divide_dollar": ("dollar", ""),
    "public_goods": ("goods", ""),
    "diner_dilemma": ("diner", ""),
    "sealed_bid_auction": ("auction", ""),
    "battle_royale": ("battle", ""),
    "pirate_game": ("pirate", ""),
}
"""GAMA's file-name stem of each game -> (distbench game, variant)."""

LEADERBOARD_MODELS: dict[str, str] = {
    "": "GPT-3.5-0125", "gpt-3.5-turbo-1106": "GPT-3.5-1106",
    "gpt-3.5-turbo-0613": "GPT-3.5-0613", "gpt-4-0125-preview": "GPT-4t-0125",
    "gpt-4o": "GPT-4o-0806", "gemini-1.0-pro": "Gemini-1.0-Pro",
    "gemini-1.5-pro": "Gemini-1.5-Pro", "llama-3.1-8b": "LLaMA-3.1-8B",
    "llama-3.1-70b": "LLaMA-3.1-70B", "llama-3.1-405b": "LLaMA-3.1-405B",
    "mixtral-8x7b": "Mixtral-8x7B", "mixtral-8x22b": "Mixtral-8x22B",
    "qwen2-72b": "Qwen-2-72B"}
"""The file-name model prefix of each leaderboard model -> its name on GAMA's board ('' : the
files without a prefix)."""

_NAME = re.compile(r"^(?:(?P<prefix>.+?)_)?(?P<stem>" + "|".join(
    sorted(FILE_GAMES, key=len, reverse=True)) + r")_(?P<version>v\d+)(?:_(?P<tag>[^.]+))?\.json$")


@dataclass(frozen=True)
class FileName:
    """What a record's file name says."""

    prefix: str
    game: str
    variant: str
    version: str
    tag: str

    @property
    def run_index(self) -> int | None:
        """The leaderboard run (1..5 from the tag), None for another tag."""
        return int(self.tag) if self.tag.isdigit() else None

    @property
    def model_label(self) -> str | None:
        """The board's name of the model, None when the prefix is not a board model."""
        return LEADERBOARD_MODELS.get(self.prefix)


def parse_file_name(name: str) -> FileName | None:
    """The parts of a record's file name; None when the name is not a GAMA record's."""
    match = _NAME.match(name)
    if not match:
        return None
    game, variant = FILE_GAMES[match["stem"]]
    return FileName(prefix=match["prefix"] or "", game=game, variant=variant,
                    version=match["version"], tag=match["tag"] or "")


@dataclass(frozen=True)
class PlayerRecord:
    """One seat of a record.

    Attributes:
        seat: 0-based (GAMA's ``player_<seat>``).
        model: The model GAMA recorded for the seat.
        answers: The seat's parsed answers, one per round it answered (GAMA's ``records``).
        utility: GAMA's per-round utility of the seat (empty where GAMA keeps none).
        tokens: Public Goods: the seat's token counts (GAMA's ``tokens``), else empty.
        messages: The conversation as ``{"role", "content"}`` dicts; a Gemini record's
            ``{"role", "parts"}`` turns are joined (parts separated by a blank line) and
            its roles mapped (``model`` -> ``assistant``).
        raw_prompt: The conversation exactly as stored.
    """

    seat: int
    model: str
    answers: list[Any]
    utility: list[Any]
    tokens: list[Any]
    messages: list[dict[str, str]]
    raw_prompt: list[dict[str, Any]]


@dataclass(frozen=True)
class GamaRecord:
    """One GAMA game run, as read from its file.

    Attributes:
        path: The file.
        name: Its file-name parts.
        game: distbench's game name.
        variant: 'implicit'/'explicit' (bar), 'first'/'second' (auction), '' otherwise.
        version: GAMA's template version ('v1'..'v5').
        run_index: 1..5 for a leaderboard run, else None.
        params: The game's parameters from the meta.
        meta: The meta as stored.
        rounds: GAMA's round records as stored.
        players: The seats.
        round_id: The meta's ``round_id`` (Battle Royale's score depends on it).
    """

    path: Path
    name: FileName
    game: str
    variant: str
    version: str
    run_index: int | None
    params: rules.Params
    meta: dict[str, Any]
    rounds: list[dict[str, Any]]
    players: list[PlayerRecord] = field(default_factory=list)
    round_id: int | None = None

    @property
    def models(self) -> list[str]:
        """The model of each seat."""
        return [p.model for p in self.players]

    @property
    def model(self) -> str:
        """The table's model: the meta's ``models`` when it names one, else the seats' model,
        or 'mixed' when the seats differ."""
        meta = self.meta.get("models")
        if isinstance(meta, str) and meta:
            return meta
        seats = set(self.models)
        return seats.pop() if len(seats) == 1 else "mixed"


def _auction_variant(path: Path, meta: dict[str, Any]) -> str:
    mode = str(meta.get("mode", ""))
    if "second" in mode or path.parent.name == "second_price":
        return "second"
    return "first"


def params_from_meta(game: str, variant: str, meta: dict[str, Any]) -> rules.Params:
    """The game's :class:`rules.Params` from a record's meta (GAMA's keys; rounds from its
    ``round_id``)."""
    n = int(meta.get("player_num", 10))
    rounds = int(meta.get("round_id", 20) or 20)
    if game == "guessing":
        return rules.GuessingParams(
            players=n, rounds=rounds, min=int(meta.get("min", 0)), max=int(meta.get("max", 100)),
            ratio=float(meta.get("ratio", 2 / 3)), ratio_str=str(meta.get("ratio_str", "2/3")))
    if game == "bar":
        return rules.BarParams(
            players=n, rounds=rounds, min=int(meta.get("min", 0)), max=int(meta.get("max", 10)),
            home=int(meta.get("home", 5)), ratio=float(meta.get("ratio", 0.6)),
            ratio_str=str(meta.get("ratio_str", "60%")),
            mode=str(meta.get("mode", variant or "implicit")))
    if game == "dollar":
        return rules.DollarParams(players=n, rounds=rounds, golds=int(meta.get("golds", 100)))
    if game == "goods":
        return rules.GoodsParams(
            players=n, rounds=rounds, tokens=int(meta.get("tokens", 20)),
            multiplier=float(meta.get("ratio", 2)), reset=bool(meta.get("reset", True)))
    if game == "diner":
        return rules.DinerParams(
            players=n, rounds=rounds, cheap_cost=int(meta.get("cheap_cost", 10)),
            cheap_utility=int(meta.get("cheap_utility", 15)),
            exp_cost=int(meta.get("exp_cost", 20)), exp_utility=int(meta.get("exp_utility", 20)))
    if game == "auction":
        # GAMA's meta stores the seed after its last round's increment: the first round's is
        # seed - round_id.
        seed = int(meta.get("seed", 42 + rounds)) - int(meta.get("round_id", rounds) or 0)
        return rules.AuctionParams(
            players=n, rounds=rounds, valuation_min=int(meta.get("valuation_min", 0)),
            valuation_max=int(meta.get("valuation_max", 200)),
            interval=int(meta.get("interval", 10)), mode=variant, seed=seed)
    if game == "battle":
        return rules.BattleParams(players=n, rounds=20,
                                  base_hit_rate=int(meta.get("base_hit_rate", 35)),
                                  interval=int(meta.get("interval", 5)))
    return rules.PirateParams(players=n, rounds=n, gold=int(meta.get("gold", 100)))


def messages_of(prompt: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A stored conversation as ``{"role", "content"}`` dicts (see :class:`PlayerRecord`)."""
    out = []
    for turn in prompt:
        role = str(turn.get("role", ""))
        if "parts" in turn:
            parts = turn.get("parts") or []
            if isinstance(parts, str):
                parts = [parts]
            content = "\n\n".join(str(p) for p in parts)
            role = {"model": "assistant"}.get(role, role)
        else:
            content = str(turn.get("content", ""))
        out.append({"role": role, "content": content})
    return out


def read_record(path: str | Path) -> GamaRecord:
    """One GAMA ``raw_results`` file read as published.

    Raises:
        RecordError: the file cannot be read, is not JSON, has no meta/round_records/
            player_data of the expected shapes, or its name is not a GAMA record's (the
            message names the file).
    """
    path = Path(path)
    name = parse_file_name(path.name)
    if name is None:
        raise RecordError(f"{path}: not a GAMA-Bench record's name "
                          "([<model>_]<game>_<version>[_<run>].json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not valid JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not a GAMA record (the top level is not an object)")
    for key, kind in (("meta", dict), ("round_records", list), ("player_data", list)):
        if not isinstance(data.get(key), kind):
            raise RecordError(f"{path}: not a GAMA record (no {key!r} {kind.__name__})")
    meta = data["meta"]
    variant = name.variant or (_auction_variant(path, meta) if name.game == "auction" else "")
    try:
        params = params_from_meta(name.game, variant, meta)
        players = []
        for seat, p in enumerate(data["player_data"]):
            prompt = p.get("prompt") or []
            players.append(PlayerRecord(
                seat=seat, model=str(p["model"]), answers=list(p.get("records") or []),
                utility=list(p.get("utility") or []), tokens=list(p.get("tokens") or []),
                messages=messages_of(prompt), raw_prompt=prompt))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"{path}: malformed meta or player_data ({type(exc).__name__}: {exc})") from None
    rounds = data["round_records"]
    if not all(isinstance(r, dict) for r in rounds):
        raise RecordError(f"{path}: malformed round_records (not a list of objects)")
    round_id = meta.get("round_id")
    return GamaRecord(path=path, name=name, game=name.game, variant=variant,
                      version=name.version, run_index=name.run_index, params=params,
                      meta=meta, rounds=rounds, players=players,
                      round_id=int(round_id) if isinstance(round_id, int) else None)


def find_records(folder: str | Path) -> list[Path]:
    """Every GAMA record file under ``folder`` (recursively), sorted; RecordError when the
    folder does not exist or holds none."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        raise RecordError(f"{folder}: {what} (give GAMA-Bench's raw_results folder)")
    paths = sorted(p for p in folder.rglob("*.json") if parse_file_name(p.name) is not None)
    if not paths:
        raise RecordError(f"{folder}: no GAMA-Bench record in it "
                          "(expected files like guessing_game/gpt-4o_guessing_game_v1_1.json)")
    return paths


def recorded_answers(rec: GamaRecord, index: int, seats: list[int]) -> tuple[dict[int, Any], bool | None]:
    """What the record's round ``index`` (0-based) says ``seats`` (``rules.actors`` of the
    state the round is played from) answered, as :func:`rules.resolve_round` takes them, and
    Battle Royale's hit (None in the other games): simultaneous games from each seat's own
    ``records``; Battle Royale the target (None for a deliberate miss); Pirate Game the plan
    then the votes. KeyError/IndexError when the record lacks them."""
    stored = rec.rounds[index]
    if rec.game == "battle":
        shot = stored["shot_player"]
        target = None if stored["action"] == "miss" or shot == "null" else int(shot)
        return {seats[0]: target}, bool(stored["out"])
    if rec.game == "pirate":
        answers: dict[int, Any] = {seats[0]: list(stored["gold_distribution"])}
        answers.update(zip(seats[1:], stored["responses"][1:], strict=False))
        return answers, None
    return {s: rec.players[s].answers[index] for s in seats}, None
