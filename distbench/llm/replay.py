"""The ``replay`` backend: answers from a recorded run, so a game engine's play can be checked
against a published record (``--llm-type replay:PATH``).

PATH is a JSON file (a GAMA-Bench record as its ``raw_results`` publish it, or any JSON). A
request names the recorded value it stands for by a JSON path at the end of its ``task`` kind,
after ``@``: ``gama.guessing@round_records.2.responses.4:100`` is the value at
``data["round_records"][2]["responses"][4]`` (list indices as numbers). The answer is that value
as the JSON object ``{"value": <value>}``, which the family that built the path parses. A request
without a path, or a path the record does not hold, is a failed call with the reason (a row,
never an invented answer). The backend knows no game: the family chooses the paths.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from distbench.llm.base import Backend, BackendSpec, BackendUnavailable, Request, Response


def replay_path(task: str) -> list[str] | None:
    """The JSON path a request's ``task`` names (``kind@a.b.3:size``), or None."""
    kind = task.partition(":")[0]
    if "@" not in kind:
        return None
    return [p for p in kind.split("@", 1)[1].split(".") if p]


def lookup(data: Any, path: Sequence[str]) -> Any:
    """The value at ``path`` (KeyError, IndexError or TypeError when the data has none)."""
    for part in path:
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


class ReplayBackend(Backend):
    """Recorded answers; see the module docstring."""

    in_process = True

    def __init__(self, spec: BackendSpec) -> None:
        super().__init__(spec)
        self._data: Any = None

    @classmethod
    def resolve(cls, spec: BackendSpec) -> BackendSpec:
        """The record's path made absolute (workers run elsewhere); BackendUnavailable (one
        line) when it is not a readable JSON file."""
        path = Path(spec.model).expanduser().resolve()
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"--llm-type replay:{spec.model}: not a readable JSON "
                                     f"record ({type(exc).__name__})") from None
        return BackendSpec(spec.provider, str(path), spec.style, spec.options)

    def data(self) -> Any:
        """The record (read once)."""
        if self._data is None:
            self._data = json.loads(Path(self.spec.model).read_text(encoding="utf-8"))
        return self._data

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self._answer(r) for r in requests]

    def _answer(self, request: Request) -> Response:
        path = replay_path(request.task)
        if path is None:
            return Response(text=None, status="failed", error="the request names no recorded "
                                                               "answer")
        try:
            value = lookup(self.data(), path)
        except (KeyError, IndexError, TypeError, ValueError):
            return Response(text=None, status="failed",
                            error=f"the record has no answer at {'.'.join(path)}")
        return Response(text=json.dumps({"value": value}))
