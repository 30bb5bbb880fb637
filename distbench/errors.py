"""Errors a person can act on, shared by every layer (it imports nothing)."""

from __future__ import annotations


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """`` Did you mean 'x'?`` for the closest of ``known`` to ``name``, or ""."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


class UserError(Exception):
    """Bad input or an unusable environment: printed as one line, exit code 2."""

    exit_code = 2
