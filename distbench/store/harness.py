"""The harness hash: what made a row (issue 36).

Every shard's rows carry the hash of the family's harness (the ``harness_hash`` column, set by
the engine) and its commit marker records the parts: a hash of the source of the family's
prompt modules, of its parser modules and of its scorer modules, and the family's version.
Numbers made by different harnesses are then never compared silently: ``compare``,
tournaments, ``publish`` and the dataset card say when they mix hashes.

The parts are found generically from the family's declaration: the packages of its hook
modules (``runner``, ``rescore``, ``summarize``...) are listed, and each module goes to the role
its name says (:data:`ROLES`), with the shared ``distbench.games.answers`` modules they import.
A family may name its modules per role with a ``harness_parts`` attribute (role -> module
names) and its version with a ``version`` attribute; both are read with ``getattr``.
Rescoring keeps the prompt part and takes today's parser and scorer parts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import pkgutil
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROLES: dict[str, str] = {
    "prompt": r"prompt|template|text|presentation|items|runner",
    "parse": r"pars|players|agents|policy",
    "score": r"scor|summary|metrics|pareto|reference|optimum|rules|game|duel|play|spiel",
}
"""Role -> pattern of the module names (the last dotted part) that play it."""

_DISPLAY = re.compile(r"replay|viewer|report")
"""Module names that only draw what is stored (replays, the viewer, the report section): no
part of the harness, though ``replay`` contains ``play``."""

_SHARED = re.compile(r"distbench\.games\.answers(?:\.(\w+)| import (\w+))")


def _source(module: str) -> bytes:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return b""
    with open(spec.origin, "rb") as fh:
        return fh.read()


def _hook_strings(obj: Any, depth: int = 0) -> list[str]:
    """The string values of a family declaration and of its parts (nested dataclasses)."""
    if depth > 3 or not dataclasses.is_dataclass(obj):
        return []
    out: list[str] = []
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name, None)
        if isinstance(value, str):
            out.append(value)
        else:
            out += _hook_strings(value, depth + 1)
    return out


def _hook_packages(family: Any) -> list[str]:
    """The packages of the family's ``"module:function"`` hooks."""
    values = _hook_strings(family) or [v for v in vars(family).values() if isinstance(v, str)]
    return sorted({v.split(":", 1)[0].rsplit(".", 1)[0] for v in values
                   if re.fullmatch(r"\w+(\.\w+)+:[\w.]+", v)})


def role_modules(family: Any) -> dict[str, list[str]]:
    """Role -> the module names whose source makes that part of the family's harness."""
    declared = getattr(family, "harness_parts", None)
    if declared:
        return {role: sorted(declared.get(role, ())) for role in ROLES}
    out: dict[str, set[str]] = {role: set() for role in ROLES}
    for package in _hook_packages(family):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        names = [f"{package}.{m.name}" for m in pkgutil.iter_modules(spec.submodule_search_locations)]
        shared = set()
        for name in names:
            for a, b in _SHARED.findall(_source(name).decode("utf-8", "replace")):
                shared.add(f"distbench.games.answers.{a or b}")
        for name in names + sorted(shared):
            short = name.rsplit(".", 1)[1]
            if _DISPLAY.search(short):
                continue
            for role, pattern in ROLES.items():
                if re.search(pattern, short):
                    out[role].add(name)
                    break
    runner = getattr(getattr(family, "play", None), "runner", None) or getattr(family, "runner", None)
    for role in ("prompt", "parse"):
        if not out[role] and isinstance(runner, str):
            out[role].add(runner.split(":", 1)[0])  # prompts built, answers read where it plays
    return {role: sorted(mods) for role, mods in out.items()}


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.blake2b(text, digest_size=6).hexdigest()


_CACHE: dict[str, dict[str, str]] = {}


def _parts(family: Any) -> dict[str, str]:
    if family.name in _CACHE:
        return _CACHE[family.name]
    parts = {}
    for role, modules in role_modules(family).items():
        h = hashlib.blake2b(digest_size=6)
        for module in modules:
            h.update(module.encode() + b"\0" + _source(module) + b"\0")
        parts[role] = h.hexdigest()
    parts["version"] = str(getattr(family, "version", None) or _package_version(family))
    _CACHE[family.name] = parts
    return parts


