"""The worker side of a run: what executes one shard, wherever it runs (a Ray task, a warm
executor, or the driver itself with ``--no-parallel``). The driver and the executors both use
it; it uses neither.
"""

from __future__ import annotations

import platform
import sys
from functools import lru_cache
from typing import Any

from distbench import __version__
from distbench.games.base import ShardResult, shard_specs
from distbench.games.registry import get_family
from distbench.llm.base import BackendSpec
from distbench.store.harness import harness_parts

__all__ = ["execute_shard", "in_process", "shard_backend", "shard_specs", "shard_task",
           "versions"]


def in_process(spec: BackendSpec) -> bool:
    """Whether ``spec`` is answered in the shard's own process (its backend class says so
    with ``Backend.in_process``: the dummy, a plugin's fixed answers; scripted players too)
    rather than through an endpoint actor."""
    from distbench.llm.registry import backend_class

    if spec.provider.startswith("scripted"):
        return True
    return backend_class(spec.provider).in_process


def execute_shard(shard: Any, backends: dict[BackendSpec, Any] | None = None):
    """Plays one shard in this process (the body of the Ray task) and returns its result with
    every table already encoded as Parquet bytes.

    Dispatches on ``shard.family`` through the family registry to the family's
    ``run_shard(shard, backends)``, where ``backends`` maps each of :func:`shard_specs` to its
    backend: the dummy or a scripted player in-process, a real model through its endpoint
    actor (under Ray) or directly (without Ray).
    """
    from distbench.store.writer import encode_table

    family = get_family(shard.family)
    if backends is None:
        backends = {spec: shard_backend(spec, in_ray=True) for spec in shard_specs(shard)}
    result = family.run_shard(shard, backends)
    harness = harness_parts(family)["hash"]
    # Encode the Parquet here, in parallel across workers: the driver then only writes bytes.
    tables = {name: (stem, encode_table(name, table, harness))
              for name, (stem, table) in result.tables.items()}
    return ShardResult(shard_id=result.shard_id, tables=tables, stats=result.stats)


def shard_backend(spec: BackendSpec, *, in_ray: bool):
    """The backend a shard uses: the dummy in-process; any real model through its endpoint
    actor under Ray, or directly (with the cache) without Ray."""
    from distbench.llm.endpoint import ActorBackend, build_direct
    from distbench.llm.registry import build_backend

    if in_process(spec):
        return build_backend(spec)
    return ActorBackend(spec) if in_ray else build_direct(spec)


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of distbench, Python and the libraries that decide results, and the machine
    (``machine``: system, architecture, CPUs), (from the module
    when it is already imported, else from the installed metadata: importing numba and scipy
    only to read their versions would cost the driver a second)."""
    import os
    from importlib.metadata import PackageNotFoundError, version

    out = {"distbench": __version__, "python": platform.python_version()}
    for name in ("numpy", "numba", "scipy", "pyarrow", "duckdb", "ray"):
        module = sys.modules.get(name)
        try:
            out[name] = getattr(module, "__version__", None) or version(name)
        except PackageNotFoundError:  # pragma: no cover - all are dependencies
            pass
    out["machine"] = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
                      f"{platform.processor() or 'unknown processor'}")
    return out


def shard_task():
    """:func:`execute_shard` as a Ray task: one CPU, retried when its worker dies."""
    import ray

    return ray.remote(execute_shard).options(num_cpus=1, max_retries=3)
