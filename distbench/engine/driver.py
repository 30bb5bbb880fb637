"""The driver: runs a plan's shards as Ray tasks and is the only writer of the run directory.

``run_plan`` takes any family's :class:`~distbench.games.base.RunPlan`, skips the shards
already committed (so re-running the same ``--run-id`` resumes), submits the rest as Ray tasks
with a bounded number in flight (the worker side is :mod:`distbench.engine.worker`), writes
each returned shard (Parquet via temp file + rename, then the commit marker) as it arrives,
and finally writes ``summary.json`` and completes ``manifest.json``. It names no family.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from distbench.engine.budget import Budget, ShardQueue, committed_probes
from distbench.engine.health import call_health
from distbench.engine.worker import (
    execute_shard,
    in_process,
    shard_backend,
    shard_specs,
    shard_task,
    versions,
)
from distbench.games.base import RunPlan
from distbench.games.registry import get_family, load_families
from distbench.llm.base import BackendSpec, redact
from distbench.report.bootstrap import warm_kernel
from distbench.store.catalog import open_run
from distbench.store.fields import warm_arrow
from distbench.store.harness import harness_parts, summary_harness
from distbench.store.integrity import COMMITS, DAMAGED_SUFFIX, Damage, set_aside, verify
from distbench.store.writer import (
    RunDirectoryError,
    RunWriter,
    committed_ids,
    exclusive,
    failed_call_shards,
    read_json,
    write_json,
)

log = logging.getLogger(__name__)

ProgressFn = Callable[[Any, dict[str, int]], None]


class RunConfigMismatch(RunDirectoryError):
    """The run folder holds a run with another configuration."""


def preflight(spec: BackendSpec, styles: tuple[str, ...] = ()) -> None:
    """Fails fast, before any work, when the model cannot be used: a missing key, an
    unreachable server, a wrong path, a rejected key, or the bundled model not installed.
    Each backend checks itself (:meth:`Backend.preflight`); ``styles`` are the prompt styles
    the run sends besides the model's own."""
    if in_process(spec):
        return
    from distbench.llm.registry import backend_class

    backend_class(spec.provider).preflight(spec, styles)
    if spec.option("cache", True):  # a cache that cannot be opened: one line, before work
        from distbench.llm.cache import ResponseCache
        from distbench.llm.endpoint import default_cache_path

        ResponseCache(spec.option("cache_path") or default_cache_path()).close()


def check_visible_to_workers(specs: list[BackendSpec]) -> None:
    """Refuses, before any work, a model whose provider was registered by a call in this
    process only: Ray's workers and endpoint actors could not find it."""
    from distbench.llm.base import BackendUnavailable
    from distbench.llm.registry import runtime_only

    for spec in specs:
        if runtime_only(spec.provider):
            raise BackendUnavailable(
                f"provider {spec.provider!r} was registered in this process only, so Ray's "
                "workers cannot use it: install it as a plugin (entry point group "
                "'distbench.providers', see the README) or run with --no-parallel")


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
        context = ray.init(address=address, **kwargs)
    else:
        context = ray.init(num_cpus=num_workers, include_dashboard=False, **kwargs)
    # where this session's logs are (under RAY_TMPDIR, else /tmp/ray), as Ray itself says
    log.debug("Ray session folder: %s", (context.address_info or {}).get("session_dir"))


def _ray_results(queue: ShardQueue, max_in_flight: int) -> Iterator[tuple[Any, Any]]:
    import ray

    remote = shard_task()
    pending: dict[Any, Any] = {}
    try:
        while True:
            while len(pending) < max_in_flight:
                shard = queue.take()
                if shard is None:
                    break
                pending[remote.remote(shard)] = shard
            if not pending:  # none left, or the budget admits no more
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                shard = pending.pop(ref)
                yield shard, ray.get(ref)
    finally:  # closed early (Ctrl-C, an error): the shards in flight are cancelled
        for ref in pending:
            ray.cancel(ref, force=True)


def _warm() -> None:
    """Loads, while the shards play, what a run played in this process needs after them:
    Arrow's conversion of Python lists (:func:`warm_arrow`, which the shard's tables need
    first) and the summary's resampling kernel (:func:`warm_kernel`). Their model calls leave
    the process waiting most of the time."""
    warm_arrow()
    warm_kernel()


