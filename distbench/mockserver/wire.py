"""The OpenAI wire format as the mock server speaks it: response bodies, error bodies, and the
checks on request fields (a bad field raises :class:`BadRequest`, answered 400).

Token counts are approximate (a quarter of the characters, rounded up); a body's ``id`` is a
hash of its text, so the same answer gets the same id.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "BadRequest",
    "approx_tokens",
    "chat_args",
    "chat_logprob",
    "chat_response",
    "completion_args",
    "completion_response",
    "error_body",
    "message_response",
    "messages_args",
    "skill_of",
]


class BadRequest(ValueError):
    """A request body the server cannot use (answered 400)."""


def approx_tokens(text: str) -> int:
    """A token count for ``usage``: one per four characters, rounded up (0 for no text)."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


# --- response bodies ----------------------------------------------------------------------


def _texts(text: str | Sequence[str]) -> list[str]:
    return [text] if isinstance(text, str) else list(text)


def _listed(logprobs: Any, count: int) -> list[Any]:
    return list(logprobs) if isinstance(logprobs, list) else [logprobs] * count


def chat_response(
    model: str, text: str | Sequence[str], prompt_tokens: int,
    logprobs: dict[str, Any] | list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` body: one choice per text (a list of texts answers a
    request with ``n``; ``logprobs`` may then be a list, one per choice)."""
    texts = _texts(text)
    choices = [{"index": i, "message": {"role": "assistant", "content": t},
                "logprobs": lp, "finish_reason": "stop"}
               for i, (t, lp) in enumerate(zip(texts, _listed(logprobs, len(texts)), strict=True))]
    return _body("chat.completion", "chatcmpl-", model, texts, prompt_tokens, choices)


def completion_response(
    model: str, text: str | Sequence[str], prompt_tokens: int,
    logprobs: dict[str, Any] | list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """An OpenAI ``text_completion`` body: one choice per text (as :func:`chat_response`)."""
    texts = _texts(text)
    choices = [{"index": i, "text": t, "logprobs": lp, "finish_reason": "stop"}
               for i, (t, lp) in enumerate(zip(texts, _listed(logprobs, len(texts)), strict=True))]
    return _body("text_completion", "cmpl-", model, texts, prompt_tokens, choices)


def _body(kind: str, id_prefix: str, model: str, texts: list[str], prompt_tokens: int,
          choices: list[dict[str, Any]]) -> dict[str, Any]:
    """The fields every OpenAI completion body shares, around its choices (the prompt is
    billed once, the completion tokens of every choice)."""
    completion_tokens = sum(approx_tokens(t) for t in texts)
    return {
        "id": id_prefix + hashlib.blake2b("\0".join(texts).encode(), digest_size=8).hexdigest(),
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def chat_logprob(token: str, logprob: float, alts: list[tuple[str, float]]) -> dict[str, Any]:
    """One entry of a chat choice's ``logprobs.content``: the token and its top alternatives."""
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": alt, "logprob": value, "bytes": list(alt.encode())} for alt, value in alts
        ],
    }


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI error body: ``{"error": {message, type, param, code}}``."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# --- request bodies -----------------------------------------------------------------------


def _int_field(body: dict[str, Any], name: str, default: int | None, low: int = 0) -> int | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise BadRequest(f"'{name}' must be an integer >= {low}")
    return value


def _float_field(body: dict[str, Any], name: str, default: float) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BadRequest(f"'{name}' must be a number >= 0")
    return float(value)


def _seed_field(body: dict[str, Any]) -> int | None:
    value = body.get("seed")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("'seed' must be an integer")
    return value


MAX_N = 128
"""The most choices one request may ask for (OpenAI's limit)."""


def _n_field(body: dict[str, Any]) -> int:
    n = _int_field(body, "n", 1, low=1)
    if n is None or n > MAX_N:
        raise BadRequest(f"'n' must be between 1 and {MAX_N}")
    return n


_SKILL = re.compile(r"-nash(\d{1,3})$")


def skill_of(model: Any) -> float | None:
    """The skill a model name asks the mock for: ``mock-nash90`` plays the equilibrium in 90%
    of its answers (``-nash0`` to ``-nash100``); None for any other name (the dummy's random
    answers)."""
    found = _SKILL.search(model) if isinstance(model, str) else None
    if found is None or int(found.group(1)) > 100:
        return None
    return int(found.group(1)) / 100


def _with_skill(body: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with ``skill`` when the body's model names one (:func:`skill_of`); left out
    otherwise, so an answerer need not know it."""
    skill = skill_of(body.get("model"))
    if skill is not None:
        args["skill"] = skill
    return args


def chat_args(body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(messages, keyword arguments of ``Answerer.chat``) from a chat request body.

    Raises:
        BadRequest: A field is missing or of the wrong type or range.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            raise BadRequest("each message must be an object with a 'role'")
    logprobs = body.get("logprobs", False)
    if not isinstance(logprobs, bool):
        raise BadRequest("'logprobs' must be true or false")
    top = _int_field(body, "top_logprobs", None)
    if top is not None and top > 20:
        raise BadRequest("'top_logprobs' must be between 0 and 20")
    return messages, _sampling(body, 256, logprobs=logprobs, top_logprobs=top)


def completion_args(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(prompt, keyword arguments of ``Answerer.complete``) from a completion request body.

    Raises:
        BadRequest: A field is missing or of the wrong type or range.
    """
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise BadRequest("'prompt' must be a string")
    logprobs = _int_field(body, "logprobs", None)
    if logprobs is not None and logprobs > 20:
        raise BadRequest("'logprobs' must be between 0 and 20")
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise BadRequest("'stop' must be a string or a list of strings")
    return prompt, _sampling(body, 16, logprobs=logprobs, stop=stop)


def _sampling(body: dict[str, Any], max_tokens: int, **fields: Any) -> dict[str, Any]:
    """The keyword arguments of an ``Answerer`` call: the sampling fields both OpenAI
    endpoints read (``max_tokens`` defaulting to ``max_tokens``, ``temperature``, ``seed``,
    ``n``), the endpoint's own ``fields`` and the skill (:func:`_with_skill`)."""
    return _with_skill(body, {
        "max_tokens": _int_field(body, "max_tokens", max_tokens, low=1),
        "temperature": _float_field(body, "temperature", 1.0),
        "seed": _seed_field(body),
        **fields,
        "n": _n_field(body),
    })


# --- the Anthropic Messages API ----------------------------------------------------------

MESSAGES_FIELDS = frozenset({"model", "max_tokens", "messages", "system", "temperature",
                             "stop_sequences", "top_p", "top_k", "metadata", "stream"})
"""The request fields ``/v1/messages`` takes (another one is refused, as Anthropic does)."""


def _block_text(content: Any, name: str) -> str:
    """A Messages ``content``/``system``: a string, or a list of ``text`` blocks (joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in content):
        return "".join(b["text"] for b in content)
    raise BadRequest(f"'{name}' must be a string or a list of text blocks")


def messages_args(body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(OpenAI-style messages, keyword arguments of ``Answerer.chat``) from a Messages request
    body: the ``system`` field becomes the first message; ``max_tokens`` is required,
    ``temperature`` within [0, 1], unknown fields refused.

    Raises:
        BadRequest: A field is missing, unknown, or of the wrong type or range.
    """
    extra = sorted(set(body) - MESSAGES_FIELDS)
    if extra:
        raise BadRequest(f"{extra[0]}: Extra inputs are not permitted")
    if body.get("stream"):
        raise BadRequest("'stream' is not served by this mock")
    if "max_tokens" not in body:
        raise BadRequest("max_tokens: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    out: list[dict[str, Any]] = []
    if body.get("system") is not None:
        out.append({"role": "system", "content": _block_text(body["system"], "system")})
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise BadRequest(f"messages.{i}.role: must be 'user' or 'assistant'")
        out.append({"role": message["role"],
                    "content": _block_text(message.get("content"), f"messages.{i}.content")})
    temperature = _float_field(body, "temperature", 1.0)
    if temperature > 1.0:
        raise BadRequest("temperature: must be between 0 and 1")
    stop = body.get("stop_sequences")
    if stop is not None and not (isinstance(stop, list) and all(isinstance(x, str) for x in stop)):
        raise BadRequest("'stop_sequences' must be a list of strings")
    return out, _with_skill(body, {
        "max_tokens": _int_field(body, "max_tokens", None, low=1),
        "temperature": temperature,
        "seed": None,
        "logprobs": False,
        "top_logprobs": None,
        "n": 1,
    })


def message_response(chat: dict[str, Any]) -> dict[str, Any]:
    """The Messages answer carrying what the OpenAI ``chat.completion`` body ``chat`` says:
    its first choice's text as one ``text`` block, its usage under Anthropic's names (a usage
    that is not an object is passed on as it is: the hostile bodies)."""
    choices = chat.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    usage = chat.get("usage")
    if isinstance(usage, dict):
        usage = {"input_tokens": usage.get("prompt_tokens"),
                 "output_tokens": usage.get("completion_tokens")}
    return {
        "id": "msg_" + str(chat.get("id", "")).removeprefix("chatcmpl-"),
        "type": "message",
        "role": "assistant",
        "model": chat.get("model"),
        "content": [{"type": "text", "text": text if isinstance(text, str) else ""}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


class _Headers(dict):
    """A request's headers: names compared without case (as the e-mail ``Message`` the
    standard library gives); a repeated header keeps its first value, as ``Message.get``."""

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> Any:
        return super().get(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


def _read_headers(rfile: Any, most: int = 100) -> _Headers | None:
    """The header lines up to the blank one (None past ``most`` lines or a line over 64
    KiB, the standard library's limits); a line without a colon is skipped."""
    headers = _Headers()
    for _ in range(most + 1):
        line = rfile.readline(65537)
        if len(line) > 65536:
            return None
        if line in (b"\r\n", b"\n", b""):
            return headers
        name, sep, value = str(line, "iso-8859-1").partition(":")
        if sep:
            headers.setdefault(name.strip().lower(), value.strip())
    return None
