"""The CLI's shared groups (``import``, ``suite``) are built from the registry: each family's
``Play.shared`` subcommands, named by the family (issue 34: no family named in ``cli/``)."""

from __future__ import annotations

import pytest

from distbench.cli.shared import shared_groups
from distbench.games.family import SHARED_GROUPS, Play
from distbench.games.registry import families, load_families


def test_each_shared_group_lists_the_families_that_contribute_to_it():
    load_families()
    groups = {group.name: group for group in shared_groups()}
    assert set(groups) == set(SHARED_GROUPS)
    for name, group in groups.items():
        expected = sorted(f for f, family in families().items() if name in family.play.shared)
        assert group.list_commands(None) == expected  # type: ignore[arg-type]
        assert expected, f"no family fills {name}"


def test_a_shared_group_the_cli_does_not_have_is_refused():
    with pytest.raises(ValueError, match="no shared group 'bogus'"):
        Play(runner="m:f", summarize="m:f", command="m:f", shared={"bogus": "m:f"})
