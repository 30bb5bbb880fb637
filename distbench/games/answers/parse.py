"""Parse model answers for the matrix family: one pure action, or one mixed strategy.

The parsers are strict: they never guess and never raise on any string. A text that does not
state one clear answer gets a typed status (``ParseStatus``) and a short human ``detail``; the
engine keeps the raw text beside it. Actions are written 1..m in text; ``PureAnswer.action`` is
the 0-based row index.

Rules for ``parse_pure`` on chat text (``continuation=False``), first rule that applies wins:

0. Chat text (pure and mixed) is cleaned first: text up to the last ``</think>`` and from an
   unclosed ``<think>`` on is dropped (cut-off reasoning is not an answer); ``*``, backticks
   and ``$`` are removed; ``\\boxed{X}`` reads as a line ``Answer: X``. Nothing left: EMPTY.
1. Explicit labelled answers: a line starting (after markdown bullets/quotes/headers) with
   ``Action``/``Answer``/``Choice``/``Decision``/``Move`` (optionally ``final``/``my``/``the``/
   ``best``/``optimal``/``chosen``) then ``:``, ``=``, ``is``; ``Action:``/``Answer:`` right
   after punctuation inside a line (``So, Action: 2``, not ``for each action: row 1 ...``);
   inline phrases ``my (final) answer/choice/decision/action is``, ``the answer is``,
   ``the best/optimal/final action/choice is``; and a line that is only ``Action k``. The value
   must start the payload: a number, optionally after ``row``/``action``/``option``, ``#`` or a
   bracket (``Action: Row 2``, ``Answer: (2)``, ``Action: 2nd``). Labels whose payload does not
   start with a number (``Action: <k>``, ``Answer: not sure``) are not answers and are skipped.
   **The last explicit answer in the text wins** (the prompt asks the model to end with it, and a
   model that revises itself writes the revision later). ``Action: 2 or 3`` / ``2, 3`` /
   ``2 and row 3`` / ``Row 2 / Row 3`` is AMBIGUOUS; ``2/3`` is a fraction (NO_ANSWER).
2. The whole text is just a number (``2``, ``2.``, ``(2)``, ``**2**``, ``Row 2``, ``two``).
3. Choice phrases ``choose/pick/play/select/go with/opt for (the) row|action|option k`` not
   preceded (within two words) by a negation or a hypothetical (``not``, ``n't``, ``never``,
   ``if``, ``when``, ``whether``, ``suppose``, ``assuming``, ``unless``): exactly one distinct
   number is OK, several are AMBIGUOUS.
4. References ``row k``/``action k``/``option k`` that are not negated (``not row 1``,
   ``rather than row 3``, ``instead of action 1``, ``other than``, ``except``, ``avoid``...):
   one distinct number is OK, several are AMBIGUOUS. ``column k`` never counts.
5. Otherwise NO_ANSWER.

Numbers: Unicode decimal digits are accepted (``int("２") == 2``); the words ``zero`` to ``ten``
count as numbers when preceded by ``row``/``action``/``option`` or followed by punctuation or the
end of the line (``Answer: one of the rows`` is not an answer). A whole-valued decimal such as
``2.0`` is 2; any other decimal or fraction (``2.5``, ``1/2``) is not an action: NO_ANSWER.
A number outside 1..m is OUT_OF_RANGE, with the number in the detail.

Continuation mode (``continuation=True``, the text is what a base model wrote after the
completion prompt's cue): only the first non-blank line counts, and it must *start* with the
answer (same payload rules as an explicit label); the rest of the text is ignored.

Rules for ``parse_mixed`` on chat text, first rule that applies wins:

1. The last labelled line (``Strategy``/``Answer``/``Probabilities``/``Distribution``,
   optionally ``final``/``mixed``/``my``/``optimal``, then ``:``, ``=`` or ``is``; or an inline
   ``my/the optimal strategy is``) whose payload holds numbers. A payload is read as: the first
   bracketed list ``[..]`` (or ``(..)`` with at least two numbers); else labelled pairs; else the
   leading run of numbers. An empty payload continues on the following lines up to a blank line.
2. The whole text is a list of numbers (``0.2, 0.5, 0.3`` or ``[0.2, 0.5, 0.3]``).
3. Prose: labelled pairs anywhere (``Action 1: 0.2``, ``Row 2 with probability 0.5``,
   ``p1 = 0.2``, ``x_2 = 0.3``, ``P(row 3) = 0.3``, ``50% on row 1``) and numeric bracketed
   lists. One consistent candidate is used; pairs and lists that disagree, or several different
   lists, are AMBIGUOUS.
4. Otherwise NO_ANSWER.

Values: decimals, ``1e-2``, fractions ``1/3`` and ``\\frac{1}{3}``, percentages ``20%`` (each
divided by 100; a ``%`` right after a closing bracket applies to the whole list), ``nan``/``inf``
(rejected). Pairs: labels map to positions; a label outside 1..m is OUT_OF_RANGE, a label given
twice with different values AMBIGUOUS, a missing label WRONG_LENGTH. Pairs followed or preceded
by arithmetic (``p2 = 1 - p1``) are not read as answers.

Validation: count != m is WRONG_LENGTH; a NaN or infinite value is NON_FINITE; a negative
value, a sum farther than 0.02 from 1, or all zeros is NOT_A_DISTRIBUTION; otherwise the
values are renormalised to sum to 1 (values whose float sum is already exactly 1 are returned unchanged).

Mixed continuation mode: the prompt ends with ``Strategy: [`` (see ``prompts``), so the text
should start with the numbers; a leading ``[`` is also accepted (so a prompt ending in
``Strategy:`` works too). The list runs to the first ``]``/``)`` on the first line, or on
following lines that continue a numeric list, never past a blank line; without a closing
bracket the leading run of numbers on the first line counts. Everything after is ignored.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

__all__ = [
    "PARSER_VERSION",
    "MixedAnswer",
    "ParseStatus",
    "PureAnswer",
    "parse_mixed",
    "parse_pure",
]


PARSER_VERSION = "answers.1"
"""The version of this package's answer reading (``parse_pure``, ``parse_mixed`` and the
logprob reading), stored with every row it read (``parser_version``). Bump the number when a
change can change what some text reads as (a status, an action, a strategy, a detail); a
refactor that keeps every output does not bump it. ``distbench rescore`` re-reads stored
answers with the current version."""


class ParseStatus(enum.StrEnum):
    """Outcome of parsing one model answer (stored as the ``parse_status`` column)."""

    OK = "ok"
    EMPTY = "empty"
    NO_ANSWER = "no_answer"
    OUT_OF_RANGE = "out_of_range"
    AMBIGUOUS = "ambiguous"
    WRONG_LENGTH = "wrong_length"
    NOT_A_DISTRIBUTION = "not_a_distribution"
    CALL_FAILED = "call_failed"  # set by the engine when the API call failed; never returned here
    LOW_LABEL_MASS = "low_label_mass"  # logprob mode: too little probability on the labels
    NON_FINITE = "non_finite"  # a NaN or infinite number in the answer or its logprobs


@dataclass(frozen=True, slots=True)
class PureAnswer:
    """A parsed pure-action answer.

    Attributes:
        status: parse outcome.
        action: 0-based row index when ``status`` is OK, else None.
        detail: short human reason when not OK, "" when OK.
    """

    status: ParseStatus
    action: int | None
    detail: str

    @property
    def ok(self) -> bool:
        return self.status is ParseStatus.OK


@dataclass(frozen=True, slots=True)
class MixedAnswer:
    """A parsed mixed-strategy answer.

    Attributes:
        status: parse outcome.
        strategy: m probabilities summing to 1 when ``status`` is OK, else None.
        detail: short human reason when not OK, "" when OK.
    """

    status: ParseStatus
    strategy: tuple[float, ...] | None
    detail: str

    @property
    def ok(self) -> bool:
        return self.status is ParseStatus.OK


# --------------------------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------------------------

_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUMWORD = r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten)"
_MAX_DIGITS = 12  # longer integers are reported as out of range without converting them
_SUM_TOL = 0.02 + 1e-9

_EMPTY_PURE = PureAnswer(ParseStatus.EMPTY, None, "empty text")
_EMPTY_MIXED = MixedAnswer(ParseStatus.EMPTY, None, "empty text")

_BOXED = re.compile(r"\\boxed\s*\{([^{}\n]*)\}")
_STRIP_CHARS = str.maketrans("", "", "*`$")


def _normalise_chat(text: str) -> str:
    """Drop reasoning before ``</think>``, markdown emphasis and TeX boxes (chat text only)."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    if "<think>" in text:  # reasoning cut off before its end: not an answer
        text = text.split("<think>", 1)[0]
    if "\\boxed" in text:
        text = _BOXED.sub(r"\nAnswer: \1\n", text)
    return text.translate(_STRIP_CHARS)


