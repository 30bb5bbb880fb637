"""Errors a person can act on, shared by every layer (it imports nothing)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

T = TypeVar("T")


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """`` Did you mean 'x'?`` for the closest of ``known`` to ``name``, or ""."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


def look_up(registry: Mapping[str, T], name: str, load: Callable[[], object],
            error: type[Exception], what: str) -> T:
    """``registry[name]``, calling ``load`` first (it fills ``registry``: the plugins) when
    ``name`` is not there yet; else ``error``: the unknown ``what``, the names known and the
    closest of them (:func:`did_you_mean`)."""
    if name not in registry:
        load()
    try:
        return registry[name]
    except KeyError:
        hint = did_you_mean(name, list(registry))
        raise error(f"unknown {what} {name!r}; available: {', '.join(sorted(registry))}."
                    f"{hint}") from None


class UserError(Exception):
    """Bad input or an unusable environment: printed as one line, exit code 2."""

    exit_code = 2


def short_path(path: object) -> str:
    """A path as commands print it: relative to the current folder when it is inside it
    (``results/run_1``), else as given."""
    import os

    try:
        relative = os.path.relpath(str(path))
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if relative.startswith("..") else relative


def install_hint(extras: str) -> str:
    """The command that installs distbench's optional ``extras`` (e.g. ``"report"``) into the
    Python running now: distbench is installed from its clone (it is not on PyPI), so the hint
    is ``<this python> -m pip install -e '<clone>[<extras>]'``, with paths relative to the
    current folder when they are inside it (``.venv/bin/python -m pip install -e '.[report]'``
    in the quick start's clone)."""
    import sys
    from pathlib import Path

    python = sys.executable or "python3"
    clone = Path(__file__).resolve().parents[1]
    if not (clone / "setup.cfg").is_file():  # not an editable install: say where to run it
        return (f"{short_path(Path(python))} -m pip install -e '.[{extras}]' "
                "(in the distbench clone)")
    target = short_path(clone)
    return f"{short_path(Path(python))} -m pip install -e '{target}[{extras}]'"
