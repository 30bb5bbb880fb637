"""Errors a person can act on, shared by every layer (it imports nothing)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an unusable environment: printed as one line, exit code 2."""

    exit_code = 2
