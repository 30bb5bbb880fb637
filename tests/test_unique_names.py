"""Test modules have unique basenames and import the shared helpers by module name: the test
folders are not packages, so pytest imports each
file by its name, and a second ``test_cli.py`` anywhere stops the whole collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []


def test_no_test_imports_the_tests_folder_as_a_package():
    """``from tests.x import ...`` (or a hook target naming a test module by its package path)
    works only when the repository's folder is on the path (CI runs pytest without it): the
    shared helpers are imported by their module name, a test module names itself by
    ``__name__``."""
    name = "tests"  # the patterns are built, so this file is not a hit itself
    package = (f"from {name}.", f"import {name}")
    target = ('"' + name + ".", "'" + name + ".")  # a hook target by package path
    bad = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
           if any(line.lstrip().startswith(package) or any(t in line for t in target)
                  for line in p.read_text(encoding="utf-8").splitlines())]
    assert bad == []
