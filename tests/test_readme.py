"""The README stays true: quick start shape, table columns, CI command."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from distbench.store.schema import SCHEMAS, table_owner

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the quick start has no bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_is_exactly_two_commands_run_then_test():
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "distbench run" in commands[0]
    assert "pytest" in commands[1] and "[test]" in commands[1]


def test_ci_runs_the_readme_test_command():
    script = (REPO / ".ci" / "run").read_text()
    pattern = re.search(r'grep -m1 -E "(.*?)" README.md', script).group(1)
    found = subprocess.run(["grep", "-m1", "-E", pattern, str(REPO / "README.md")],
                           capture_output=True, text=True).stdout.strip()
    assert found == _quick_start_commands()[1]


BUILT_IN = {"distbench", "matrix", "negotiation", "fog", "bimatrix", "repeated", "openspiel",
            "gama"}
TABLES_PAGE = REPO / "docs" / "tables.md"
PLUGIN_README = REPO / "examples" / "plugins" / "beauty" / "README.md"


@pytest.mark.parametrize("table", sorted(SCHEMAS))
def test_readme_lists_every_column_of_every_table(table):
    """distbench's docs list its own tables (docs/tables.md, where the README points); a plugin's
    README lists the plugin's."""
    readme = (TABLES_PAGE.read_text(encoding="utf-8") if table_owner(table) in BUILT_IN
              else PLUGIN_README.read_text())
    section = readme.split(f"**{table}**:", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"`([a-z_0-9]+)`", section)
    assert listed == SCHEMAS[table].names
