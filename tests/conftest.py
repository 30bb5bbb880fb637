"""Shared fixtures: one real local Ray instance per test session."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("RAY_AUTH_MODE", "disabled")
# The console's width is the caller's terminal's: pytest-xdist's workers export COLUMNS=80, a
# terminal may export its own. The commands the tests run see no terminal (their default width),
# unless a test sets COLUMNS itself.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# Compiled kernels stay in the user's cache (compiling them again costs seconds), but the
# response cache of this test session is its own, so no test gets another run's answers.
# Both are set before Ray starts, so its workers inherit them.
os.environ.setdefault(
    "NUMBA_CACHE_DIR",
    os.path.join(os.path.expanduser("~"), ".cache", "distbench", "numba"),
)
os.environ["DISTBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="distbench-test-cache-")

from distbench.games.registry import load_families  # noqa: E402

load_families()  # every family's tables registered with the store, as the CLI does


@pytest.fixture(scope="session")
def ray_session():
    """A real local Ray instance (2 CPUs), started once and shut down at the end."""
    import ray

    from distbench.engine.driver import start_ray

    start_ray(num_workers=2)
    yield ray
    ray.shutdown()
