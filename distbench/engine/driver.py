"""The driver: runs shards as Ray tasks and is the only writer of the run directory.

``run_matrix`` plans the shards, skips the ones already committed (so re-running the same
``--run-id`` resumes), submits the rest as Ray tasks with a bounded number in flight, writes
each returned shard (Parquet via temp file + rename, then the commit marker) as it arrives,
and finally writes ``summary.json`` and completes ``manifest.json``.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from distbench import __version__
from distbench.engine.plan import MatrixRunConfig, Shard, plan_matrix
from distbench.llm.base import BackendSpec
from distbench.store.catalog import open_run
from distbench.store.writer import (
    RunDirectoryError,
    RunWriter,
    exclusive,
    read_json,
    write_json,
)

log = logging.getLogger(__name__)

ProgressFn = Callable[[Any, dict[str, int]], None]

IN_PROCESS_PROVIDERS = frozenset({"dummy"})
"""Providers answered in the shard's own process: free, stateless, no endpoint actor."""


def in_process(spec: BackendSpec) -> bool:
    """Whether ``spec`` is answered in the shard's own process (the dummy, scripted players)
    rather than through an endpoint."""
    return spec.provider in IN_PROCESS_PROVIDERS or spec.provider.startswith("scripted")


class RunConfigMismatch(RunDirectoryError):
    """The run folder holds a run with another configuration."""


def shard_specs(shard: Any) -> tuple[BackendSpec, ...]:
    """The models a shard calls: ``shard.specs`` (multi-model families) or ``(shard.llm,)``."""
    specs = getattr(shard, "specs", None)
    return tuple(specs) if specs is not None else (shard.llm,)


def execute_shard(shard: Any, backends: dict[BackendSpec, Any] | None = None):
    """Plays one shard in this process (the body of the Ray task) and returns its result with
    every table already encoded as Parquet bytes.

    Dispatches on ``shard.family`` to ``distbench.games.<family>.runner.run_shard(shard,
    backends)``, where ``backends`` maps each of :func:`shard_specs` to its backend: the dummy
    or a scripted player in-process, a real model through its endpoint actor (under Ray) or
    directly (without Ray).
    """
    import importlib

    if not shard.family.isidentifier():
        raise ValueError(f"unknown game family {shard.family!r}")
    from distbench.engine.plan import ShardResult
    from distbench.store.writer import encode_table

    runner = importlib.import_module(f"distbench.games.{shard.family}.runner")
    if backends is None:
        backends = {spec: shard_backend(spec, in_ray=True) for spec in shard_specs(shard)}
    result = runner.run_shard(shard, backends)
    # Encode the Parquet here, in parallel across workers: the driver then only writes bytes.
    tables = {name: (stem, encode_table(name, table))
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


def preflight(spec: BackendSpec, styles: tuple[str, ...] = ()) -> None:
    """Fails fast, before any work, when the model cannot be used: a missing key, an
    unreachable server, a wrong path, a rejected key, or the bundled model not installed.
    Each backend checks itself (:meth:`Backend.preflight`); ``styles`` are the prompt styles
    the run sends besides the model's own."""
    if in_process(spec):
        return
    from distbench.llm.registry import backend_class

    backend_class(spec.provider).preflight(spec, styles)


def call_health(con: Any) -> dict[str, Any] | None:
    """How the run's model calls went, from its ``calls`` table: counts, failures, and the
    most common failure explained (None when the run made no calls)."""
    from distbench.llm.http import explain_failure

    try:
        rows = con.execute(
            "select status, http_status, error, endpoint, count(*) from calls "
            "group by all order by count(*) desc, status, http_status nulls first, error"
        ).fetchall()
    except Exception:  # noqa: BLE001 - a run without a calls table made no calls
        return None
    total = sum(r[4] for r in rows)
    if not total:
        return None
    failed_rows = [r for r in rows if r[0] != "ok"]
    failed = sum(r[4] for r in failed_rows)
    out: dict[str, Any] = {"calls": total, "failed": failed,
                           "failed_share": round(failed / total, 6)}
    if failed_rows:
        _, status, error, endpoint, count = failed_rows[0]
        out["top_failure"] = {"http_status": status, "error": error, "count": count,
                              "explained": explain_failure(status, error or "",
                                                           endpoint.partition(":")[2])}
    return out


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of distbench, Python and the libraries that decide results (from the module
    when it is already imported, else from the installed metadata: importing numba and scipy
    only to read their versions would cost the driver a second)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"distbench": __version__, "python": platform.python_version()}
    for name in ("numpy", "numba", "scipy", "pyarrow", "duckdb", "ray"):
        module = sys.modules.get(name)
        try:
            out[name] = getattr(module, "__version__", None) or version(name)
        except PackageNotFoundError:  # pragma: no cover - all are dependencies
            pass
    return out


