"""Errors a person can act on (defined in :mod:`distbench.errors`, usable below the CLI)."""

from __future__ import annotations

from distbench.errors import UserError

__all__ = ["UserError"]
