"""Request bodies, request hashes and transcripts built from remembered per-message parts are
the text the whole-body encoders give (issue 35: a long game resends every earlier message)."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from distbench.llm import base, transport
from distbench.llm.base import Request, render_transcript
from distbench.llm.cache import cache_key
from distbench.llm.registry import make_spec
from distbench.llm.transport import json_bytes

_TRICKY = ['"messages":0', 'a "quoted" \\ back\\slash', "é ü \u2028 \x00 \t\n", "", "  pad  ",
           '{"role":"user","content":"x"}', "\U0001f600 emoji", "plain"]


def _conversation(rng: random.Random, n: int) -> tuple[tuple[str, str], ...]:
    roles = ["system", "user", "assistant", "tool"]
    return tuple((rng.choice(roles), "".join(rng.choice(_TRICKY) for _ in range(rng.randint(0, 4))))
                 for _ in range(n))


def _plain_hash(spec, req: Request) -> str:
    """The request hash as one ``json.dumps`` of the whole key (the definition)."""
    payload = {"provider": spec.provider, "model": spec.model, "style": spec.style,
               "base_url": spec.option("base_url"), "prompt": req.prompt, "seed": req.seed,
               "max_tokens": req.max_tokens, "temperature": req.temperature,
               "logprobs": req.logprobs, "stop": list(req.stop) if req.stop else None,
               "messages": [list(m) for m in req.messages] if req.messages else None}
    if req.samples:
        payload["samples"] = [int(x) for x in req.samples]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


@pytest.mark.parametrize("seed", range(6))
def test_spliced_bodies_hashes_and_transcripts_equal_the_whole_encodings(seed: int) -> None:
    rng = random.Random(seed)
    spec = make_spec("dummy", rng.choice(_TRICKY))
    for _ in range(40):
        messages = _conversation(rng, rng.randint(0, 12))
        req = Request(prompt=rng.choice(_TRICKY), messages=messages or None, seed=rng.randint(0, 9),
                      stop=("\n",) if rng.random() < 0.5 else None,
                      samples=(1, 2) if rng.random() < 0.3 else None)
        body = {"model": rng.choice(_TRICKY), "max_tokens": 7, "temperature": 0.7,
                "messages": req.chat_messages(),
                **({"logprobs": True} if rng.random() < 0.5 else {})}
        assert json_bytes(body) == json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                                              allow_nan=False).encode("utf-8")
        assert cache_key(spec, req) == _plain_hash(spec, req)
        names = {"system": "", "user": "User: ", "assistant": "Assistant: "}
        assert render_transcript(messages) == "\n\n".join(
            f"{names.get(r, r.title() + ': ')}{c}".strip() for r, c in messages) + "\n\nAssistant:"


def test_a_body_whose_messages_are_a_plain_list_is_encoded_whole() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "a", "name": "x"},
                                       {"content": "b", "role": "user"}]}
    assert json_bytes(body) == json.dumps(body, ensure_ascii=False,
                                          separators=(",", ":")).encode()


def test_the_splice_is_what_encodes_a_requests_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above compares bytes; this one checks the remembered parts were used."""
    monkeypatch.setattr(transport, "_ENCODED", {})
    req = Request(prompt="p", messages=(("system", "s"), ("user", "u")), seed=0)
    json_bytes({"messages": req.chat_messages()})
    cache_key(make_spec("dummy", "x"), req)
    assert sorted(len(known) for known in transport._ENCODED.values()) == [2, 2]


def test_the_remembered_parts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "_ENCODED_MAX", 5)  # emptied before a body that finds 5
    monkeypatch.setattr(transport, "_ENCODED", {})
    monkeypatch.setattr(base, "_RENDERED_MAX", 5)
    monkeypatch.setattr(base, "_RENDERED", {})
    for first in (0, 100):  # two conversations of 12 messages: at most one kept
        messages = tuple(("user", str(i)) for i in range(first, first + 12))
        body = {"messages": Request(prompt="", messages=messages, seed=0).chat_messages()}
        assert json_bytes(body) == json.dumps(body, ensure_ascii=False,
                                              separators=(",", ":")).encode()
        render_transcript(messages)
    assert [len(known) for known in transport._ENCODED.values()] == [12]
    assert len(base._RENDERED) == 12
    assert render_transcript([["user", "a"], ["assistant", "b"]]) == \
        "User: a\n\nAssistant: b\n\nAssistant:"  # lists of lists too
