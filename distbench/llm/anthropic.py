"""The Anthropic Messages wire format: request bodies and the reading of answers.

A provider whose ``wire`` option is ``"anthropic"`` is served by the same HTTP backend as the
OpenAI-compatible ones (:class:`~distbench.llm.http.OpenAICompatibleBackend`: one retry loop,
rate limits, body caps); only the path, the headers and the body differ, and
:func:`~distbench.llm.http.build_payload` / :func:`~distbench.llm.http.parse_body` dispatch here.

- Request: ``POST /v1/messages`` with ``x-api-key`` and ``anthropic-version: 2023-06-01``;
  body ``model``, ``max_tokens``, ``temperature``, ``system`` (the system messages taken out
  of the conversation, joined), ``messages`` (roles ``user`` / ``assistant`` only),
  ``stop_sequences``. There is no ``seed`` (the API has none and refuses unknown fields), no
  ``n`` (one answer per request: ``max_n`` 1) and no log-probabilities (chat style only:
  logprob mode is refused before any call).
- Answer: ``content`` a list of blocks; the text is every ``text`` block's ``text`` joined
  (other blocks, e.g. ``thinking``, are not the answer); ``usage.input_tokens`` /
  ``output_tokens`` through :func:`~distbench.llm.base.token_count`; ``stop_reason`` a string
  or null (``max_tokens`` is noted). Every field is untrusted: a malformed one is a
  :class:`BadMessage` naming it (a failed call), text is made valid UTF-8.

Knows no game, no network: pure functions, tested without a server.
"""

from __future__ import annotations

from typing import Any

from distbench.llm.base import BackendSpec, Request, token_count, valid_text

__all__ = ["API_VERSION", "BadMessage", "MESSAGES_PATH", "WIRE", "headers", "message_fields",
           "messages_payload"]

WIRE = "anthropic"
"""The value of a provider's ``wire`` option that selects this format."""
API_VERSION = "2023-06-01"
MESSAGES_PATH = "/v1/messages"
MAX_BLOCKS = 1024
"""Most content blocks read from one answer (a longer list is a malformed body)."""


class BadMessage(ValueError):
    """A 2xx body that is not a usable Messages answer (the message names the field)."""


def headers(key: str) -> dict[str, str]:
    """The request headers: the key (when there is one) and the API version."""
    out = {"anthropic-version": API_VERSION}
    if key:
        out["x-api-key"] = key
    return out


def messages_payload(spec: BackendSpec, req: Request) -> tuple[str, dict[str, Any]]:
    """The (path, JSON body) of ``req`` for the Messages API.

    Raises:
        ValueError: the request asks for what the API does not give (completion style,
            log-probabilities, several samples in one request).
    """
    if req.style_for(spec.style) != "chat" or req.logprobs is not None:
        raise ValueError(f"{spec.provider} speaks the Anthropic Messages API, chat only: "
                         "no completions and no log-probabilities (logprob mode)")
    if req.n > 1:
        raise ValueError(f"{spec.provider} answers one sample per request (max_n 1)")
    system: list[str] = []
    messages: list[dict[str, str]] = []
    for message in req.chat_messages():
        role, content = message["role"], message["content"]
        if role == "system":
            system.append(content)
        elif messages and messages[-1]["role"] == role:  # the API wants turns to alternate
            messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + content}
        else:
            messages.append({"role": role, "content": content})
    body: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        "messages": messages,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if req.stop:
        body["stop_sequences"] = list(req.stop)
    return MESSAGES_PATH, body


def message_fields(data: Any, notes: list[str]) -> tuple[str, int | None, int | None]:
    """(text, input tokens, output tokens) of a Messages answer body, every field checked;
    what cannot be used is noted in ``notes`` (token counts stored as NULL, text repaired).

    Raises:
        BadMessage: the body is not a Messages answer; the message names the field.
    """
    if not isinstance(data, dict):
        raise BadMessage(f"the body is not a JSON object (a {type(data).__name__})")
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise BadMessage("content: missing or not a list")
    if len(blocks) > MAX_BLOCKS:
        raise BadMessage(f"content: {len(blocks):,} blocks, more than {MAX_BLOCKS:,}")
    parts: list[str] = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise BadMessage(f"content[{i}]: not a JSON object")
        if block.get("type") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise BadMessage(f"content[{i}].text: missing or not a string")
        parts.append(text)
    value, note = valid_text("".join(parts), "text")
    if note:
        notes.append(note)
    stop = data.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        notes.append(f"stop_reason: a {type(stop).__name__} is not text (ignored)")
    elif stop == "max_tokens":
        notes.append("stop_reason: max_tokens (the answer was cut)")
    usage = data.get("usage")
    if usage is None:
        return value, None, None
    if not isinstance(usage, dict):
        notes.append(f"usage: a {type(usage).__name__} is not a JSON object "
                     "(token counts stored as NULL)")
        return value, None, None
    counts = []
    for field in ("input_tokens", "output_tokens"):
        count, note = token_count(usage.get(field), f"usage.{field}")
        if note:
            notes.append(note)
        counts.append(count)
    return value, counts[0], counts[1]
