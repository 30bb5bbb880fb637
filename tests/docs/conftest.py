"""The fixtures of the docs page tests (tests/docs_pages.py): a mock server and the shims'
bin folder, one each per test file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def mock_url():
    from distbench.mockserver import ServerConfig, start_server

    with start_server(ServerConfig()) as server:
        yield server.url


@pytest.fixture(scope="module")
def shims(tmp_path_factory) -> Path:
    """A bin folder whose ``distbench`` and ``python`` are this interpreter, and ``ray`` its
    environment's (the cluster script calls it, as with the environment's ``bin`` on PATH)."""
    bin_dir = tmp_path_factory.mktemp("docs-bin")
    ray = Path(sys.executable).parent / "ray"
    for name, command in (("distbench", f'"{sys.executable}" -m distbench'),
                          ("python", f'"{sys.executable}"'), ("ray", f'"{ray}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        shim.chmod(0o755)
    return bin_dir
