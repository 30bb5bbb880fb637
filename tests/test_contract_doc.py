"""``docs/contract.md`` states the family contract as the code declares it (regenerate it with
``python tools/contract_doc.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "contract_doc.py"


def _tool():
    spec = importlib.util.spec_from_file_location("contract_doc", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_contract_page_matches_the_code():
    tool = _tool()
    assert tool.PAGE.read_text(encoding="utf-8") == tool.render(), (
        "docs/contract.md is out of date: run python tools/contract_doc.py")


def test_the_page_names_every_field_of_every_group():
    import dataclasses

    from distbench.games import family as base

    page = _tool().render()
    for group in dataclasses.fields(base.Family):
        cls = getattr(base, str(group.type).split(" | ")[0])
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in page, (group.name, f.name)
