"""The proposal parser: finds ``[Proposal: <n> <item>, ...]`` in a message and reads it.

Rules (GAMES.md leaves these details open; they are fixed here):

- The keyword is the language's (:data:`KEYWORDS`: ``Proposal``, ``Vorschlag``,
  ``Proposta``, ``Javaslat``); the English ``Proposal`` is accepted in every language too. Case-insensitive;
  white space is allowed around the keyword and the colon. A message without ``[<keyword>:``
  is free text, unless it holds a near miss.
- A near miss is ``[`` followed by any of the keywords (any case, also as the start of a
  longer word) that is not a valid opening: the colon is missing (``[Proposal 1 hat]``,
  ``[Proposals: 1 hat]``) or the keyword is another language's (``[Vorschlag: 1 Hut]`` in an
  English game). It is ``near_miss_proposal`` (the episode aborts; it is never relayed as talk,
  since it was meant as a secret proposal). A near miss beside a valid opening makes
  ``multiple_proposals``.
- A message holding two or more proposals is rejected (``multiple_proposals``); an opening
  ``[<keyword>:`` without its closing ``]`` is ``malformed``. Text around the proposal is
  allowed (and never relayed: proposals are secret).
- The body is a comma-separated list of ``<n> <item>`` entries, in any order, with any white
  space; one trailing comma is allowed; an empty body asks for nothing. Omitted types count 0,
  ``0 hats`` is allowed.
- ``<n>`` is ASCII digits only (leading zeros allowed). Anything else where the number should
  be (``two``, ``-1``, ``1.5``, fullwidth ``２``, Arabic-Indic ``٢``, superscript ``²``) is
  ``bad_number``.
- ``<item>`` is matched case-insensitively against the singular and plural of the instance's
  types (either form, whatever the number: ``1 hats`` and ``2 hat`` are both accepted), after
  collapsing white space and dropping trailing ``.``, ``;``, ``!``. A name that is no type of
  this instance is ``unknown_item`` (also a word of the list that this instance does not
  hold); a name matching two types (impossible with the bundled lists, checked anyway) is
  ``ambiguous_item``; a type named twice is ``repeated_item``; more than its count is
  ``too_many_items``; an entry without a number and a name is ``malformed``.

:func:`parse_message` never raises on any text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

PARSER_VERSION = "negotiation.1"
"""The version of :func:`parse_message`, stored with every answer it read (``parser_version``).
Bump the number when a change can change what some text reads as (its status, amounts or
detail); a refactor that keeps every output does not. ``distbench rescore`` re-reads stored
answers with the current version."""

KEYWORDS: dict[str, str] = {"en": "Proposal", "de": "Vorschlag", "it": "Proposta", "hu": "Javaslat"}
"""The proposal keyword per language (``hu`` only for clembench's instance files, which bring
their own prompts)."""

MESSAGE = "message"
PROPOSAL = "proposal"
MALFORMED = "malformed"
MULTIPLE = "multiple_proposals"
BAD_NUMBER = "bad_number"
UNKNOWN_ITEM = "unknown_item"
AMBIGUOUS_ITEM = "ambiguous_item"
REPEATED_ITEM = "repeated_item"
TOO_MANY = "too_many_items"
NEAR_MISS = "near_miss_proposal"

REJECTIONS: tuple[str, ...] = (MALFORMED, MULTIPLE, BAD_NUMBER, UNKNOWN_ITEM, AMBIGUOUS_ITEM,
                               REPEATED_ITEM, TOO_MANY, NEAR_MISS)
"""Statuses of a proposal that was attempted and rejected (each aborts the episode)."""

_ASCII_NUMBER = re.compile(r"[0-9]+")
_ENTRY = re.compile(r"(?P<num>\S+)\s+(?P<name>\S.*)", re.DOTALL)
_ANY_KEYWORD = re.compile(
    r"\[\s*(?P<word>(?:" + "|".join(re.escape(w) for w in sorted(set(KEYWORDS.values())))
    + r")\w*)(?P<colon>\s*:)?",
    re.IGNORECASE,
)
_LANG_NAMES = {"en": "English", "de": "German", "it": "Italian", "hu": "Hungarian"}


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a message holds.

    Attributes:
        status: :data:`MESSAGE` (free text), :data:`PROPOSAL` (a valid proposal) or one of
            :data:`REJECTIONS`.
        amounts: (T,) the amounts asked for, per type, when ``status == PROPOSAL``.
        detail: Why the proposal was rejected ("" otherwise).
    """

    status: str
    amounts: tuple[int, ...] | None = None
    detail: str = ""