def _package_version(family: Any) -> str:
    """The version of the installed package that declares the family (distbench's own for the
    built-in families, a plugin's for its)."""
    from importlib import metadata

    packages = _hook_packages(family)
    top = packages[0].split(".", 1)[0] if packages else "distbench"
    for name in (top, top.replace("_", "-")):
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return top


def harness_parts(family: Any) -> dict[str, str]:
    """The family's harness today: ``{"prompt", "parse", "score", "version", "hash"}``."""
    parts = dict(_parts(family))
    return {**parts, "hash": harness_hash(parts)}


def harness_hash(parts: dict[str, str]) -> str:
    """The hash of a harness's parts (every key but ``hash``): 12 hex characters."""
    return _digest({k: v for k, v in parts.items() if k != "hash"})


def rescored_parts(stored: dict[str, str] | None, family: Any) -> dict[str, str]:
    """The harness of a rescored shard: the stored prompt part and version (the answers were
    made by them) with today's parser and scorer parts."""
    today = harness_parts(family)
    if not isinstance(stored, dict):
        stored = {}
    parts = {"prompt": stored.get("prompt", "unknown"),
             "version": stored.get("version", today["version"]),
             "parse": today["parse"], "score": today["score"]}
    return {**parts, "hash": harness_hash(parts)}


def harness_hashes(run_dir: Path | str) -> dict[str, int]:
    """The harness hashes of a run's committed game shards (their markers' ``harness.hash``):
    hash -> number of shards (``"none"``: shards made before harness hashes). A tournament's
    ratings shard is not a game shard and is left out."""
    from distbench.store.integrity import marker_paths

    out: dict[str, int] = {}
    for path in marker_paths(Path(run_dir)):
        try:
            marker = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(marker, dict):
            continue
        harness = marker.get("harness")
        if "stats" not in marker and "games" not in marker and harness is None:
            continue  # not a game shard (a tournament's ratings)
        key = str((harness.get("hash") if isinstance(harness, dict) else None) or "none")
        out[key] = out.get(key, 0) + 1
    return out


def run_harness(run_dir: Path | str) -> list[str]:
    """The distinct harness hashes of a run, sorted (empty for a run made before them)."""
    return sorted(h for h in harness_hashes(run_dir) if h != "none")


def summary_harness(run_dir: Path | str) -> str | list[str] | None:
    """``summary.json``'s ``harness_hash``: the run's one hash, the sorted list when it mixes
    several, None when it has none."""
    hashes = run_harness(run_dir)
    return hashes[0] if len(hashes) == 1 else (hashes or None)


def runs_harness(run_dirs: Iterable[Path | str]) -> list[tuple[str, str]]:
    """``(family, hash)`` for every distinct harness hash of several runs, sorted (the family
    read from each run's manifest; ``""`` when it names none)."""
    out = set()
    for run_dir in run_dirs:
        try:
            manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
        family = str(manifest.get("family") or "") if isinstance(manifest, dict) else ""
        out.update((family, h) for h in run_harness(run_dir))
    return sorted(out)


def mixed_harnesses(entries: Iterable[str | tuple[str, str]]) -> list[str]:
    """The hashes, sorted, of the families whose runs were made by more than one harness.

    ``entries`` are ``(family, hash)`` pairs (a bare hash: a run of the one family in view).
    Each family has its own prompts, parsers and scorers, so runs of two families always have
    two hashes and are never compared number for number: only hashes within a family mix."""
    by_family: dict[str, set[str]] = {}
    for entry in entries:
        family, value = ("", entry) if isinstance(entry, str) else entry
        by_family.setdefault(str(family), set()).add(str(value))
    return sorted(h for hashes in by_family.values() if len(hashes) > 1 for h in hashes)


def harness_line(entries: Iterable[str | tuple[str, str]]) -> str | None:
    """One line saying that numbers of one family mix harnesses (``runs differ in harness: a vs
    b``), None when each family's runs share one (or have none). ``entries``: as
    :func:`mixed_harnesses`. For ``compare``, tournaments, the site and the card."""
    distinct = mixed_harnesses(entries)
    if not distinct:
        return None
    return "runs differ in harness: " + " vs ".join(distinct)
