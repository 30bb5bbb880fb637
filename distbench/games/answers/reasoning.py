"""The reasoning factor (``--reasoning direct|cot``), as every family reads it.

A model's ``reasoning`` option (:data:`distbench.llm.base.REASONING_MODES`) says how it is asked
to answer: ``direct`` as the family always asked (no option: runs made before the factor), or
``cot``: the prompt asks for the reasoning first and the answer as the **final line**, with its
own completion budget (the ``reasoning_tokens`` option, default
:data:`~distbench.llm.base.DEFAULT_REASONING_TOKENS`) and no stop sequence that could cut the
reasoning short. Only the final line is parsed; the text before it is kept as the reasoning
(each family's ``reasoning_text`` column), the whole answer as the raw text.
"""

from __future__ import annotations

from typing import Any

from distbench.llm.base import DEFAULT_REASONING_TOKENS

__all__ = ["COT_INSTRUCTION", "reasoning_budget", "reasoning_mode", "split_final"]

COT_INSTRUCTION = ("Think it through step by step first, writing your reasoning. Then give "
                   "your answer alone on the final line, with nothing after it.")
"""What a ``cot`` prompt adds before its answer format (the same words in every family)."""

COT_COMPLETION_CUE = "Reasoning:"
"""What a ``cot`` completion-style prompt ends with (the model continues with its reasoning)."""


def reasoning_mode(spec: Any) -> str:
    """``"direct"`` or ``"cot"``: the model's ``reasoning`` option (``direct`` when absent,
    and for players without a model)."""
    option = getattr(spec, "option", None)
    return str(option("reasoning", None) or "direct") if option else "direct"


def reasoning_budget(spec: Any) -> int:
    """The completion budget of a ``cot`` answer (the ``reasoning_tokens`` option)."""
    return int(spec.option("reasoning_tokens", None) or DEFAULT_REASONING_TOKENS)


def split_final(text: str) -> tuple[str, str]:
    """(reasoning, final line) of a ``cot`` answer: the last line holding anything but white
    space, and everything before it (stripped). A one-line answer has no reasoning ("")."""
    lines = text.rstrip().splitlines()
    if not lines:
        return "", ""
    return "\n".join(lines[:-1]).strip(), lines[-1].strip()
