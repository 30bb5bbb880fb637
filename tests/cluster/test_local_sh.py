"""cluster/local.sh stop: it ends its cluster's nodes promptly (the nodes before the head's GCS,
which a raylet otherwise waits on for seconds) and leaves no process naming its folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from ports import free_port

REPO = Path(__file__).resolve().parents[2]
LOCAL_SH = REPO / "cluster" / "local.sh"
RAY = Path(sys.executable).parent / "ray"

pytestmark = pytest.mark.skipif(not RAY.exists(), reason="the ray CLI is not installed")


def test_stop_ends_the_head_and_a_worker_within_seconds():
    tmp = tempfile.mkdtemp(prefix="dcs-")  # the cluster's own folder: stop ends what names it
    env = {**os.environ, "RAY": str(RAY), "RAY_PORT": str(free_port()), "RAY_TMPDIR": tmp}
    try:
        subprocess.run(["bash", str(LOCAL_SH), "start", "1"], env=env, check=True, timeout=180,
                       capture_output=True)
        started = time.monotonic()
        subprocess.run(["bash", str(LOCAL_SH), "stop"], env=env, check=True, timeout=60,
                       capture_output=True)
        took = time.monotonic() - started
        left = subprocess.run(["pgrep", "-f", "--", f"{tmp}/"], capture_output=True, text=True)
        assert left.stdout == "", f"processes of the cluster left: {left.stdout}"
        assert took < 6, f"stop took {took:.1f} s (its TERM-then-wait gives up after 10 s)"
    finally:
        subprocess.run(["bash", str(LOCAL_SH), "stop"], env=env, timeout=60, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
