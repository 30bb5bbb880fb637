"""The summary's numeric work on the run's Ray workers (RayCalls), and its fallback."""

from __future__ import annotations

import logging

import numpy as np

from distbench.engine.remote import RayCalls
from distbench.report.bootstrap import bootstrap_mean_ci


def _data():
    rng = np.random.default_rng(5)
    return rng.normal(2.0, 1.0, size=3000) * 4, np.full(3000, 4.0)


def test_ray_tasks_give_the_interval_computed_here(ray_session):
    sums, counts = _data()
    calls = RayCalls([], cpus=2)
    assert calls.width == 2
    assert bootstrap_mean_ci(sums, counts, offload=calls) == bootstrap_mean_ci(sums, counts)


def test_executors_are_used_in_turn_and_a_dead_one_falls_back_here(ray_session, caplog):
    ray = ray_session

    @ray.remote(num_cpus=0)
    class Worker:
        def call(self, fn, *args):
            return fn(*args)

        def pid(self):
            import os

            return os.getpid()

    alive, dead = Worker.remote(), Worker.remote()
    ray.get([alive.pid.remote(), dead.pid.remote()])
    ray.kill(dead, no_restart=True)
    sums, counts = _data()
    calls = RayCalls([alive, dead], cpus=2)
    with caplog.at_level(logging.WARNING, logger="distbench.engine.remote"):
        got = bootstrap_mean_ci(sums, counts, offload=calls)
    assert got == bootstrap_mean_ci(sums, counts)
    assert "running it here" in caplog.text
    ray.kill(alive)