def start_ray(num_workers: int | None, address: str | None = None) -> None:
    """Connects to Ray: an existing cluster at ``address``, or a new local instance."""
    import ray

    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    env_vars = {"NUMBA_CACHE_DIR": os.environ["NUMBA_CACHE_DIR"]} if "NUMBA_CACHE_DIR" in os.environ else {}
    kwargs: dict[str, Any] = {
        "logging_level": logging.WARNING,
        "runtime_env": {"env_vars": env_vars} if env_vars else None,
    }
    if address:
        # An existing cluster's nodes have their own environment; a runtime env here would
        # make Ray start fresh worker processes for it (seconds per run).
        kwargs["runtime_env"] = None
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=num_workers, include_dashboard=False, **kwargs)


def shard_task():
    """:func:`execute_shard` as a Ray task: one CPU, retried when its worker dies."""
    import ray

    return ray.remote(execute_shard).options(num_cpus=1, max_retries=3)


def _ray_results(shards: list[Shard], max_in_flight: int) -> Iterator[tuple[Shard, Any]]:
    import ray

    remote = shard_task()
    queue = list(reversed(shards))
    pending: dict[Any, Shard] = {}
    while queue or pending:
        while queue and len(pending) < max_in_flight:
            shard = queue.pop()
            pending[remote.remote(shard)] = shard
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            shard = pending.pop(ref)
            yield shard, ray.get(ref)


