"""Shared fixtures: one real local Ray instance per test session."""

from __future__ import annotations

import atexit
import os
import shutil
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


# The suite runs beside anything (issue 37), and every session checks it: Ray's temporary folder
# is the session's own, not /tmp/ray (unless the caller names one), and an OpenAI-compatible
# server (the mock) listens on 127.0.0.1:8080 while the session lasts, as the README's
# `distbench serve local --port 8080 &` would, unless something listens there already (another
# session, or under pytest-xdist the first worker's). A test that needs no server must not
# reach it.
# Each process its own (under pytest-xdist each worker, not the controller's inherited one), so
# nothing that stops the Ray processes of one folder reaches another worker's Ray.
if os.environ.get("RAY_TMPDIR", "") in ("", os.environ.get("DISTBENCH_TEST_RAY_TMPDIR")):
    os.environ["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="dray-")  # short: Ray's socket paths
    os.environ["DISTBENCH_TEST_RAY_TMPDIR"] = os.environ["RAY_TMPDIR"]
    atexit.register(shutil.rmtree, os.environ["RAY_TMPDIR"], ignore_errors=True)


_SERVER_8080: list = []  # the server this process holds on 127.0.0.1:8080, if it holds one


def _hold_8080() -> None:
    from distbench.mockserver import ServerConfig, start_server

    if _SERVER_8080:
        return
    try:
        _SERVER_8080.append(start_server(ServerConfig(port=8080)))
    except OSError:  # taken already: the suite runs beside that one
        pass


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under pytest-xdist the controller holds the server: it outlives every worker, so a worker
    # whose tests run last still finds it (a worker's server went away when that worker ended).
    if "PYTEST_XDIST_WORKER" not in os.environ:
        _hold_8080()


def pytest_sessionfinish(session: pytest.Session) -> None:
    while _SERVER_8080:
        _SERVER_8080.pop().stop()


@pytest.fixture(scope="session", autouse=True)
def a_server_on_8080():
    _hold_8080()  # a worker started without the controller's server (none, or it failed to bind)
    yield _SERVER_8080[0] if _SERVER_8080 else None