def _short(s: str, limit: int = 24) -> str:
    s = s.strip()
    return s if len(s) <= limit else s[: limit - 1] + "…"


# --------------------------------------------------------------------------------------------
# pure
# --------------------------------------------------------------------------------------------

_KW = r"(?:row|action|option|move|choice)"

# Payload of an explicit label (or the start of a continuation): the number must come first.
_PURE_PAYLOAD = re.compile(
    r"[ \t]*[\[(<{]?[ \t]*"
    rf"(?:(?P<kw>{_KW})\b[ \t]*(?:number|no\.)?[ \t]*)?#?[ \t]*"
    r"(?:(?P<num>[-+−]?\d+(?:\.\d+)?(?:[ \t]*/[ \t]*\d+)?)(?:st|nd|rd|th)?"
    rf"|(?P<word>{_NUMWORD})\b)"
    r"(?P<rest>[^\n]*)",
    re.IGNORECASE,
)
# After the number: the end of a clause, so a number word really is the answer.
_WORD_END = re.compile(r"[ \t]*(?:[.,;:!?)\]>}]|$)")
# After the number: an alternative answer ("2 or 3", "2, 3", "2 / row 3", "2 and row 3").
_ALTERNATIVE = re.compile(
    r"[ \t]*[)\]>}]?[ \t]*\(?[ \t]*"
    rf"(?:,[ \t]*(?P<n1>\d+|{_NUMWORD})\b"
    rf"|(?:/|\bor\b|\band\b|&)[ \t]*(?:{_KW}s?\b[ \t]*:?[ \t]*)?#?[ \t]*(?P<n2>\d+|{_NUMWORD})\b)",
    re.IGNORECASE,
)

