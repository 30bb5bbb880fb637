"""The top-level groups that families fill (``distbench import ...``, ``distbench suite ...``):
each family's subcommands of a group (``Play.shared``), found in the registry when asked for,
so a family (a plugin too) adds one with no edit here."""

from __future__ import annotations

import click

from distbench.games.family import SHARED_GROUPS


class SharedGroup(click.Group):
    """A shared group: one subcommand per family that contributes to it, named by it."""

    def _contributed(self) -> dict[str, click.Command]:
        from distbench.cli.services import CliServices
        from distbench.games.registry import families

        out = {}
        for name, family in families().items():
            command = family.shared_command(str(self.name), CliServices())
            if command is not None:
                out[name] = command
        return out

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._contributed())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self._contributed().get(cmd_name)
        if command is not None:
            from distbench.cli.options import bound_all_numbers

            bound_all_numbers(command)
        return command


def shared_groups() -> list[click.Group]:
    """One :class:`SharedGroup` per :data:`~distbench.games.family.SHARED_GROUPS` entry."""
    return [SharedGroup(name=name, help=text) for name, text in SHARED_GROUPS.items()]
