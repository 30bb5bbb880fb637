"""distbench: how well language models play strategic games, at any scale."""

import os as _os
from pathlib import Path as _Path

__version__ = "0.1.0"


def cache_dir() -> _Path:
    """The per-user cache folder (``$DISTBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/distbench``)."""
    explicit = _os.environ.get("DISTBENCH_CACHE_DIR")
    if explicit:
        return _Path(explicit)
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    return _Path(base) / "distbench"


# numba's cache=True writes beside the sources by default; keep compiled kernels in the user
# cache instead (and Ray workers inherit the variable from the driver's runtime env).
_os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))
