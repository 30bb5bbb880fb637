"""Validating a family's table of a sweep spec (``[negotiation]``, ``[fog]``, a plugin's
``[beauty]``...), with errors that name the key.

A family's ``section`` hook reads its table through a :class:`Section`::

    def section(table):
        s = Section(table, {"games", "opponents", "max_tokens"})
        return {"games": s.int("games", 5), "opponents": s.names("opponents", ["tier1"], TIERS),
                "max_tokens": s.int("max_tokens", 256)}

Each reader returns the value (or its default) and raises :class:`SectionError` (a
ValueError naming the key);
the spec loader prefixes the file and the section (``sweep.toml: fog.games: must be ...``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from distbench.errors import did_you_mean

__all__ = ["Section", "SectionError", "unknown_key"]


def unknown_key(key: str, allowed: Iterable[str]) -> str:
    """``unknown key (did you mean 'x'?); allowed: a, b`` (every spec table says it so)."""
    import difflib

    allowed = sorted(allowed)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}; allowed: {', '.join(allowed)}"


class SectionError(ValueError):
    """A bad value in a family's spec table; ``key`` names it (None: the table itself)."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


class Section:
    """A spec table with its allowed keys (an unknown key is refused at once, with a hint)."""

    def __init__(self, table: Any, allowed: Iterable[str]) -> None:
        if not isinstance(table, Mapping):
            raise SectionError(None, f"must be a table, got {table!r}")
        self.table = dict(table)
        self.allowed = set(allowed)
        for key in self.table:
            if key not in self.allowed:
                raise SectionError(key, unknown_key(key, self.allowed))

    def int(self, key: str, default: int, low: int = 1) -> int:
        """An integer >= ``low``."""
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SectionError(key, f"must be an integer, got {value!r}")
        if value < low:
            raise SectionError(key, f"must be >= {low}, got {value}")
        return value

    def number(self, key: str, default: float, low: float, high: float) -> float:
        """A number in [``low``, ``high``]."""
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise SectionError(key, f"must be a number from {low:g} to {high:g}, got {value!r}")
        return float(value)

    def bool(self, key: str, default: bool) -> bool:
        """true or false."""
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise SectionError(key, f"must be true or false, got {value!r}")
        return value

    def names(self, key: str, default: list[str], allowed: Iterable[str]) -> list[str]:
        """A non-empty list of names, each among ``allowed``."""
        allowed = list(allowed)
        values = self.table.get(key, default)
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise SectionError(key, f"must be a non-empty list of names "
                             f"({', '.join(allowed)})")
        bad = [v for v in values if v not in allowed]
        if bad:
            raise SectionError(key, f"unknown {bad[0]!r}; use {', '.join(allowed)}."
                             f"{did_you_mean(bad[0], allowed)}")
        return values

    def rest(self) -> dict[str, Any]:
        """The table's keys as given (for keys a family passes on without reading)."""
        return dict(self.table)
