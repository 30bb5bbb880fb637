"""The suite runs beside anything (issue 37): every session holds a server on 127.0.0.1:8080
(unless one listens there already) and keeps Ray's temporary folder out of /tmp/ray."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def test_the_session_runs_beside_a_server_on_8080_with_its_own_ray_folder(a_server_on_8080):
    with socket.create_connection(("127.0.0.1", 8080), timeout=5):
        pass  # something answers there: the session's mock, or a server that was there before
    ray_tmp = Path(os.environ["RAY_TMPDIR"])
    assert ray_tmp.is_dir() and ray_tmp != Path("/tmp/ray")
