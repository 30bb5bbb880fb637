"""The gama runner asks the backend class whether it answers call by call (a declared
capability), not whether it is the HTTP backend."""

from distbench.games.gama import runner
from distbench.llm import registry
from distbench.llm.base import Backend, BackendSpec
from distbench.llm.dummy import DummyBackend
from distbench.llm.http import OpenAICompatibleBackend


class _CallByCall(DummyBackend):
    call_by_call = True


def test_capability_defaults():
    assert Backend.call_by_call is False
    assert DummyBackend.call_by_call is False
    assert OpenAICompatibleBackend.call_by_call is True


def test_runner_reads_the_capability(monkeypatch):
    spec = BackendSpec(provider="dummy", model="m")
    assert runner._answers_call_by_call(spec) is False
    monkeypatch.setattr(registry, "backend_class", lambda provider: _CallByCall)
    assert runner._answers_call_by_call(spec) is True


def test_unknown_provider_is_batched():
    assert runner._answers_call_by_call(BackendSpec(provider="no-such-provider", model="m")) is False
