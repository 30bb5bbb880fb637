"""Shared fixtures: one real local Ray instance per test session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAY_AUTH_MODE", "disabled")


@pytest.fixture(scope="session")
def ray_session():
    """A real local Ray instance (2 CPUs), started once and shut down at the end."""
    import ray

    from distbench.engine.driver import start_ray

    start_ray(num_workers=2)
    yield ray
    ray.shutdown()
