"""clembench's Deal or No Deal instance files (``in/instances*.json``), played as they are.

A file holds ``{"experiments": [...]}``; an experiment has a ``name`` (``semi_en``), a
``mode`` (``semi``, ``coop`` or ``comp``), a ``language``, ``max_turns`` (free messages per
player), the prompt templates ``initial_prompt`` (with ``$N$``, ``$ITEMS$`` and
``$VALUE_FUNCTION$``), ``proposal_early`` and ``proposal_timeout``, and ``game_instances``:
``{game_id, item_types, item_types_plural, item_counts, player_a_values, player_b_values}``.

Choices (fixed here, pinned by ``tests/games/negotiation/test_negotiation_clembench.py``):

- Each game instance is one episode per seat order in its experiment's mode and language,
  with the file's item words (singular and plural), counts and values (``player_a`` values
  go to seat a, which speaks first), and ``max_turns`` free messages per player.
- The instance id is ``<file stem>/<experiment name>/<game_id>`` (``instance_id``); the
  file's ``game_id`` is also ``instance_index``; ``seed`` is -1 (no instance stream).
- When the experiment has the three templates, the players read clembench's texts: the first
  prompt is ``initial_prompt`` filled in as clembench does (``$ITEMS$`` = ``2 hats, 1 ball``,
  ``$VALUE_FUNCTION$`` = ``hat: 3, ball: 4``), messages are relayed verbatim (an empty one
  as ``<no response from the other player>``), and ``proposal_early`` / ``proposal_timeout``
  ask for the proposal. The protocol is distbench's (see :mod:`.game`).
- Languages: those with a proposal keyword (``en``, ``de``, ``it``, ``hu``); an experiment
  in another language, or in ``hu`` without its templates, is refused with its name.
- Instances are not held to distbench's generator constraints (values summing to 10, ...):
  only to what the game needs (1-5 types, counts >= 1, at most 256 splits, non-negative
  integer values).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distbench.games.negotiation.instances import Instance
from distbench.games.negotiation.items import LANGS
from distbench.games.negotiation.parse import KEYWORDS
from distbench.games.negotiation.prompts import MODES

MAX_TYPES = 5
MAX_SPLITS = 256
NO_SEED = -1
NO_RESPONSE = "<no response from the other player>"


@dataclass(frozen=True, slots=True)
class ClemPrompts:
    """An experiment's prompt templates, verbatim."""

    initial: str
    early: str
    timeout: str

    def first(self, instance: Instance, seat: str, lang: str, max_messages: int) -> str:
        """``initial_prompt`` filled in for ``seat`` as clembench's game master does."""
        forms = instance.forms(lang)
        items = ", ".join(f"{c} {s if c == 1 else p}"
                          for c, (s, p) in zip(instance.counts, forms, strict=True))
        values = ", ".join(f"{s}: {v}" for (s, _), v in zip(forms, instance.values(seat), strict=True))
        return (self.initial.replace("$N$", str(max_messages)).replace("$ITEMS$", items)
                .replace("$VALUE_FUNCTION$", values))


@dataclass(frozen=True, slots=True)
class FileInstance:
    """One game instance of a clembench file, with its experiment's settings.

    Attributes:
        instance: The items, counts, values and words (``instance.words``).
        mode: ``semi``, ``coop`` or ``comp``.
        lang: The experiment's language.
        max_messages: ``max_turns``: free messages per player.
        experiment: The experiment's name.
        source: The file's name.
        prompts: The experiment's templates; None when it has none (distbench's texts).
    """

    instance: Instance
    mode: str
    lang: str
    max_messages: int
    experiment: str
    source: str
    prompts: ClemPrompts | None = None


