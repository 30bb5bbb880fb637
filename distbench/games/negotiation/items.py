"""The item words: 100 per language, with singular and plural forms, shipped as package data.

``data/items.json`` holds one list per language (``en``, ``de``, ``it``) of ``[singular,
plural]`` pairs. The lists are parallel: item ``k`` is the same object in every language, so an
instance (which stores item indices) reads the same in every language. Within a language no
form of one item equals a form of another (case-insensitively); an item may have the same
singular and plural (German ``Messer``, Italian ``radio``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

LANGS: tuple[str, ...] = ("en", "de", "it")
NUM_ITEMS = 100


@cache
def _load() -> dict[str, tuple[tuple[str, str], ...]]:
    text = resources.files(__package__).joinpath("data", "items.json").read_text("utf-8")
    raw = json.loads(text)
    return {lang: tuple((s, p) for s, p in raw[lang]) for lang in LANGS}


def item_words(lang: str) -> tuple[tuple[str, str], ...]:
    """The ``(singular, plural)`` pairs of ``lang``, item index order.

    Raises:
        ValueError: ``lang`` is not one of :data:`LANGS`.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    return _load()[lang]


def item_name(lang: str, item: int, amount: int) -> str:
    """The word for ``amount`` of item ``item``: singular for exactly 1, plural otherwise."""
    singular, plural = item_words(lang)[item]
    return singular if amount == 1 else plural
