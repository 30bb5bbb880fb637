"""The bundled model's thread count follows the load other processes put on the CPUs: two
llama.cpp threads waiting at a barrier for a descheduled partner were 5-10x slower than one on
this project's loaded 2-core VM (see ``distbench.llm.local._default_threads``)."""

from __future__ import annotations

import pytest

from distbench.llm import local


@pytest.mark.parametrize("cpus, load, threads", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 9.0, 1), (8, 2.2, 6), (8, 0.0, 8), (1, 0.0, 1)])
def test_threads_are_the_cpus_less_the_load_of_others(monkeypatch, cpus, load, threads):
    monkeypatch.setattr(local, "_cpu_count", lambda: cpus)
    monkeypatch.setattr(local.os, "getloadavg", lambda: (load, load, load))
    assert local._default_threads() == threads


def test_without_a_load_average_every_cpu_is_used(monkeypatch):
    def unavailable():
        raise OSError("no load average here")

    monkeypatch.setattr(local, "_cpu_count", lambda: 4)
    monkeypatch.setattr(local.os, "getloadavg", unavailable)
    assert local._default_threads() == 4