def _opening(lang: str) -> re.Pattern[str]:
    words = {KEYWORDS.get(lang, "Proposal"), "Proposal"}
    alternatives = "|".join(sorted(re.escape(w) for w in words))
    return re.compile(rf"\[\s*(?:{alternatives})\s*:", re.IGNORECASE)


def _near_miss_detail(miss: re.Match[str], lang: str) -> str:
    word = miss.group("word")
    accepted = " or ".join(sorted({KEYWORDS.get(lang, "Proposal"), "Proposal"}))
    if miss.group("colon") is None:
        return f"'[{word}' without ':' (write [{accepted}: ...])"
    return (f"'[{word}:' is not a keyword of this {_LANG_NAMES.get(lang, lang)} game "
            f"(write [{accepted}: ...])")


def normalize_name(name: str) -> str:
    """An item name as matched: case-folded, white space collapsed, trailing ``.;!`` dropped."""
    return " ".join(name.split()).rstrip(".;!").strip().casefold()


def parse_message(
    text: str,
    forms: Sequence[Sequence[str]],
    counts: Sequence[int],
    lang: str = "en",
) -> Parsed:
    """Reads a player's message.

    Args:
        text: The message, verbatim.
        forms: (T,) per type of the instance, its accepted names (singular and plural).
        counts: (T,) number of items of each type.
        lang: Language of the game (decides the keyword).

    Returns:
        The :class:`Parsed` message (see the module docstring for the rules).
    """
    openings = list(_opening(lang).finditer(text))
    valid_starts = {m.start() for m in openings}
    misses = [m for m in _ANY_KEYWORD.finditer(text) if m.start() not in valid_starts]
    if len(openings) + len(misses) > 1:
        return Parsed(MULTIPLE, detail=f"{len(openings) + len(misses)} proposals in one message")
    if misses:
        return Parsed(NEAR_MISS, detail=_near_miss_detail(misses[0], lang))
    if not openings:
        return Parsed(MESSAGE)
    start = openings[0].end()
    close = text.find("]", start)
    if close < 0:
        return Parsed(MALFORMED, detail="the proposal has no closing ']'")
    body = text[start:close]
    if "[" in body:
        return Parsed(MALFORMED, detail="'[' inside the proposal")
    lookup: dict[str, set[int]] = {}
    for k, names in enumerate(forms):
        for name in names:
            lookup.setdefault(normalize_name(name), set()).add(k)
    entries = [e.strip() for e in body.split(",")]
    if entries and entries[-1] == "":
        entries.pop()  # a trailing comma (or an empty body)
    amounts = [0] * len(counts)
    seen: set[int] = set()
    for entry in entries:
        match = _ENTRY.fullmatch(entry)
        if match is None:
            return Parsed(MALFORMED, detail=f"entry {entry!r} is not '<number> <item>'")
        num, name = match.group("num"), normalize_name(match.group("name"))
        if not _ASCII_NUMBER.fullmatch(num):
            return Parsed(BAD_NUMBER, detail=f"{num!r} is not a number in digits 0-9")
        types = lookup.get(name, set())
        if not types:
            return Parsed(UNKNOWN_ITEM, detail=f"no item called {match.group('name')!r}")
        if len(types) > 1:
            return Parsed(AMBIGUOUS_ITEM, detail=f"{name!r} names several items")
        (k,) = types
        if k in seen:
            return Parsed(REPEATED_ITEM, detail=f"{name!r} is named twice")
        seen.add(k)
        digits = num.lstrip("0") or "0"
        amount = int(digits) if len(digits) <= 6 else 10**6  # no int() of a huge string
        if amount > counts[k]:
            return Parsed(TOO_MANY, detail=f"asks for {amount} {name}, only {counts[k]} exist")
        amounts[k] = amount
    return Parsed(PROPOSAL, amounts=tuple(amounts))
