"""The ``constant`` provider: every request is answered with the model name as text.

``distbench run --llm-type constant --llm-model "Action: 1"`` plays matrix games always
choosing action 1; a logprob request gets the same text and no probabilities (so its reading
is invalid, as it should be). Free and stateless, so it runs in the shard's own process
(``in_process = True``) instead of behind an endpoint actor.
"""

from __future__ import annotations

from collections.abc import Sequence

from distbench.llm.base import Backend, BackendUnavailable, Request, Response
from distbench.llm.registry import Provider


class ConstantBackend(Backend):
    """Answers ``spec.model`` to everything."""

    in_process = True

    @classmethod
    def preflight(cls, spec, styles: Sequence[str] = ()) -> None:
        if not spec.model:
            raise BackendUnavailable("the constant provider answers its model name: give the "
                                     'text with --llm-model, e.g. --llm-model "Action: 1"')

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text=self.spec.model, completion_tokens=len(self.spec.model.split()))
                for _ in requests]


PROVIDER = Provider(
    name="constant",
    target="distbench_beauty.constant:ConstantBackend",
    default_model="Answer: 0",
    style="chat",
    description="answers every request with the text given as --llm-model (a plugin example)",
)
"""Registered through the entry point ``distbench.providers`` (``pyproject.toml``)."""
