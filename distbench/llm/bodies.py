"""Reading an answer's body as untrusted data (:func:`parse_body`): every field checked, a
malformed one a :class:`BadBody` naming it, an implausible token count None with a note, text
made valid UTF-8. Used by :mod:`distbench.llm.http` (and importable from it)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from distbench.llm import anthropic
from distbench.llm.base import token_count, valid_text


class BadBody(ValueError):
    """A 2xx response whose body is not a usable OpenAI answer (the message names the field)."""


class Parsed(NamedTuple):
    """What a response body says, every field checked (:func:`parse_body`).

    Attributes:
        text: The first choice's text, valid UTF-8.
        prompt_tokens: ``usage.prompt_tokens`` when it is a plausible count, else None.
        completion_tokens: ``usage.completion_tokens`` likewise.
        logprobs: The first token's top log-probabilities as (token, logprob) pairs, or None.
        texts: Every choice's text in ``index`` order (for a request of several samples),
            or None when not asked for.
        notes: What could not be used, one entry per field (see :attr:`Response.notes`).
        reasoning: A provider's separate reasoning text (``message.reasoning_content``), or None.
        reasoning_tokens: ``usage.completion_tokens_details.reasoning_tokens`` when plausible.
    """

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    logprobs: tuple | None
    texts: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    reasoning: str | None = None
    reasoning_tokens: int | None = None


def parse_body(style: str, data: Any, n: int = 1, wire: str | None = None) -> Parsed:
    """The answer in a response body, each field read as untrusted data: the choices in
    ``index`` order (:func:`ordered_choices`), texts made valid UTF-8, token counts kept only
    when plausible (:func:`~distbench.llm.base.token_count`), the first token's logprobs.
    ``n`` > 1 also reads every choice's text (``texts``). ``wire`` ``"anthropic"`` reads a
    Messages answer instead (:func:`~distbench.llm.anthropic.message_fields`; one text, no
    logprobs).

    Raises:
        BadBody: the body is not an OpenAI-shaped answer; the message names the field.
        BadMessage: (``wire="anthropic"``) the body is not a Messages answer.
    """
    notes: list[str] = []
    if wire == anthropic.WIRE:
        text, p_tok, c_tok = anthropic.message_fields(data, notes)
        return Parsed(text, p_tok, c_tok, None, (text,) if n > 1 else None, tuple(notes))
    choices = ordered_choices(data)
    text = _note(notes, valid_text(_choice_text(style, choices[0], 0), "text"))
    texts = None
    if n > 1:
        texts = tuple(_note(notes, valid_text(_choice_text(style, c, i), f"choices[{i}] text"))
                      for i, c in enumerate(choices))
    p_tok, c_tok = _usage(data, notes)
    top = _top_logprobs(style, choices[0], notes)
    reasoning, r_tok = _reasoning(style, data, choices[0], notes)
    return Parsed(text, p_tok, c_tok, top, texts, tuple(notes), reasoning, r_tok)


def _note(notes: list[str], checked: tuple[Any, str]) -> Any:
    """The value of a (value, note) pair, its note (if any) added to ``notes``."""
    value, note = checked
    if note:
        notes.append(note)
    return value


def ordered_choices(data: Any) -> list[dict[str, Any]]:
    """A body's ``choices`` in the order of their ``index`` (a choice without one, or with
    ``"index": null``, stands at its position), checked: a non-empty list of objects whose
    indices are distinct integers ``0 .. len - 1``.

    Raises:
        BadBody: naming the field (``choices[2].index: 'zero' is not an integer``).
    """
    if not isinstance(data, dict):
        raise BadBody(f"the body is not a JSON object (a {type(data).__name__})")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BadBody("choices: missing, empty or not a list")
    by_index: dict[int, dict[str, Any]] = {}
    for pos, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise BadBody(f"choices[{pos}]: not a JSON object")
        index = choice.get("index")
        if index is None:  # absent or null: the choice stands at its position
            index = pos
        if isinstance(index, bool) or not isinstance(index, int):
            raise BadBody(f"choices[{pos}].index: {str(index)[:40]!r} is not an integer")
        if not 0 <= index < len(choices):
            raise BadBody(f"choices[{pos}].index: {index} is out of range "
                          f"(0 to {len(choices) - 1})")
        if index in by_index:
            raise BadBody(f"choices[{pos}].index: {index} appears twice")
        by_index[index] = choice
    return [by_index[i] for i in range(len(choices))]


def _choice_text(style: str, choice: dict[str, Any], index: int) -> str:
    """A choice's text (``text``, or ``message.content`` in chat style; null is "")."""
    try:
        text = choice["text"] if style == "completion" else choice["message"]["content"]
    except (KeyError, TypeError) as exc:
        field = "text" if style == "completion" else "message.content"
        raise BadBody(f"choices[{index}].{field}: missing ({type(exc).__name__})") from None
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return text


def _usage(data: dict[str, Any], notes: list[str]) -> tuple[int | None, int | None]:
    """The body's plausible (prompt, completion) token counts; the rest None, noted."""
    usage = data.get("usage")
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        notes.append(f"usage: a {type(usage).__name__} is not a JSON object "
                     "(token counts stored as NULL)")
        return None, None
    return (_note(notes, token_count(usage.get("prompt_tokens"), "usage.prompt_tokens")),
            _note(notes, token_count(usage.get("completion_tokens"), "usage.completion_tokens")))


def _top_logprobs(style: str, choice: dict[str, Any], notes: list[str]) -> tuple | None:
    """The first generated token's top log-probabilities of a choice, or None.

    Raises:
        BadBody: the ``logprobs`` field is there but not readable.
    """
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return None
    try:
        if style == "completion" and lp.get("top_logprobs"):
            first = lp["top_logprobs"][0] or {}
            pairs = [(t, v) for t, v in first.items()]
        elif lp.get("content"):
            first = lp["content"][0] or {}
            entries = first.get("top_logprobs") or [
                {"token": first.get("token", ""), "logprob": first.get("logprob", -math.inf)}
            ]
            pairs = [(e["token"], e["logprob"]) for e in entries]
        else:
            return None
        top = []
        for token, value in pairs:
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or value > 1e-3 or math.isnan(value)):
                raise TypeError(f"logprob {str(value)[:40]!r} is not a log-probability")
            top.append((_note(notes, valid_text(str(token), "logprobs token")), float(value)))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        raise BadBody(f"choices[0].logprobs: unreadable ({type(exc).__name__}: "
                      f"{str(exc)[:80]})") from None
    return tuple(top)


def _reasoning(style: str, data: dict[str, Any], choice: dict[str, Any],
               notes: list[str]) -> tuple[str | None, int | None]:
    """(reasoning text, reasoning tokens) a provider returned beside the answer: the first
    choice's ``message.reasoning_content`` (chat) as valid UTF-8, and a plausible
    ``usage.completion_tokens_details.reasoning_tokens``; None for what is absent or not of
    the right type (noted, never an error: reasoning is not the answer)."""
    text = None
    message = choice.get("message") if style != "completion" else None
    value = message.get("reasoning_content") if isinstance(message, dict) else None
    if isinstance(value, str):
        text = _note(notes, valid_text(value, "reasoning_content"))
    elif value is not None:
        notes.append(f"reasoning_content: a {type(value).__name__} is not text (stored as NULL)")
    usage = data.get("usage")
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    tokens = None
    if isinstance(details, dict) and details.get("reasoning_tokens") is not None:
        tokens = _note(notes, token_count(details.get("reasoning_tokens"),
                                          "usage.completion_tokens_details.reasoning_tokens"))
    return text, tokens