def _local_results(shards: list[Any]) -> Iterator[tuple[Any, Any]]:
    backends: dict[BackendSpec, Any] = {}
    for shard in shards:
        for spec in shard_specs(shard):
            if spec not in backends:
                backends[spec] = shard_backend(spec, in_ray=False)
        yield shard, execute_shard(shard, {s: backends[s] for s in shard_specs(shard)})


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a finished run reports.

    Attributes:
        run_dir: The run folder.
        shards: Number of shards planned.
        executed: Shards executed by this call.
        skipped: Shards already committed before this call.
        summary: The summary records.
        elapsed_s: Wall time of this call.
        calls: How the model calls went (:func:`call_health`), None without calls.
    """

    run_dir: Path
    shards: int
    executed: int
    skipped: int
    summary: list[dict[str, Any]]
    elapsed_s: float
    calls: dict[str, Any] | None = None


def _check_manifest(run_dir: Path, config_dict: dict[str, Any]) -> None:
    path = run_dir / "manifest.json"
    if not path.exists():
        return
    old = read_json(path).get("identity")
    if old is not None and old != config_dict:
        raise RunConfigMismatch(
            f"{run_dir} already holds a run with a different configuration; "
            "pass --overwrite to replace it or choose another --run-id"
        )


@dataclass(frozen=True)
class RunPlan:
    """Everything the driver needs to run a family's configuration.

    Attributes:
        family: Game family name.
        config: The configuration as JSON (recorded in the manifest).
        identity: What decides the rows (compared on resume): the configuration without
            execution-only settings.
        shards: The planned shards, each with ``shard_id``, ``family``, ``num_units`` and
            ``specs`` or ``llm``.
        seeds: Seeds to record in the manifest.
        summarize: Builds the summary records from a DuckDB connection over the run and an
            :class:`~distbench.report.bootstrap.Offload` for its numeric work (the run's
            Ray workers, or None: this process).
        unit: What ``num_units`` counts (trials, episodes, games), for the progress line.
        summary_threads: DuckDB threads for ``summarize``: 1 unless the summary is known to
            give the same numbers on any number of threads (DuckDB's parallel float sums
            otherwise differ in the last bits between identical runs).
        summary_tables: The tables ``summarize`` reads (None: all); only their views are
            made.
        extra_styles: Prompt styles the plan sends to every model besides the model's own
            (logprob mode reads completions), checked by the pre-flight.
    """

    family: str
    config: dict[str, Any]
    identity: dict[str, Any]
    shards: list[Any]
    seeds: dict[str, Any]
    summarize: Callable[[Any, Any], list[dict[str, Any]]]
    unit: str = "trials"
    summary_threads: int | None = 1
    summary_tables: tuple[str, ...] | None = None
    extra_styles: tuple[str, ...] = ()

    def specs(self) -> list[BackendSpec]:
        """Every model the plan calls, once each, in a stable order."""
        seen: dict[BackendSpec, None] = {}
        for shard in self.shards:
            for spec in shard_specs(shard):
                seen.setdefault(spec, None)
        return list(seen)


def run_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    parallel: bool = True,
    num_workers: int | None = None,
    address: str | None = None,
    keep_warm: float = 0.0,
    command: Iterable[str] | None = None,
    progress: ProgressFn | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Runs (or resumes) a plan into ``run_dir``.

    Args:
        plan: What to play.
        run_dir: The run folder; created, or resumed when it holds the same configuration.
        parallel: Run shards as Ray tasks (True) or one after another in this process.
        num_workers: CPUs of the local Ray instance (default: all).
        address: Address of an existing Ray cluster, e.g. ``"auto"``.
        keep_warm: With ``address``: run shards on the cluster's warm executor pool
            (:mod:`distbench.engine.executors`), created if missing and kept alive this many
            seconds after its last shard; 0 runs them as plain Ray tasks.
        command: The command line, recorded in the manifest.
        progress: Called after each shard is committed, with the shard and its stats.
        on_start: Called once with (shards to run, units to run) when the work starts (after
            Ray is up: a progress bar's clock should not count Ray's start-up).
        on_stage: Called with a short message before a slow set-up step (starting or
            connecting to Ray), so a user is not left waiting in silence.

    Raises:
        RunDirectoryError: ``run_dir`` holds another configuration (:class:`RunConfigMismatch`)
            or another process is writing to it (:class:`RunDirBusy`).
    """
    with exclusive(run_dir):
        return _run_plan(plan, run_dir, parallel=parallel, num_workers=num_workers,
                         address=address, keep_warm=keep_warm, command=command,
                         progress=progress, on_start=on_start, on_stage=on_stage)


