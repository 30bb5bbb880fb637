"""Token counts for the estimates: a text's tokens by the rule of thumb, and the length of the
shortest valid answer of each answer mode the families share (``Action: k``, ``Strategy:
[p1, ..., pk]``, a logprob reading)."""

from __future__ import annotations

__all__ = ["answer_tokens", "approx_tokens"]


def approx_tokens(text: str) -> int:
    """Tokens of ``text`` by the rule of thumb of a quarter of its characters, rounded up (the
    mock server bills so; real tokenizers land near it for English prose and numbers)."""
    return -(-len(text) // 4) if text else 0


def answer_tokens(mode: str, style: str, k: int) -> int:
    """Completion tokens of the shortest valid answer of ``mode`` over ``k`` actions, as the
    prompts ask for it: ``Action: k`` (chat) or `` k`` (completion); ``Strategy: [p1, ...,
    pk]`` with four decimals each, or the list's continuation; logprob mode reads one token."""
    if mode == "logprob":
        return 1
    if mode == "pure":
        return approx_tokens(f" {k}" if style == "completion" else f"Action: {k}")
    probs = ", ".join(["0.0000"] * k)
    return approx_tokens(f" {probs}]" if style == "completion" else f"Strategy: [{probs}]")