def _local_results(queue: ShardQueue, backends: dict[BackendSpec, Any] | None = None
                   ) -> Iterator[tuple[Any, Any]]:
    backends = dict(backends or {})
    while (shard := queue.take()) is not None:
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
        retried: Shards played again for their failed calls (``retry_failed``).
        budget_reached: The budget stopped the run (:mod:`distbench.engine.budget`): its
            figures (``spent_usd``, ``spent_tokens``, the limits), ``shards_left`` and
            ``rest_usd``/``rest_tokens`` (what those shards may still spend); None otherwise.
    """

    run_dir: Path
    shards: int
    executed: int
    skipped: int
    summary: list[dict[str, Any]]
    elapsed_s: float
    calls: dict[str, Any] | None = None
    retried: int = 0
    budget_reached: dict[str, Any] | None = None


def _check_manifest(run_dir: Path, config_dict: dict[str, Any]) -> None:
    path = run_dir / "manifest.json"
    if not path.exists():
        return
    old = read_json(path).get("identity")
    if old is not None and old != redact(config_dict):
        raise RunConfigMismatch(
            f"{run_dir} already holds a run with a different configuration; "
            "pass --overwrite to replace it or choose another --run-id"
        )


def _repair(run_dir: Path, planned: set[str],
            on_stage: Callable[[str], None] | None) -> list[Damage]:
    """Before a resume: verifies every committed shard (:func:`verify`: paths, sizes,
    hashes) and sets the damaged markers aside, so those shards are played again (their rows
    exactly once: a replay overwrites its own files). One line per damaged shard, at most
    three and then a count. A marker of no planned shard (placed by hand) is set aside too."""
    damages = verify(run_dir)
    for i, damage in enumerate(damages):
        set_aside(damage)
        if i < 3:
            what = ("the shard is played again" if damage.shard_id in planned
                    else "not a shard of this run")
            message = (f"damaged: {damage.line()}; {what} (its marker is kept as "
                       f"{COMMITS}/{damage.marker.name}{DAMAGED_SUFFIX})")
        elif i == 3:
            message = f"and {len(damages) - 3} more damaged shard(s), played again"
        else:
            continue
        if on_stage:
            on_stage(message)
        else:
            log.warning("%s", message)
    return damages


AUTO_FREE_UNITS = 20_000
"""With ``--parallel auto``: in-process models (the dummy) run here up to this many units."""


def choose_parallel(shards: list[Any], specs: list[BackendSpec],
                    address: str | None) -> tuple[bool, str]:
    """``--parallel auto``: whether to run on Ray, and why, in one line. On Ray with a cluster
    address, or when there is more than one shard of real-model work or more than
    :data:`AUTO_FREE_UNITS` units of in-process work; in this process otherwise (starting a
    local Ray instance takes seconds, more than a small run's work)."""
    if address:
        return True, f"running on the Ray cluster at {address}"
    units = sum(s.num_units for s in shards)
    free = all(in_process(s) for s in specs)
    if len(shards) <= 1 or (free and units <= AUTO_FREE_UNITS):
        return False, (f"running in this process ({len(shards)} shard(s), {units:,} units: "
                       "less work than starting Ray; --parallel forces Ray)")
    return True, f"running on Ray ({len(shards)} shards; --no-parallel runs them here)"


def run_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    parallel: bool | None = True,
    num_workers: int | None = None,
    address: str | None = None,
    keep_warm: float = 0.0,
    command: Iterable[str] | None = None,
    progress: ProgressFn | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    on_calls: Callable[[dict[str, int]], None] | None = None,
    retry_failed: bool = False,
    budget: Budget | None = None,
    execution: str = "live",
    batch_limits: Any = None,
    batch_price: float = 0.5,
) -> RunOutcome:
    """Runs (or resumes) a plan into ``run_dir``.

    Args:
        plan: What to play.
        run_dir: The run folder; created, or resumed when it holds the same configuration.
        parallel: Run shards as Ray tasks (True) or one after another in this process
            (False); None: choose by the work (:func:`choose_parallel`) and say why through
            ``on_stage``. The choice never changes a row.
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
        on_calls: Called about twice a second while shards run, with the model calls
            answered so far in this run (``calls``, ``failed``, ``cache_hits``, tokens), the
            answers asked for (``sent``) and what the models are doing when that is slow
            (``status``, e.g. loading), read live from the endpoints (so it moves call by
            call, not shard by shard).
        retry_failed: Also play again every committed shard whose model calls failed
            (``calls.status = 'failed'``, the ``call_failed`` rows): its rows are replaced,
            exactly once; with the response cache on, only the failed calls reach the model
            again (the others are answered from the cache).
        budget: Stop admitting shards when the next one's estimate would cross it
            (:func:`distbench.engine.budget.make_budget`); the shards in flight finish and are
            committed, the manifest says ``budget_reached`` with the figures and the outcome's
            ``budget_reached`` is set. The same run with a larger budget resumes it.
        execution: ``"live"`` (each request sent as it is asked) or ``"batch"``: through the
            provider's batch API (:mod:`distbench.engine.batching`; single-turn plans only,
            shards then played in this process from the answers); the rows are the same.
        batch_limits: :class:`~distbench.engine.batching.BatchLimits` (None: OpenAI's).
        batch_price: Share of the model's price a batch answer costs (0.5: half), for the
            run's cost.

    Raises:
        RunDirectoryError: ``run_dir`` holds another configuration (:class:`RunConfigMismatch`)
            or another process is writing to it (:class:`RunDirBusy`).

    A run that fails after its manifest was written leaves it ``state: failed`` with the
    reason in ``error`` (one line), or ``interrupted`` after Ctrl-C; the error propagates.
    """
    started: dict[str, Any] = {}
    with exclusive(run_dir):
        try:
            return _run_plan(plan, run_dir, parallel=parallel, num_workers=num_workers,
                             address=address, keep_warm=keep_warm, command=command,
                             progress=progress, on_start=on_start, on_stage=on_stage,
                             on_calls=on_calls, retry_failed=retry_failed, started=started,
                             budget=budget, execution=execution, batch_limits=batch_limits,
                             batch_price=batch_price)
        except KeyboardInterrupt:
            _end_manifest(run_dir, started, "interrupted", "interrupted (Ctrl-C); committed "
                          "shards are kept, the same command resumes the run")
            raise
        except Exception as exc:
            _end_manifest(run_dir, started, "failed", failure_reason(exc))
            raise