_LABEL_SEP = r"[ \t]*(?:[:=：]|\bis\b|\bwould[ \t]+be\b|\bwill[ \t]+be\b)"
_ADJ = r"(?:final|best|optimal|chosen|recommended)"
_EXPLICIT = re.compile(
    # a label at the start of a line
    rf"^[ \t>#\-+•]*(?:\d+[.)][ \t]+)?(?:(?:my|the|your)[ \t]+)?(?:{_ADJ}[ \t]+)?"
    rf"(?:answer|action|choice|decision|move){_LABEL_SEP}(?=(?P<p1>[^\n]{{0,200}}))"
    # inline phrases
    rf"|\b(?:(?:my|the)[ \t]+(?:{_ADJ}[ \t]+)?(?:answer|choice|decision)"
    rf"|(?:my|the[ \t]+{_ADJ})[ \t]+(?:action|move)"
    rf"|final[ \t]+(?:answer|action|choice)){_LABEL_SEP}(?=(?P<p2>[^\n]{{0,200}}))"
    # inline "action:" / "answer:" right after punctuation ("So, Action: 2"; not "each action:")
    r"|(?<=[.!?,;:)\-–—])[ \t]*\b(?:action|answer)[ \t]*[:：](?=(?P<p3>[^\n]{0,200}))"
    # a line that is only "Action k" (not a markdown header)
    rf"|^[ \t>\-+•]*action[ \t]*#?[ \t]*(?P<p4>(?:\d+|{_NUMWORD})[ \t]*[.!]?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)

_BARE_PURE = re.compile(
    r"[\s\[(<#]*(?:(?:row|action|option)\b[ \t]*#?[ \t]*)?"
    rf"(?:(?P<num>[-+−]?\d+(?:\.\d+)?)|(?P<word>{_NUMWORD}))"
    r"[ \t]*[)\]>]?[ \t]*[.!]?\s*",
    re.IGNORECASE,
)

_CHOICE = re.compile(
    r"\b(?:choose|choosing|chose|pick|picking|play|playing|select|selecting"
    r"|go(?:ing)?[ \t]+with|opt(?:ing)?[ \t]+for|stick(?:ing)?[ \t]+with)[ \t]+"
    r"(?:the[ \t]+)?(?:row|action|option)[ \t]*#?[ \t]*"
    rf"(?P<num>\d+|{_NUMWORD})\b(?![.,]\d)",
    re.IGNORECASE,
)
_REF = re.compile(
    rf"\b(?:row|action|option)[ \t]*#?[ \t]*(?P<num>\d+|{_NUMWORD})\b(?![.,]\d)",
    re.IGNORECASE,
)
_HYPOTHETICAL_BEFORE = re.compile(
    r"(?:\b(?:not|never|if|when|whether|suppose|supposing|assuming|assume|unless)|n't)"
    r"(?:[ \t]+[\w']+){0,2}[ \t]*$",
    re.IGNORECASE,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:not|never|rather[ \t]+than|instead[ \t]+of|other[ \t]+than|except|excluding"
    r"|besides|avoid|avoiding|apart[ \t]+from)|n't)"
    r"(?:[ \t]+(?:to|choose|choosing|pick|picking|play|playing|select|selecting|use|using|the"
    r"|go|going|with|recommend|consider|considering|be|is|even))*[ \t]*,?[ \t]*$",
    re.IGNORECASE,
)

_FAST_CHAT = re.compile(r"\s*(?:action|answer)[ \t]*:[ \t]*(\d{1,6})[ \t]*\.?\s*", re.IGNORECASE)
_FAST_CONT = re.compile(r"[ \t]*(\d{1,6})[ \t]*\.?[ \t]*(?:\n|\Z)")


def _number_value(token: str) -> int | float | str:
    """Turn a digit/word token into an int, a non-integral float, or a str (too long / fraction)."""
    low = token.lower()
    if low in _WORDS:
        return _WORDS[low]
    token = token.replace("−", "-")
    if "/" in token:
        return token.replace(" ", "").replace("\t", "")
    digits = token.lstrip("+-").split(".")[0]
    if len(digits) > _MAX_DIGITS:
        return token
    if "." in token:
        value = float(token)
        return int(value) if value.is_integer() else value
    return int(token)


def _pure_result(value: int | float | str, num_actions: int) -> PureAnswer:
    if isinstance(value, str):
        if "/" in value:
            return PureAnswer(ParseStatus.NO_ANSWER, None, f"not a whole number: {_short(value)}")
        return PureAnswer(
            ParseStatus.OUT_OF_RANGE, None, f"action {_short(value)} not in 1..{num_actions}"
        )
    if isinstance(value, float):
        return PureAnswer(ParseStatus.NO_ANSWER, None, f"not a whole number: {value:g}")
    if 1 <= value <= num_actions:
        return PureAnswer(ParseStatus.OK, value - 1, "")
    return PureAnswer(ParseStatus.OUT_OF_RANGE, None, f"action {value} not in 1..{num_actions}")


def _read_payload(payload: str, num_actions: int) -> PureAnswer | None:
    """Read an answer that must start ``payload``; None when the payload holds no number first."""
    match = _PURE_PAYLOAD.match(payload)
    if match is None:
        return None
    rest = match.group("rest")
    if match.group("word") is not None:
        if match.group("kw") is None and not _WORD_END.match(rest):
            return None
        value = _number_value(match.group("word"))
    else:
        value = _number_value(match.group("num"))
    alternative = _ALTERNATIVE.match(rest)
    if alternative is not None:
        other = _number_value(alternative.group("n1") or alternative.group("n2"))
        if other != value:
            return PureAnswer(
                ParseStatus.AMBIGUOUS,
                None,
                f"several answers: {_short(str(value), 12)}, {_short(str(other), 12)}",
            )
    return _pure_result(value, num_actions)


def _distinct_candidates(
    text: str, pattern: re.Pattern[str], excluded_before: re.Pattern[str]
) -> list[int | float | str]:
    found: list[int | float | str] = []
    for match in pattern.finditer(text):
        start = match.start()
        if excluded_before.search(text, max(0, start - 48), start):
            continue
        value = _number_value(match.group("num"))
        if value not in found:
            found.append(value)
    return found


def _from_candidates(found: list[int | float | str], num_actions: int, what: str) -> PureAnswer:
    if len(found) == 1:
        return _pure_result(found[0], num_actions)
    listed = ", ".join(_short(str(v), 12) for v in found[:4])
    more = ", …" if len(found) > 4 else ""
    return PureAnswer(ParseStatus.AMBIGUOUS, None, f"{what} {listed}{more}")


def parse_pure(text: str, num_actions: int, *, continuation: bool = False) -> PureAnswer:
    """Parse one pure-action answer.

    Args:
        text: the model's reply (chat) or the continuation after the ``Action:`` cue.
        num_actions: m, the number of row actions (labelled 1..m in the prompt).
        continuation: True when ``text`` is a base model's continuation of a completion prompt.

    Returns:
        A ``PureAnswer``; ``action`` is the 0-based row index when OK. Never raises on a string.
    """
    _check_num_actions(num_actions)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if continuation:
        return _parse_pure_continuation(text, num_actions)

    fast = _FAST_CHAT.fullmatch(text)
    if fast is not None:
        return _pure_result(int(fast.group(1)), num_actions)

    text = _normalise_chat(text)
    if not text.strip():
        return _EMPTY_PURE

    # 1. explicit labelled answers: the last one wins
    for match in reversed(list(_EXPLICIT.finditer(text))):
        payload = match.group("p1")
        if payload is None:
            payload = match.group("p2")
        if payload is None:
            payload = match.group("p3")
        if payload is None:
            payload = match.group("p4")
        answer = _read_payload(payload, num_actions)
        if answer is not None:
            return answer

    # 2. the whole text is a number
    bare = _BARE_PURE.fullmatch(text)
    if bare is not None:
        token = bare.group("num") or bare.group("word")
        return _pure_result(_number_value(token), num_actions)

    # 3. choice phrases, then 4. references
    found = _distinct_candidates(text, _CHOICE, _HYPOTHETICAL_BEFORE)
    if found:
        return _from_candidates(found, num_actions, "several choices:")
    found = _distinct_candidates(text, _REF, _NEGATED_BEFORE)
    if found:
        return _from_candidates(found, num_actions, "several actions named:")
    return PureAnswer(ParseStatus.NO_ANSWER, None, "no action found")


def _parse_pure_continuation(text: str, num_actions: int) -> PureAnswer:
    fast = _FAST_CONT.match(text)
    if fast is not None:
        return _pure_result(int(fast.group(1)), num_actions)
    stripped = text.lstrip()
    if not stripped:
        return _EMPTY_PURE
    line = stripped.partition("\n")[0].translate(_STRIP_CHARS)
    answer = _read_payload(line, num_actions)
    if answer is None:
        return PureAnswer(
            ParseStatus.NO_ANSWER, None, f"does not start with an action: {_short(line, 20)!r}"
        )
    return answer


def _check_num_actions(num_actions: int) -> None:
    if isinstance(num_actions, bool) or not isinstance(num_actions, int):
        raise TypeError(f"num_actions must be an int, got {type(num_actions).__name__}")
    if num_actions < 1:
        raise ValueError(f"num_actions must be >= 1, got {num_actions}")


# --------------------------------------------------------------------------------------------
# mixed
# --------------------------------------------------------------------------------------------

_NUM = r"[-+−]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_VALUE = (
    rf"(?:\\[dt]?frac\{{[ \t]*{_NUM}[ \t]*\}}\{{[ \t]*{_NUM}[ \t]*\}}"
    rf"|{_NUM}(?:[ \t]*/[ \t]*{_NUM})?(?:[ \t]*%)?"
    r"|[-+−]?(?:nan|inf(?:inity)?)\b)"
)
_FRAC_PARTS = re.compile(rf"\\[dt]?frac\{{[ \t]*({_NUM})[ \t]*\}}\{{[ \t]*({_NUM})[ \t]*\}}")
_ITEM = re.compile(rf"\s*({_VALUE})(?!\w|\.\d)\s*(?:(?:[,;]|\band\b)\s*)?", re.IGNORECASE)

