"""Test modules have unique basenames: the test folders are not packages, so pytest imports each
file by its name, and a second ``test_cli.py`` anywhere stops the whole collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
