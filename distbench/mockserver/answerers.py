"""Who answers the mock server's calls: the :class:`Answerer` protocol and its two answerers.

:class:`MockAnswerer` is a seeded policy that reads matrix-game prompts (the wording of
``distbench.games.matrix.prompts``) and answers exactly what the ``dummy`` backend answers;
:class:`LocalAnswerer` forwards to the bundled llama.cpp model
(:class:`distbench.llm.local.LocalModel`), for ``distbench serve local``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from typing import Any, Protocol

import numpy as np

from distbench.games.matrix.prompts import MIXED_CUE, PURE_CUE
from distbench.llm.base import BackendSpec, Request
from distbench.llm.dummy import DummyBackend, splitmix64, uniforms
from distbench.mockserver.skill import (
    fog_answer,
    negotiation_answer,
    safest,
    skilled_answer,
)
from distbench.mockserver.wire import (
    BadRequest,
    approx_tokens,
    chat_logprob,
    chat_response,
    completion_response,
)

__all__ = ["Answerer", "LocalAnswerer", "MockAnswerer", "detect_task", "sample_seed"]

_LOGPROB_STREAM = 0x10C9_0B5  # keeps the logprob draw apart from the answer's draw
_SKILL_STREAM = 0x5C1_11ED  # keeps the skill draw (equilibrium or random) apart from both
_POLICY_STREAM = 0x9011_C7  # the draw among an equilibrium's actions, apart from the others
_TABLE_ROW = re.compile(r"^Action (\d+)((?:[ ]+-?[0-9][0-9.e+-]*)+)$", re.MULTILINE)
_UNRECOGNISED_TEXT = "I can only answer matrix game questions."
# The answer lines of the gama family's requests (distbench.games.gama.prompts)
_GAMA_RANGE = re.compile(r"Answer: <a whole number from (\d+) to (\d+)>")
_GAMA_WORDS = re.compile(r"Answer: ([a-z]+), or Answer: ([a-z]+)")
_GAMA_PLAN = re.compile(r"Answer: <(\d+) whole numbers separated by commas, adding up to (\d+)>")
_GAMA_SHOOT = "Answer: <the number of the player you shoot at>"
_GAMA_LIVING = re.compile(r"Player (\d+) \(\d+%\)")


_MASK = 0xFFFF_FFFF_FFFF_FFFF
_GOLDEN, _M1, _M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def seed_uniforms(seed: int, count: int) -> list[float]:
    """The first ``count`` of :func:`distbench.llm.dummy.uniforms` for one ``seed``, the same
    floats computed on Python integers (numpy's per-call set-up costs more than the draws: a
    gama answer needs one to nine)."""
    out = []
    for k in range(1, count + 1):
        z = (seed + k * _M1 + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * _M1) & _MASK
        z = ((z ^ (z >> 27)) * _M2) & _MASK
        out.append((float((z ^ (z >> 31)) >> 11) + 0.5) / float(1 << 53))
    return out


def gama_answer(prompt: str, seed: int) -> str | None:
    """A valid answer, uniformly random from ``seed``, to a request of the gama family (its
    final ``Answer:`` line says what is asked), or None for another prompt."""
    seed &= _MASK
    u = seed_uniforms(seed, 1)
    if (m := _GAMA_PLAN.search(prompt)) is not None:
        n, gold = int(m.group(1)), int(m.group(2))
        cuts = sorted(int(x * (gold + 1)) for x in seed_uniforms(seed, len(range(16)[: n - 1])))
        edges = [0, *cuts, gold]
        return "Answer: " + ", ".join(str(b - a) for a, b in zip(edges[:-1], edges[1:], strict=True))
    if (m := _GAMA_RANGE.search(prompt)) is not None:
        low, high = int(m.group(1)), int(m.group(2))
        return f"Answer: {low + min(int(u[0] * (high - low + 1)), high - low)}"
    if _GAMA_SHOOT in prompt:
        options = ["0", *_GAMA_LIVING.findall(prompt.split("besides you:", 1)[-1])]
        return f"Answer: {options[min(int(u[0] * len(options)), len(options) - 1)]}"
    if (m := _GAMA_WORDS.search(prompt)) is not None:
        return f"Answer: {m.group(1) if u[0] < 0.5 else m.group(2)}"
    return None


class Answerer(Protocol):
    """Produces OpenAI-shaped response dicts; must be safe to call from several threads."""

    model_name: str

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: bool,
        top_logprobs: int | None,
        n: int = 1,
    ) -> dict[str, Any]: ...

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: int | None,
        stop: list[str] | None,
        n: int = 1,
    ) -> dict[str, Any]: ...


def sample_seed(seed: int, index: int) -> int:
    """The seed of sample ``index`` of a request for several samples (``n``) with ``seed``:
    ``seed`` itself for sample 0 (so ``n = 1`` answers as before), a SplitMix64 stream of
    (seed, index) for the others. Both servers here use it."""
    if index == 0:
        return seed
    mixed = splitmix64(np.array([(seed ^ (index * 0x9E3779B97F4A7C15)) & 0xFFFF_FFFF_FFFF_FFFF],
                                dtype=np.uint64))
    return int(mixed[0])


# --- the mock answerer ------------------------------------------------------------------

_ACTION_COUNT = re.compile(r"\byour (\d+) actions?\b")
_PURE_GOAL = "Choose one of your"


def detect_task(prompt: str) -> tuple[str, int] | None:
    """The matrix task a prompt asks for, from the wording of ``games.matrix.prompts``.

    Returns:
        ``("pure", m)`` or ``("mixed", m)`` with m the number of the player's actions, or
        None when the prompt is not a matrix prompt.
    """
    count = _ACTION_COUNT.search(prompt)
    if count is None:
        return None
    m = int(count.group(1))
    if m < 1:
        return None
    if MIXED_CUE in prompt:
        return "mixed", m
    if PURE_CUE in prompt or _PURE_GOAL in prompt:  # logprob mode's cue may differ
        return "pure", m
    return None


@functools.lru_cache(maxsize=4096)
def equilibrium(prompt: str) -> tuple[np.ndarray, int] | None:
    """The row player's equilibrium strategy (m,) of the game a matrix prompt shows (its
    payoff table, ``Action i`` rows), solved by the project's kernel, and its safest pure
    action (0-based: the best worst-case payoff, which has the least exploitability of the
    pure actions; ties to the more likely in equilibrium); None when the prompt holds no
    table."""
    rows = [[float(v) for v in found.group(2).split()] for found in _TABLE_ROW.finditer(prompt)]
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return safest(np.array(rows))


def _plays_equilibrium(seed: int, skill: float) -> bool:
    """Whether the answer to ``seed`` is the equilibrium one: a draw below ``skill`` (its own
    stream of the seed)."""
    if skill <= 0:
        return False
    draw = uniforms(splitmix64(np.array([seed ^ _SKILL_STREAM], dtype=np.uint64)), 1)[0, 0]
    return bool(draw < skill)


def _stable_seed(seed: int, prompt: str) -> int:
    digest = hashlib.blake2b(f"{seed}\0{prompt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_TOKEN = re.compile(r"\s*[A-Za-z]+|\s*\d|\s*[^\sA-Za-z\d]|\s+")


def _split_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text) or [text]


class MockAnswerer:
    """Answers matrix prompts like the ``dummy`` backend, deterministically.

    The task comes from the prompt (:func:`detect_task`); the answer is the dummy backend's
    for ``Request(task=f"matrix.{mode}:{m}", seed=s)`` with ``s`` the call's ``seed`` field,
    or a stable hash of (server seed, prompt) when the call gives none. Completion calls get
    the continuation form, chat calls the chat form. Other prompts get a fixed harmless text.

    Log-probabilities (when asked): the first token's top alternatives are the action labels
    (``" 1"`` .. ``" m"`` for completions, ``"1"`` .. ``"m"`` for chat) carrying 97 % of the
    mass, split by a flat-Dirichlet draw from the call's seed, plus ``" The"`` (2 %) and
    ``"\\n"`` (1 %); later tokens get logprob 0.

    A request for ``n`` choices gets ``n``: choice ``i`` is the answer to seed
    :func:`sample_seed` (seed, i), so choice 0 is the one-choice answer; the prompt is billed
    once.

    Skill: a model named ``...-nash<P>`` (``mock-nash90``; ``skill`` = P / 100, see
    ``wire.skill_of``) answers the game's equilibrium in a share P of its answers, drawn per
    sample from its seed: in mixed mode the row player's equilibrium strategy (4 decimals), in
    pure mode its safest action (the best worst case: the least exploitable pure action, the
    saddle point when there is one); the other answers are the dummy's. Its logprob labels
    carry that share of their mass on the equilibrium strategy. The skilled answers to the
    bimatrix, repeated, OpenSpiel, negotiation and fog prompts are
    :mod:`distbench.mockserver.skill`'s. So
    models of different skill differ as real models do, and in a known order. Any other name
    answers as the dummy.

    Args:
        seed: Server seed, used for calls without a seed.
    """

    model_name = "mock"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._chat = DummyBackend(BackendSpec("dummy", "random", "chat"))
        self._completion = DummyBackend(BackendSpec("dummy", "random", "completion"))

    def _seed(self, seed: int | None, prompt: str) -> int:
        if seed is None:
            return _stable_seed(self.seed, prompt)
        return seed & 0xFFFF_FFFF_FFFF_FFFF

    def answer_text(self, prompt: str, seed: int, *, completion: bool, skill: float = 0.0,
                    conversation: str | None = None) -> str:
        """The answer to ``prompt`` for a resolved ``seed`` (``skill``: see the class);
        ``conversation``: every user message of a chat (a negotiation's introduction comes
        first), else the prompt."""
        task = detect_task(prompt)
        if task is None:
            if _plays_equilibrium(seed, skill):
                skilled = negotiation_answer(conversation or prompt) \
                    or fog_answer(prompt, completion)
                if skilled is not None:
                    return skilled
            return gama_answer(prompt, seed) or _UNRECOGNISED_TEXT
        mode, m = task
        if _plays_equilibrium(seed, skill):
            solved = equilibrium(prompt)
            if solved is not None and len(solved[0]) == m:
                answer: tuple[str, Any] | None = ("pure", solved[1] + 1) if mode == "pure" \
                    else ("mixed", solved[0])
            else:  # the other families' prompts (distbench.mockserver.skill)
                draw = uniforms(splitmix64(np.array([seed ^ _POLICY_STREAM], dtype=np.uint64)),
                                1)[0, 0]
                answer = skilled_answer(prompt, mode, m, float(draw))
            if answer is not None and answer[0] == "pure":
                return f" {answer[1]}" if completion else f"Action: {answer[1]}"
            if answer is not None:
                values = ", ".join(f"{p:.4f}" for p in answer[1])
                return f" {values}]" if completion else f"Strategy: [{values}]"
        backend = self._completion if completion else self._chat
        request = Request(prompt=prompt, seed=seed, task=f"matrix.{mode}:{m}")
        return backend.answer([request])[0].text or ""

    def first_token_distribution(
        self, prompt: str, seed: int, *, completion: bool, skill: float = 0.0
    ) -> list[tuple[str, float]]:
        """(token, logprob) of the first token's alternatives, most likely first."""
        task = detect_task(prompt)
        others = [(" The", math.log(0.02)), ("\n", math.log(0.01))]
        if task is None:
            return [("I", math.log(0.97)), *others]
        m = task[1]
        draw_seed = splitmix64(np.array([seed ^ _LOGPROB_STREAM], dtype=np.uint64))
        weights = -np.log(uniforms(draw_seed, m)[0])
        mix = weights / weights.sum()
        solved = equilibrium(prompt) if skill > 0 else None
        if solved is not None and len(solved[0]) == m:
            mix = (1 - skill) * mix + skill * solved[0]
        probs = 0.97 * np.maximum(mix, 1e-9)
        prefix = " " if completion else ""
        labels = [(f"{prefix}{k + 1}", math.log(float(p))) for k, p in enumerate(probs)]
        return sorted(labels + others, key=lambda pair: -pair[1])

    def _logprob_entries(
        self, prompt: str, seed: int, text: str, *, completion: bool, top: int,
        skill: float = 0.0,
    ) -> list[tuple[str, float, list[tuple[str, float]]]]:
        """Per generated token: (token, logprob, top alternatives)."""
        first = self.first_token_distribution(prompt, seed, completion=completion, skill=skill)
        known = dict(first)
        entries = []
        for i, token in enumerate(_split_tokens(text)):
            if i == 0:
                entries.append((token, known.get(token, math.log(0.001)), first[:top]))
            else:
                entries.append((token, 0.0, [(token, 0.0)][:top]))
        return entries

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int = 256,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        n: int = 1,
        skill: float = 0.0,
    ) -> dict[str, Any]:
        users = _user_texts(messages)
        prompt = users[-1] if users else ""
        # a negotiation's conversation is read only by a skilled answer (answer_text)
        conversation = "\n\n".join(users) if skill > 0 else None
        base = self._seed(seed, prompt)
        texts, lps = [], []
        for i in range(n):
            resolved = sample_seed(base, i)
            text = self.answer_text(prompt, resolved, completion=False, skill=skill,
                                    conversation=conversation)
            lp = None
            if logprobs:
                entries = self._logprob_entries(
                    prompt, resolved, text, completion=False, top=top_logprobs or 0,
                    skill=skill,
                )
                lp = {"content": [chat_logprob(*entry) for entry in entries], "refusal": None}
            texts.append(text)
            lps.append(lp)
        prompt_text = "\n".join([str(msg.get("content", "")) for msg in messages])
        return chat_response(self.model_name, texts, approx_tokens(prompt_text), lps)

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int = 16,
        temperature: float = 1.0,
        seed: int | None = None,
        logprobs: int | None = None,
        stop: list[str] | None = None,
        n: int = 1,
        skill: float = 0.0,
    ) -> dict[str, Any]:
        base = self._seed(seed, prompt)
        texts, lps = [], []
        for i in range(n):
            resolved = sample_seed(base, i)
            text = self.answer_text(prompt, resolved, completion=True, skill=skill)
            for marker in stop or []:
                if marker and marker in text:
                    text = text[: text.index(marker)]
            lp = None
            if logprobs is not None:
                entries = self._logprob_entries(prompt, resolved, text, completion=True,
                                                top=logprobs, skill=skill)
                offsets, position = [], len(prompt)
                for token, _, _ in entries:
                    offsets.append(position)
                    position += len(token)
                lp = {
                    "tokens": [token for token, _, _ in entries],
                    "text_offset": offsets,
                    "token_logprobs": [value for _, value, _ in entries],
                    "top_logprobs": [dict(alts) for _, _, alts in entries],
                }
            texts.append(text)
            lps.append(lp)
        return completion_response(self.model_name, texts, approx_tokens(prompt), lps)


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text of every user message, in order."""
    texts = []
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):  # content parts
                content = "".join(
                    part.get("text", "") for part in content if isinstance(part, dict)
                )
            texts.append(str(content))
    return texts


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    texts = _user_texts(messages)
    return texts[-1] if texts else ""


# --- the local model ----------------------------------------------------------------------


class LocalAnswerer:
    """Forwards calls to a :class:`distbench.llm.local.LocalModel` (which serialises them).

    Calls without a seed use a stable hash of (``seed``, prompt), as the mock does.
    """

    def __init__(self, model: Any, seed: int = 0) -> None:
        self.model = model
        self.model_name = model.name
        self.seed = seed

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: bool,
        top_logprobs: int | None,
        n: int = 1,
        skill: float | None = None,  # the mock's; a real model plays as it plays
    ) -> dict[str, Any]:
        if seed is None:
            seed = _stable_seed(self.seed, _last_user_text(messages))
        if n > 1 and not logprobs:
            return self.model.chat_many(messages, [sample_seed(seed, i) for i in range(n)],
                                        max_tokens=max_tokens, temperature=temperature)
        if n > 1:
            raise BadRequest("'n' > 1 with logprobs is not supported by the local model")
        return self.model.chat(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
        )

    def complete(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        logprobs: int | None,
        stop: list[str] | None,
        n: int = 1,
        skill: float | None = None,  # the mock's; a real model plays as it plays
    ) -> dict[str, Any]:
        if seed is None:
            seed = _stable_seed(self.seed, prompt)
        if n > 1 and logprobs is None:
            return self.model.complete_many(prompt, [sample_seed(seed, i) for i in range(n)],
                                            max_tokens=max_tokens, temperature=temperature,
                                            stop=stop)
        if n > 1:
            raise BadRequest("'n' > 1 with logprobs is not supported by the local model")
        return self.model.complete(
            prompt,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            logprobs=logprobs,
            stop=stop,
        )