def _run_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    parallel: bool,
    num_workers: int | None,
    address: str | None,
    keep_warm: float,
    command: Iterable[str] | None,
    progress: ProgressFn | None,
    on_start: Callable[[int, int], None] | None,
    on_stage: Callable[[str], None] | None,
) -> RunOutcome:
    t0 = time.perf_counter()
    run_id = run_dir.name
    _check_manifest(run_dir, plan.identity)
    specs = plan.specs()
    for spec in specs:
        preflight(spec, plan.extra_styles)
    writer = RunWriter(run_dir)
    shards = plan.shards
    committed = writer.committed()
    todo = [s for s in shards if s.shard_id not in committed]
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "family": plan.family,
        "command": list(command) if command is not None else sys.argv,
        "config": plan.config,
        "identity": plan.identity,
        "versions": dict(versions()),
        "seeds": plan.seeds,
        "execution": {"parallel": parallel, "num_workers": num_workers, "address": address,
                      "keep_warm": keep_warm if address else None},
        "state": "running",
        "shards": {"planned": len(shards), "committed": len(shards) - len(todo)},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_json(run_dir / "manifest.json", manifest)
    if on_start and not todo:
        on_start(0, 0)

    offload = None
    if todo:
        endpoints = []
        if parallel:
            import ray

            if on_stage and not ray.is_initialized():
                on_stage(f"connecting to the Ray cluster at {address}" if address else
                         f"starting a local Ray instance ({num_workers or os.cpu_count()} "
                         "CPUs; a few seconds)")
            start_ray(num_workers, address)
            cpus = int(ray.cluster_resources().get("CPU", 1))
            remote_specs = [spec for spec in specs if not in_process(spec)]
            if remote_specs:
                from distbench.llm.endpoint import get_or_create

                endpoints = [get_or_create(spec) for spec in remote_specs]
            executors = []
            if address and keep_warm > 0:
                from distbench.engine import executors as pool

                executors = pool.acquire(keep_warm, on_create=on_stage and (
                    lambda n: on_stage(f"starting {n} warm executor(s) on the cluster (the first "
                                       "run of this distbench version there; a few seconds)")))
            if executors:
                results = pool.pool_results(todo, executors)
            else:
                results = _ray_results(todo, max_in_flight=max(2, 2 * cpus))
            from distbench.engine.remote import RayCalls

            offload = RayCalls(executors, cpus)
        else:
            results = _local_results(todo)
        if on_start:
            on_start(len(todo), sum(s.num_units for s in todo))
        # Two writer threads overlap writing and fsyncing a shard's files with receiving the
        # next results (the workers encoded the Parquet). Every shard is still written by this
        # process only, files then marker.
        from concurrent.futures import ThreadPoolExecutor

        writers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="distbench-writer")
        pending: list = []

        def drain(block: bool) -> None:
            while pending and (block or pending[0][0].done()):
                future, shard, stats = pending.pop(0)
                future.result()
                if progress:
                    progress(shard, stats)

        try:
            for shard, result in results:
                pending.append((writers.submit(
                    writer.commit_shard, shard.shard_id, result.tables,
                    {"stats": result.stats, "shard": _jsonable(shard)},
                ), shard, result.stats))
                drain(block=len(pending) > 4)
            drain(block=True)
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            from distbench.llm.http import AuthenticationFailed

            if isinstance(cause, AuthenticationFailed):
                manifest.update(state="stopped", error=str(cause))
                write_json(run_dir / "manifest.json", manifest)
                raise AuthenticationFailed(str(cause)) from None
            raise
        finally:
            writers.shutdown(wait=True)
            del endpoints

    con = open_run(run_dir, threads=plan.summary_threads, tables=plan.summary_tables)
    try:
        summary = plan.summarize(con, offload)
    finally:
        con.close()
    health = None
    if any(not in_process(spec) for spec in specs):
        con = open_run(run_dir, tables=("calls",))
        try:
            health = call_health(con)
        finally:
            con.close()
    record = {"run_id": run_id, "family": plan.family, "groups": summary}
    if health is not None:
        record["calls"] = health
    write_json(run_dir / "summary.json", record)
    manifest.update(
        state="complete",
        shards={"planned": len(shards), "committed": len(writer.committed())},
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    write_json(run_dir / "manifest.json", manifest)
    return RunOutcome(
        run_dir=run_dir,
        shards=len(shards),
        executed=len(todo),
        skipped=len(shards) - len(todo),
        summary=summary,
        elapsed_s=time.perf_counter() - t0,
        calls=health,
    )


def _jsonable(shard: Any) -> Any:
    import json

    return json.loads(json.dumps(asdict(shard), default=str))


def matrix_plan(config: MatrixRunConfig, run_id: str) -> RunPlan:
    """The :class:`RunPlan` of a matrix configuration."""
    from distbench.report.summary import matrix_summary

    return RunPlan(
        family="matrix",
        config=config.to_dict(),
        identity=config.identity(),
        shards=plan_matrix(config, run_id=run_id),
        seeds={"game_seeds": list(config.seeds), "llm_seed": config.llm_seed},
        summarize=matrix_summary,
        summary_threads=None,  # its sums run in a fixed order: the same on any thread count
        summary_tables=("game_scores", "trials"),
        extra_styles=("completion",) if "logprob" in config.modes else (),
    )


def run_matrix(config: MatrixRunConfig, run_dir: Path, **kwargs: Any) -> RunOutcome:
    """Runs (or resumes) a matrix configuration into ``run_dir``; see :func:`run_plan`."""
    return run_plan(matrix_plan(config, run_dir.name), run_dir, **kwargs)
