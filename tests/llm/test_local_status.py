"""The local backend says what it is doing while no answer can come (loading, the cold first
call), through :meth:`Backend.status`, and the endpoint's meter keeps it for the progress
line; the answers asked for are counted as they arrive (``sent``)."""

from __future__ import annotations

import asyncio

import pytest

from distbench.llm import meter
from distbench.llm.base import Request
from distbench.llm.endpoint import MeteredBackend
from distbench.llm.local import INSTALL_HINT, LocalBackend, local_available
from distbench.llm.registry import make_spec

pytestmark = pytest.mark.skipif(
    not local_available(), reason=f"the bundled model is not installed: {INSTALL_HINT}")


def test_the_local_backend_names_its_slow_start_then_clears_it():
    backend = LocalBackend(make_spec("local", cache=False))
    metered = MeteredBackend(backend, "status-test")  # hands the status to the meter
    wired = backend.on_status
    assert wired is not None
    said: list[str] = []
    seen_by_meter: list[str] = []

    def spy(message: str) -> None:
        said.append(message)
        wired(message)
        seen_by_meter.append(meter.status(["status-test"]))

    backend.on_status = spy
    request = Request(prompt="Say 1.", seed=3, max_tokens=2, samples=(1, 2))
    (answer,) = asyncio.run(metered.generate([request]))
    assert answer.status == "ok" and len(answer.texts) == 2
    assert said[0] == "loading smollm2-135m-instruct ..." and said[-1] == ""
    # The first call of this process's model (another test may have warmed it already).
    assert all(s.startswith(("loading ", "first call: evaluating the prompt")) for s in said[:-1])
    assert seen_by_meter == said and meter.status(["status-test"]) == ""
    counts = meter.snapshot(["status-test"])
    assert counts["sent"] == 2 and counts["calls"] == 2
