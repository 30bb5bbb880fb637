"""Errors a person can act on (defined in :mod:`distbench.errors`, usable below the CLI)."""

from __future__ import annotations

from distbench.errors import UserError

__all__ = ["Interrupted", "UserError", "interrupted"]


class Interrupted(UserError):
    """Ctrl-C during a run: one line with the command that resumes it, exit status 130."""

    exit_code = 130


def interrupted(resume: list[str]) -> Interrupted:
    """The :class:`Interrupted` of a run that ``resume`` (a command line) resumes."""
    import shlex

    return Interrupted("interrupted; committed shards are kept, resume with: "
                       + shlex.join(resume))