def instance_files(path: Path | str) -> list[Path]:
    """The instance files of ``path``: the file itself, or a folder's ``instances*.json`` (or
    those of its ``in/`` subfolder, a clembench game folder), sorted by name.

    Raises:
        ValueError: nothing to read there.
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ValueError(f"--instances {path}: no such file or folder")
    for folder in (path, path / "in"):
        found = sorted(folder.glob("instances*.json"))
        if found:
            return found
    raise ValueError(f"--instances {path}: no instances*.json file there (nor in {path / 'in'})")


def _ints(where: str, key: str, value: Any, n: int | None = None) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in value):
        raise ValueError(f"{where}: {key} must be a list of integers, got {value!r}")
    if n is not None and len(value) != n:
        raise ValueError(f"{where}: {key} has {len(value)} entries, item_types {n}")
    if any(v < 0 for v in value):
        raise ValueError(f"{where}: {key} must not be negative, got {value}")
    return tuple(value)


def _words(where: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip()
                                                           for v in value):
        raise ValueError(f"{where}: {key} must be a non-empty list of words, got {value!r}")
    return tuple(value)


def _game(where: str, raw: Any, source: str, experiment: str) -> Instance:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a game instance must be an object")
    game_id = raw.get("game_id")
    if not isinstance(game_id, int) or isinstance(game_id, bool):
        raise ValueError(f"{where}: game_id must be an integer, got {game_id!r}")
    where = f"{where} game_id {game_id}"
    single = _words(where, "item_types", raw.get("item_types"))
    plural = _words(where, "item_types_plural", raw.get("item_types_plural", raw.get("item_types")))
    t = len(single)
    if len(plural) != t:
        raise ValueError(f"{where}: item_types_plural has {len(plural)} entries, item_types {t}")
    if t > MAX_TYPES:
        raise ValueError(f"{where}: {t} item types; at most {MAX_TYPES} are supported")
    counts = _ints(where, "item_counts", raw.get("item_counts"), t)
    if any(c < 1 for c in counts):
        raise ValueError(f"{where}: every item count must be at least 1, got {list(counts)}")
    splits = 1
    for c in counts:
        splits *= c + 1
    if splits > MAX_SPLITS:
        raise ValueError(f"{where}: {splits} splits of the items; at most {MAX_SPLITS} are supported")
    values_a = _ints(where, "player_a_values", raw.get("player_a_values"), t)
    values_b = _ints(where, "player_b_values", raw.get("player_b_values"), t)
    return Instance(instance_id=f"{source}/{experiment}/{game_id}", seed=NO_SEED, index=game_id,
                    items=(), counts=counts, values_a=values_a, values_b=values_b,
                    words=tuple(zip(single, plural, strict=True)))


def _experiment(where: str, raw: Any, source: str) -> list[FileInstance]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: an experiment must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: an experiment needs a name")
    where = f"{where} experiment {name!r}"
    mode, lang, turns = raw.get("mode"), raw.get("language"), raw.get("max_turns", 5)
    if mode not in MODES:
        raise ValueError(f"{where}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if lang not in KEYWORDS:
        raise ValueError(f"{where}: language {lang!r} is not supported ({', '.join(KEYWORDS)})")
    if not isinstance(turns, int) or isinstance(turns, bool) or turns < 1:
        raise ValueError(f"{where}: max_turns must be a positive integer, got {turns!r}")
    texts = [raw.get(k) for k in ("initial_prompt", "proposal_early", "proposal_timeout")]
    prompts = ClemPrompts(*texts) if all(isinstance(x, str) for x in texts) else None
    if prompts is None and lang not in LANGS:
        raise ValueError(f"{where}: language {lang!r} needs the experiment's initial_prompt, "
                         "proposal_early and proposal_timeout (distbench has no texts in it)")
    games = raw.get("game_instances")
    if not isinstance(games, list):
        raise ValueError(f"{where}: game_instances must be a list")
    out = [FileInstance(_game(where, g, source, name), mode, lang, turns, name, source, prompts)
           for g in games]
    ids = [fi.instance.index for fi in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}: game_id values repeat")
    return out


def load_instances(path: Path | str) -> tuple[FileInstance, ...]:
    """Every game instance of the clembench instance file(s) at ``path`` (see
    :func:`instance_files`), in file, experiment and list order.

    Raises:
        ValueError: one line naming the file, experiment or game and what is wrong.
    """
    out: list[FileInstance] = []
    for file in instance_files(path):
        try:
            raw = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file}: not a readable JSON file ({exc})") from None
        experiments = raw.get("experiments") if isinstance(raw, dict) else None
        if not isinstance(experiments, list):
            raise ValueError(f"{file}: no 'experiments' list (not a clembench instance file)")
        for exp in experiments:
            out.extend(_experiment(str(file), exp, file.stem))
    ids = [fi.instance.instance_id for fi in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"--instances {path}: instance {dup} appears twice")
    if not out:
        raise ValueError(f"--instances {path}: the files hold no game instance")
    return tuple(out)


def select(instances: tuple[FileInstance, ...], modes: tuple[str, ...] = (),
           langs: tuple[str, ...] = ()) -> tuple[FileInstance, ...]:
    """The instances whose mode is in ``modes`` and language in ``langs`` (empty: any)."""
    return tuple(fi for fi in instances
                 if (not modes or fi.mode in modes) and (not langs or fi.lang in langs))
