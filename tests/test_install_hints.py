"""Every install hint is a command that works from a clone: distbench is not on PyPI, so
``pip install 'distbench[report]'`` cannot work; the hint names this Python's pip and the clone."""

from __future__ import annotations

import configparser
import os
import re
import sys
from pathlib import Path

import pytest

from distbench.errors import install_hint

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("extra", ["report", "local"])
def test_the_hint_installs_the_extra_from_the_clone_into_this_python(extra, tmp_path,
                                                                     monkeypatch):
    for cwd, target in ((ROOT, "."), (tmp_path, os.path.relpath(ROOT, tmp_path))):
        monkeypatch.chdir(cwd)
        hint = install_hint(extra)
        found = re.fullmatch(r"(\S+) -m pip install -e '(.+)\[(\w+)\]'", hint)
        assert found, hint
        python, where, named = found.groups()
        assert Path(python).resolve() == Path(sys.executable).resolve()
        assert where in (target, str(ROOT)) and named == extra
        assert (cwd / where).resolve() == ROOT
    extras = configparser.ConfigParser()
    extras.read(ROOT / "setup.cfg")
    assert extra in extras["options.extras_require"]


def test_no_hint_in_the_code_names_distbench_on_pypi():
    wrong = re.compile(r"pip install\s+['\"]?distbench\b")
    found = [f"{path.relative_to(ROOT)}:{n}"
             for folder in ("distbench", "benchmarks", "tools", "examples")
             for path in sorted((ROOT / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if wrong.search(line)]
    assert not found, found


def test_a_missing_report_extra_is_one_line_with_the_command(tmp_path):
    """``distbench report`` without matplotlib: one line naming the command."""
    import subprocess

    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    made = subprocess.run([sys.executable, "-m", "distbench.cli", "run", "--llm-type", "dummy",
                           "--num-games", "2", "--num-trials", "2", "--output-dir",
                           str(tmp_path), "--run-id", "r"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "matplotlib.py").write_text("raise ImportError('No module named matplotlib')\n")
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "distbench.cli", "report", str(tmp_path / "r")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    error = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(error) == 1 and "Traceback" not in out.stderr, out.stderr
    assert error[0].endswith("-m pip install -e '.[report]'"), error
