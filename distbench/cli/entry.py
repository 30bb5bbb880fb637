"""The console script's entry point: imports the command line inside the one-line handling of
Ctrl-C, so an interrupt while the modules load (a second or two on a slow machine) prints
``error: interrupted`` and exits 130 as an interrupt anywhere else does, not a traceback."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """``distbench``: :func:`distbench.cli.main.main`, loaded here."""
    try:
        from distbench.cli.main import main as run
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    run(argv)