def failure_reason(exc: BaseException) -> str:
    """One line saying why a run failed: the exception (the cause of a Ray task error), its
    type and first line, credentials of URLs redacted, at most 300 characters."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    line = f"{type(cause).__name__}: {text}" if text else type(cause).__name__
    return redact(line)[:300]


def _end_manifest(run_dir: Path, started: dict[str, Any], state: str, reason: str) -> None:
    """Marks the manifest this run wrote (``started["manifest"]``) ``state`` with ``reason``,
    when it still says ``running``: a stopped run never looks like a running one."""
    manifest = started.get("manifest")
    if manifest is None or manifest.get("state") != "running":
        return
    manifest.update(state=state, error=reason,
                    stopped_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    try:
        write_json(run_dir / "manifest.json", redact(manifest))
    except OSError as exc:  # a full disk: the run's own error is the one to show
        log.warning("could not mark %s/manifest.json %s: %s", run_dir, state, exc)


def _run_plan(
    plan: RunPlan,
    run_dir: Path,
    *,
    parallel: bool | None,
    num_workers: int | None,
    address: str | None,
    keep_warm: float,
    command: Iterable[str] | None,
    progress: ProgressFn | None,
    on_start: Callable[[int, int], None] | None,
    on_stage: Callable[[str], None] | None,
    on_calls: Callable[[dict[str, int]], None] | None = None,
    retry_failed: bool = False,
    started: dict[str, Any] | None = None,
    budget: Budget | None = None,
    execution: str = "live",
    batch_limits: Any = None,
    batch_price: float = 0.5,
) -> RunOutcome:
    t0 = time.perf_counter()
    load_families()  # every family's tables are known to the store before it is read
    run_id = run_dir.name
    _check_manifest(run_dir, plan.identity)
    specs = plan.specs()
    for spec in specs:
        preflight(spec, plan.extra_styles)
    _repair(run_dir, {s.shard_id for s in plan.shards}, on_stage)
    if execution == "batch":
        from distbench.engine.batching import check_batchable

        check_batchable(plan)
        if parallel and on_stage:
            on_stage("--execution batch: the shards are played in this process from the "
                     "batches' answers (no Ray needed)")
        parallel = False  # the answers come from the batches: the shards are played here
    if parallel is None:
        pending = [s for s in plan.shards if s.shard_id not in committed_ids(run_dir)]
        parallel, why = choose_parallel(pending, specs, address)
        if on_stage and pending:
            on_stage(why)
    if parallel:
        check_visible_to_workers(specs)
    writer = RunWriter(run_dir)
    shards = plan.shards
    committed, retried = _retry(run_dir, writer, shards, retry_failed, on_stage)
    todo = [s for s in shards if s.shard_id not in committed]
    if budget is not None and committed:
        _resume_budget(budget, run_dir)
    queue = ShardQueue(todo, budget.admit if budget is not None else None)
    manifest = _manifest(plan, run_id, command, specs, budget, len(todo), {
        "parallel": parallel, "num_workers": num_workers, "address": address,
        "keep_warm": keep_warm if address else None, "mode": execution,
        **({"batch_price": batch_price} if execution == "batch" else {})})
    write_json(run_dir / "manifest.json", redact(manifest))
    if started is not None:
        started["manifest"] = manifest
    if on_start and not todo:
        on_start(0, 0)

    offload = None
    warming: threading.Thread | None = None
    if todo:
        endpoints: list = []
        if parallel:
            results, endpoints, offload = _ray_source(queue, specs, num_workers, address,
                                                      keep_warm, on_stage)
        elif execution == "batch":  # in waves the budget admits (one without a budget)
            from distbench.engine.batching import BatchLimits, BatchRun

            queue = BatchRun(todo, run_dir, batch_limits or BatchLimits(), on_stage,
                             budget=budget, retry_failed=retry_failed)
            results = queue.results()
        else:
            results = _local_results(queue)
        if not parallel:  # the tables and summary are built here: what they load first
            warming = threading.Thread(target=_warm, name="warm-kernel", daemon=True)
            warming.start()
        if on_start:
            on_start(len(todo), sum(s.num_units for s in todo))
        watcher = CallWatcher(specs, endpoints if parallel else None, on_calls) \
            if on_calls else None
        try:
            _commit_results(results, writer, budget, progress)
        except KeyboardInterrupt:
            _cancel(results, endpoints)
            raise
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            from distbench.llm.http import AuthenticationFailed

            if isinstance(cause, AuthenticationFailed):
                manifest.update(state="stopped", error=str(cause))
                write_json(run_dir / "manifest.json", redact(manifest))
                raise AuthenticationFailed(str(cause)) from None
            raise
        finally:
            if watcher is not None:
                watcher.stop()
            del endpoints

    if len(queue):
        left = queue.left()
        rest_tokens, rest_usd = budget.rest(left) if budget is not None else (0.0, 0.0)
        figures = {**(budget.figures() if budget is not None else {}),
                   "shards_left": len(left), "rest_tokens": round(rest_tokens),
                   "rest_usd": round(rest_usd, 6)}
        manifest.update(
            state="budget_reached", budget=figures,
            shards={"planned": len(shards), "committed": len(writer.committed())},
            stopped_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        write_json(run_dir / "manifest.json", redact(manifest))
        return RunOutcome(
            run_dir=run_dir, shards=len(shards), executed=len(todo) - len(left),
            skipped=len(shards) - len(todo), summary=[],
            elapsed_s=time.perf_counter() - t0, retried=len(retried),
            budget_reached=figures)
    if warming is not None:
        warming.join()
    summary, health = _summary_and_health(plan, run_dir, specs, offload, batch_price)
    record = {"run_id": run_id, "family": plan.family, "groups": summary,
              "harness_hash": summary_harness(run_dir)}
    if health is not None:
        record["calls"] = health
    write_json(run_dir / "summary.json", redact(record))
    if budget is not None:
        manifest["budget"] = budget.figures()
    manifest.update(
        state="complete",
        shards={"planned": len(shards), "committed": len(writer.committed())},
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    write_json(run_dir / "manifest.json", redact(manifest))
    return RunOutcome(
        run_dir=run_dir,
        shards=len(shards),
        executed=len(todo),
        skipped=len(shards) - len(todo),
        summary=summary,
        elapsed_s=time.perf_counter() - t0,
        calls=health,
        retried=len(retried),
    )


def _manifest(plan: RunPlan, run_id: str, command: Iterable[str] | None,
              specs: list[BackendSpec], budget: Budget | None, todo: int,
              execution: dict[str, Any]) -> dict[str, Any]:
    """A starting run's manifest (state ``running``), ``todo`` of its shards still to play."""
    shards = len(plan.shards)
    return {
        "run_id": run_id,
        "family": plan.family,
        "command": list(command) if command is not None else sys.argv,
        "config": plan.config,
        "identity": plan.identity,
        "versions": dict(versions()),
        "models": [{"provider": sp.provider, "model": sp.model, "style": sp.style,
                    "base_url": sp.option("base_url"), "price_in": sp.option("price_in"),
                    "price_out": sp.option("price_out")} for sp in specs],
        "seeds": plan.seeds,
        "execution": execution,
        "state": "running",
        **({"budget": budget.figures()} if budget is not None else {}),
        "shards": {"planned": shards, "committed": shards - todo},
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _retry(run_dir: Path, writer: RunWriter, shards: list, retry_failed: bool,
           on_stage: Callable[[str], None] | None) -> tuple[set[str], dict[str, int]]:
    """(the committed shard ids, the shards retried for their failed calls -> how many):
    with ``retry_failed``, the committed shards with failed calls are uncommitted first."""
    committed = writer.committed()
    retried: dict[str, int] = {}
    if retry_failed:
        planned_ids = {s.shard_id for s in shards}
        retried = {sid: n for sid, n in failed_call_shards(run_dir).items()
                   if sid in planned_ids}
        if retried and on_stage:
            on_stage(f"retrying {sum(retried.values()):,} failed call(s) in {len(retried)} "
                     "shard(s)")
        for sid in retried:  # uncommitted first: a crash now leaves them to the next resume
            writer.uncommit(sid)
        committed -= set(retried)
    return committed, retried


def _resume_budget(budget: Budget, run_dir: Path) -> None:
    """A resume: what the committed shards spent counts against the budget."""
    try:
        con = open_run(run_dir, tables=("calls",))
    except Exception:  # noqa: BLE001 - no calls committed: nothing spent yet
        return
    try:
        budget.committed(con, committed_probes(run_dir)[1])
    finally:
        con.close()


def _ray_source(queue: ShardQueue, specs: list[BackendSpec], num_workers: int | None,
                address: str | None, keep_warm: float,
                on_stage: Callable[[str], None] | None) -> tuple[Any, list, Any]:
    """Ray started (or joined): (the shards' results as they come, the remote models'
    endpoints, the offload of a summary's heavy work)."""
    import ray

    if on_stage and not ray.is_initialized():
        on_stage(f"connecting to the Ray cluster at {address}" if address else
                 f"starting a local Ray instance ({num_workers or os.cpu_count()} "
                 "CPUs; a few seconds)")
    start_ray(num_workers, address)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    remote_specs = [spec for spec in specs if not in_process(spec)]
    endpoints = []
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
        results = pool.pool_results(queue, executors)
    else:
        results = _ray_results(queue, max_in_flight=max(2, 2 * cpus))
    from distbench.engine.remote import RayCalls

    return results, endpoints, RayCalls(executors, cpus)


def _commit_results(results: Any, writer: RunWriter, budget: Budget | None,
                    progress: ProgressFn | None) -> None:
    """Commits every shard's result as it comes. Two writer threads overlap writing and
    fsyncing a shard's files with receiving the next results (the workers encoded the
    Parquet); every shard is still written by this process only, files then marker."""
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
            if budget is not None:
                calls = result.tables.get("calls")
                budget.received(shard, calls[1].data if calls is not None else None,
                                result.stats)
            pending.append((writers.submit(
                writer.commit_shard, shard.shard_id, result.tables,
                {"stats": result.stats, "shard": redact(_jsonable(shard)),
                 "harness": harness_parts(get_family(shard.family))},
            ), shard, result.stats))
            drain(block=len(pending) > 4)
        drain(block=True)
    finally:
        writers.shutdown(wait=True)


def _summary_and_health(plan: RunPlan, run_dir: Path, specs: list[BackendSpec], offload: Any,
                        batch_price: float) -> tuple[list, dict[str, Any] | None]:
    """A finished run's summary records, and the health of its calls to remote models (None
    when every model ran in process) with the cost estimates to compare with the bill."""
    con = open_run(run_dir, threads=plan.summary_threads, tables=plan.summary_tables)
    try:
        summary = plan.summarize(con, offload)
    finally:
        con.close()
    if all(in_process(spec) for spec in specs):
        return summary, None
    con = open_run(run_dir, tables=("calls",))
    try:
        health = call_health(con, specs, batch_price, committed_probes(run_dir))
    finally:
        con.close()
    live_cost = _estimated_cost(plan)
    if live_cost is not None:
        health["estimate_cost_usd_max"] = {"live": round(live_cost, 6),
                                           "batch": round(live_cost * batch_price, 6),
                                           "batch_price": batch_price}
        from distbench.engine.estimate import expected_of

        likely = expected_of(plan)  # by the answer format: to compare with the bill
        if likely is not None and likely.cost is not None:
            health["estimate_cost_usd_expected"] = {
                "live": round(likely.cost, 6), "batch": round(likely.cost * batch_price, 6),
                "completion_by": "+".join(likely.sources)}
    return summary, health


def _estimated_cost(plan: RunPlan) -> float | None:
    """The plan's cost estimate (at most, USD, live price) over all its shards: the sum of its
    per-shard estimates, or its ``expected_cost``; None without a price."""
    if plan.shard_estimate is None:
        return plan.expected_cost
    total = 0.0
    for shard in plan.shards:
        if all(in_process(s) for s in shard_specs(shard)):
            continue
        est = plan.shard_estimate(shard)
        if est is None or est[2] is None:
            return plan.expected_cost
        total += est[2]
    return total


def _cancel(results: Any, endpoints: list[Any]) -> None:
    """Ctrl-C: cancels the shard tasks in flight (closing the results) and kills the run's
    endpoint actors, so no model call is made after the driver stops."""
    close = getattr(results, "close", None)
    if close is not None:
        close()
    if endpoints:
        import ray

        for actor in endpoints:
            ray.kill(actor, no_restart=True)


class CallWatcher:
    """Reads the live call counts of a run's endpoints about twice a second, in a thread,
    and hands the counts since the run started (and the endpoints' status line, ``status``)
    to ``report``. Under Ray the counts are the
    endpoint actors' (:meth:`EndpointActor.stats`); without Ray, this process's own
    (:mod:`distbench.llm.meter`). A reading that fails (an actor restarting) is skipped."""

    def __init__(self, specs: list[BackendSpec], actors: list[Any] | None,
                 report: Callable[[dict[str, int]], None], interval: float = 0.5) -> None:
        from distbench.llm import meter
        from distbench.llm.endpoint import direct_throttle_state, endpoint_key, throttle_state

        keys = [endpoint_key(s) for s in specs if not in_process(s)]
        self._fields = meter.FIELDS
        if actors is not None:
            import ray

            def read() -> dict[str, Any]:
                stats = ray.get([a.stats.remote() for a in actors], timeout=5)
                return {**{f: sum(st.get(f, 0) for st in stats) for f in self._fields},
                        **throttle_state(stats),
                        "status": "; ".join(st["status"] for st in stats if st.get("status"))}
        else:
            def read() -> dict[str, Any]:
                return {**meter.snapshot(keys), **direct_throttle_state(keys),
                        "status": meter.status(keys)}
        self._read = read
        self._report = report
        self._interval = interval
        self._stop = threading.Event()
        self._base: dict[str, int] | None = None
        if keys:
            self._base = self._safe_read()
            self._thread = threading.Thread(target=self._loop, name="distbench-calls",
                                            daemon=True)
            self._thread.start()
        else:
            self._thread = None

    def _safe_read(self) -> dict[str, int] | None:
        try:
            return self._read()
        except Exception:  # noqa: BLE001 - progress only: a missed reading is harmless
            return None

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.poll()

    def poll(self) -> None:
        now = self._safe_read()
        if now is None:
            return
        if self._base is None:
            self._base = dict.fromkeys(self._fields, 0)
        counts = {f: now[f] - self._base.get(f, 0) for f in self._fields}
        counts.update({k: v for k, v in now.items() if k.startswith("rate_")})  # levels
        counts["status"] = now.get("status", "")
        self._report(counts)

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=10)
            self.poll()  # the final counts


def _jsonable(shard: Any) -> Any:
    import json

    return json.loads(json.dumps(asdict(shard), default=str))


def run_config(config: Any, run_dir: Path, **kwargs: Any) -> RunOutcome:
    """Runs (or resumes) any family's configuration (anything with ``plan(run_id)``) into
    ``run_dir``; see :func:`run_plan`."""
    return run_plan(config.plan(run_dir.name), run_dir, **kwargs)