_STRATEGY_LABEL = re.compile(
    r"^[ \t>#\-+•]*(?:\d+[.)][ \t]+)?(?:(?:my|the|your)[ \t]+)?"
    r"(?:(?:final|mixed|optimal|best|chosen|recommended)[ \t]+)*"
    r"(?:strategy|answer|probabilities|distribution)"
    r"[ \t]*(?:[:=：]|\bis\b|\bwould[ \t]+be\b|\bwill[ \t]+be\b)(?=(?P<p1>[^\n]{0,2000}))"
    r"|\b(?:my|the[ \t]+(?:final|optimal|best|chosen|recommended))[ \t]+(?:mixed[ \t]+)?"
    r"strategy[ \t]+(?:is|would[ \t]+be|will[ \t]+be)\b[ \t]*:?(?=(?P<p2>[^\n]{0,2000}))",
    re.IGNORECASE | re.MULTILINE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

# an operand and an operator just before a label: "1 - p1 = 0.6" is arithmetic, not an answer
_ARITHMETIC_BEFORE = re.compile(r"[\w)\]][ \t]*[-+*/=^×÷][ \t]*$")
_PAIR = re.compile(
    r"(?:\b(?:action|row|option|move)[ \t]*#?[ \t]*(?P<k1>\d+)[ \t]*\)?[ \t]*"
    r"(?:->|[:=→]|[ \t]*\(?[ \t]*(?:with[ \t]+)?(?:a[ \t]+)?(?:probability\b|prob\b\.?|weight\b|p\b)"
    r"(?:[ \t]+of)?[ \t]*[:=]?)"
    r"|\b[px]_?\{?(?P<k2>\d+)\}?[ \t]*[:=]"
    r"|\bp(?:r|rob)?[ \t]*\([ \t]*(?:action|row|option)?[ \t]*(?P<k3>\d+)[ \t]*\)[ \t]*[:=]"
    r"|(?<![\d.])(?P<v4>" + _VALUE + r")[ \t]+(?:probability[ \t]+)?on[ \t]+(?:the[ \t]+)?"
    r"(?:action|row|option)[ \t]*#?[ \t]*(?P<k4>\d+)\b(?![.,]\d)"
    r")"
    r"(?:[ \t]*(?P<v>" + _VALUE + r")(?!\d|\.\d)(?![ \t]*[-+*/×÷^=][ \t]*[\w(.]))?",
    re.IGNORECASE,
)
_LIST_GROUP = re.compile(r"\[([^\[\]]{0,4000})\]|\(([^()\n]{0,4000})\)")
_PERCENT_AFTER = re.compile(r"[ \t]*(?:%|percent\b)", re.IGNORECASE)
_LISTISH_LINE = re.compile(r"[ \t]*[\d.+\-−\],;)%]")
# Fast paths for the answer as asked for; anything else goes through the general rules.
_FAST_LIST = (
    r"[ \t]*((?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[ \t]*,[ \t]*(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))*)"
)
_FAST_MIXED_CHAT = re.compile(
    r"\s*(?:strategy|answer)[ \t]*:[ \t]*\[" + _FAST_LIST + r"[ \t]*\][ \t]*\.?\s*", re.IGNORECASE
)
_FAST_MIXED_CONT = re.compile(
    r"[ \t]*\[?" + _FAST_LIST + r"[ \t]*\](?![ \t]*(?:%|percent))", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class _Found:
    """Raw values found in a text, before validation (or an early failure)."""

    values: tuple[float, ...] | None
    failure: MixedAnswer | None = None


def _to_float(token: str) -> float:
    token = token.strip().replace("−", "-").lower()
    if token.endswith("%"):
        return _to_float(token[:-1]) / 100.0
    if token.startswith("\\"):
        parts = _FRAC_PARTS.match(token)
        if parts is None:  # cannot happen: the token matched _VALUE
            return math.nan
        return _divide(float(parts.group(1)), float(parts.group(2)))
    if "/" in token:
        num, _, den = token.partition("/")
        return _divide(float(num), float(den))
    return float(token)


def _divide(num: float, den: float) -> float:
    if den == 0.0:
        return math.nan if num == 0.0 else math.copysign(math.inf, num)
    return num / den


def _parse_list_content(content: str) -> list[float] | None:
    """All of ``content`` as separated values, or None if anything else is in it."""
    values: list[float] = []
    pos = 0
    end = len(content)
    while pos < end:
        match = _ITEM.match(content, pos)
        if match is None:
            if content[pos:].strip() == "":
                break
            return None
        if match.end() == match.end(1) and match.end() < end:
            return None  # two values with nothing between them
        values.append(_to_float(match.group(1)))
        pos = match.end()
    return values or None


def _leading_values(text: str) -> list[float]:
    """The leading run of separated values at the start of ``text`` (possibly empty)."""
    values: list[float] = []
    pos = 0
    while True:
        match = _ITEM.match(text, pos)
        if match is None:
            return values
        values.append(_to_float(match.group(1)))
        if match.end() == match.end(1):
            return values
        pos = match.end()


def _pairs(text: str, num_actions: int) -> _Found | None:
    """Labelled pairs anywhere in ``text`` assembled into a vector, or None if there are none."""
    pairs: dict[int, float] = {}
    for match in _PAIR.finditer(text):
        label = match.group("k1") or match.group("k2") or match.group("k3") or match.group("k4")
        value_token = match.group("v4") if match.group("k4") else match.group("v")
        if value_token is None:
            continue
        if _ARITHMETIC_BEFORE.search(text, max(0, match.start() - 12), match.start()):
            continue
        if match.group("k4") and not any(c in value_token for c in ".%/"):
            continue  # "3 on row 1" is more likely a payoff than a probability
        if len(label) > _MAX_DIGITS:
            return _Found(None, _mixed_fail(ParseStatus.OUT_OF_RANGE, "action label too long"))
        index = int(label)
        value = _to_float(value_token)
        if index in pairs and not _same(pairs[index], value):
            return _Found(
                None,
                _mixed_fail(
                    ParseStatus.AMBIGUOUS, f"p{index} given twice ({pairs[index]:g}, {value:g})"
                ),
            )
        pairs[index] = value
    if not pairs:
        return None
    outside = [k for k in pairs if not 1 <= k <= num_actions]
    if outside:
        return _Found(
            None,
            _mixed_fail(ParseStatus.OUT_OF_RANGE, f"action {outside[0]} not in 1..{num_actions}"),
        )
    missing = [k for k in range(1, num_actions + 1) if k not in pairs]
    if missing:
        return _Found(
            None,
            _mixed_fail(
                ParseStatus.WRONG_LENGTH, f"no value for action {missing[0]} ({len(pairs)} given)"
            ),
        )
    return _Found(tuple(pairs[k] for k in range(1, num_actions + 1)))


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _list_groups(text: str) -> list[tuple[float, ...]]:
    """Numeric bracketed lists in ``text``, in order (parentheses need at least 2 values)."""
    groups: list[tuple[float, ...]] = []
    for match in _LIST_GROUP.finditer(text):
        square = match.group(1) is not None
        values = _parse_list_content(match.group(1) if square else match.group(2))
        if values is None or (not square and len(values) < 2):
            continue
        if _PERCENT_AFTER.match(text, match.end()):
            values = [v / 100.0 for v in values]
        groups.append(tuple(values))
    return groups


def _payload_values(payload: str, num_actions: int) -> _Found | None:
    """Values of a labelled payload: first list, else pairs, else leading numbers; None if none."""
    groups = _list_groups(payload)
    if groups:
        return _Found(groups[0])
    found = _pairs(payload, num_actions)
    if found is not None:
        return found
    start = payload.lstrip(" \t\n[(")
    values = _leading_values(start)
    if values:
        return _Found(tuple(values))
    return None


def _mixed_fail(status: ParseStatus, detail: str) -> MixedAnswer:
    return MixedAnswer(status, None, detail)


def _validate(found: _Found, num_actions: int) -> MixedAnswer:
    if found.failure is not None:
        return found.failure
    values = found.values or ()
    if len(values) != num_actions:
        noun = "value" if len(values) == 1 else "values"
        return _mixed_fail(
            ParseStatus.WRONG_LENGTH, f"{len(values)} {noun} for {num_actions} actions"
        )
    for i, v in enumerate(values, start=1):
        if math.isnan(v) or math.isinf(v):
            return _mixed_fail(ParseStatus.NON_FINITE, f"p{i} is {v}")
    for i, v in enumerate(values, start=1):
        if v < 0.0:
            return _mixed_fail(ParseStatus.NOT_A_DISTRIBUTION, f"negative p{i} = {v:g}")
    total = math.fsum(values)
    if total == 0.0:
        return _mixed_fail(ParseStatus.NOT_A_DISTRIBUTION, "all zero")
    if not abs(total - 1.0) <= _SUM_TOL:
        return _mixed_fail(ParseStatus.NOT_A_DISTRIBUTION, f"sum {total:.2f}")
    if total == 1.0:
        return MixedAnswer(ParseStatus.OK, tuple(v + 0.0 for v in values), "")
    scaled = [v / total for v in values]
    biggest = max(range(len(scaled)), key=scaled.__getitem__)
    scaled[biggest] += 1.0 - math.fsum(scaled)
    return MixedAnswer(ParseStatus.OK, tuple(scaled), "")


def parse_mixed(text: str, num_actions: int, *, continuation: bool = False) -> MixedAnswer:
    """Parse one mixed-strategy answer.

    Args:
        text: the model's reply (chat) or the continuation after the ``Strategy: [`` cue.
        num_actions: m, the number of row actions; the strategy must have m entries.
        continuation: True when ``text`` is a base model's continuation of a completion prompt.

    Returns:
        A ``MixedAnswer``; ``strategy`` has m entries summing to 1 when OK. Never raises on a
        string.
    """
    _check_num_actions(num_actions)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    fast = (_FAST_MIXED_CONT.match if continuation else _FAST_MIXED_CHAT.fullmatch)(text)
    if fast is not None:
        values = tuple(float(v) for v in fast.group(1).split(","))
        return _validate(_Found(values), num_actions)
    if continuation:
        return _parse_mixed_continuation(text, num_actions)

    text = _normalise_chat(text)
    if not text.strip():
        return _EMPTY_MIXED

    # 1. the last labelled line that holds numbers
    for match in reversed(list(_STRATEGY_LABEL.finditer(text))):
        group = "p1" if match.group("p1") is not None else "p2"
        payload = _extend_payload(text, match.group(group), match.end(group))
        found = _payload_values(payload, num_actions)
        if found is not None:
            return _validate(found, num_actions)

    # 2. the whole text is a list of numbers
    whole = text.strip().rstrip(".").strip()
    percent_all = False
    if whole and whole[0] in "[(" and whole[-1] in "])":
        whole = whole[1:-1]
    elif whole.endswith("%") and whole[0] in "[(" and whole.rstrip("% \t")[-1:] in "])":
        whole = whole.rstrip("% \t")[1:-1]
        percent_all = True
    values = _parse_list_content(whole)
    if values is not None:
        if percent_all:
            values = [v / 100.0 for v in values]
        return _validate(_Found(tuple(values)), num_actions)

    # 3. prose: labelled pairs and numeric lists must agree
    from_pairs = _pairs(text, num_actions)
    distinct: list[tuple[float, ...]] = []
    for group in _list_groups(text):
        if group not in distinct:
            distinct.append(group)
    if from_pairs is None and not distinct:
        return _mixed_fail(ParseStatus.NO_ANSWER, "no strategy found")
    if from_pairs is None:
        if len(distinct) > 1:
            return _mixed_fail(ParseStatus.AMBIGUOUS, f"{len(distinct)} different lists")
        return _validate(_Found(distinct[0]), num_actions)
    if distinct and (from_pairs.values is None or any(g != from_pairs.values for g in distinct)):
        return _mixed_fail(ParseStatus.AMBIGUOUS, "labelled values and a list disagree")
    return _validate(from_pairs, num_actions)


def _extend_payload(text: str, payload: str, end: int) -> str:
    """An empty payload, or an unclosed ``[``, continues on the following lines."""
    stripped = payload.strip()
    if stripped and not (stripped.count("[") > stripped.count("]")):
        return payload
    rest = text[end:]
    blank = _BLANK_LINE.search(rest)
    block = rest[: blank.start()] if blank is not None else rest
    if not stripped:
        return block
    close = block.find("]")
    return payload + (block[: close + 1] if close >= 0 else "")


def _continuation_region(text: str) -> str:
    """First line, plus following lines that continue a numeric list, up to a blank line."""
    first, newline, rest = text.partition("\n")
    if not newline or "]" in first or ")" in first:
        return first
    lines = [first]
    for line in rest.split("\n", 32)[:32]:
        if not line.strip() or not _LISTISH_LINE.match(line):
            break
        lines.append(line)
        if "]" in line or ")" in line:
            break
    return "\n".join(lines)


def _parse_mixed_continuation(text: str, num_actions: int) -> MixedAnswer:
    body = text.lstrip()
    if not body:
        return _EMPTY_MIXED
    if body[0] in "[(":
        body = body[1:]
    region = _continuation_region(body).translate(_STRIP_CHARS)
    closes = [i for i in (region.find("]"), region.find(")")) if i >= 0]
    if closes:
        close = min(closes)
        content = region[:close]
        values = _parse_list_content(content)
        if values is not None:
            if _PERCENT_AFTER.match(region, close + 1):
                values = [v / 100.0 for v in values]
            return _validate(_Found(tuple(values)), num_actions)
        if _PAIR.match(content.lstrip()):
            found = _pairs(content, num_actions)
            if found is not None:
                return _validate(found, num_actions)
        return _mixed_fail(ParseStatus.NO_ANSWER, f"not a list of numbers: {_short(content, 20)!r}")
    values = _leading_values(region)
    if values:
        return _validate(_Found(tuple(values)), num_actions)
    if _PAIR.match(region.lstrip()):
        found = _pairs(region, num_actions)
        if found is not None:
            return _validate(found, num_actions)
    return _mixed_fail(
        ParseStatus.NO_ANSWER, f"does not start with numbers: {_short(region, 20)!r}"
    )
