"""A warm pool of shard executors that outlives one run on an existing Ray cluster.

Ray starts new worker processes for every job (every driver), and a distbench worker spends
about two seconds importing numpy, pyarrow and numba and loading the compiled kernels before
its first shard. A researcher who runs many short sweeps against one cluster pays that on every
run. With a pool, the driver runs its shards on named, detached actors (one per CPU of each
node) that stay up ``keep_warm`` seconds after their last shard and then exit by themselves;
the next driver with the same code finds them warm.

Rules:

* The pool's name carries a fingerprint of the installed distbench code and the versions of the
  libraries that decide results, so a driver never runs shards on an executor with other code;
  an executor checks its own fingerprint when it starts and refuses a mismatch. Pools of other
  versions idle out on their own.
* Executors hold no CPU reservation (``num_cpus=0``; placed on each node in proportion to its
  CPUs), so an idle pool never blocks other work; the driver keeps at most two shards queued
  per executor.
* A killed executor restarts and its shard is retried; if the pool is unusable the driver runs
  the shard as a plain Ray task. The driver stays the only writer, so a retried shard still
  lands exactly once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

NAMESPACE = "distbench"
PREFIX = "distbench-executor"
DEFAULT_KEEP_WARM_S = 300.0
QUEUE_PER_EXECUTOR = 2


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """Hash of the installed distbench sources and of the versions that decide results."""
    from distbench.engine.worker import versions

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in {".py", ".sql", ".json"} and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    for name, version in sorted(versions().items()):
        if name != "machine":  # the driver's machine: cluster nodes differ, code does not
            digest.update(f"{name}={version}".encode())
    return digest.hexdigest()[:16]


class ShardExecutor:
    """The actor: runs shards one at a time, warm, until idle for ``keep_warm`` seconds."""

    def __init__(self, expected: str, keep_warm: float) -> None:
        mine = fingerprint()
        if mine != expected:
            raise RuntimeError(f"executor code {mine} differs from the driver's {expected}")
        self.keep_warm = float(keep_warm)
        self.last_active = time.monotonic()
        self.busy = 0
        self._warm_up()
        threading.Thread(target=self._watch, name="distbench-idle", daemon=True).start()

    @staticmethod
    def _warm_up() -> None:
        # Import the families and load their compiled kernels now, not in the first shard.
        import numpy as np

        from distbench.games.registry import families
        from distbench.report.bootstrap import resample_means

        for family in families().values():
            family.warm()
        resample_means(np.ones(1), np.ones(1), 0, 1, 0)

    def _watch(self) -> None:
        import ray

        while True:
            time.sleep(min(5.0, max(0.5, self.keep_warm / 10)))
            if not self.busy and time.monotonic() - self.last_active > self.keep_warm:
                log.info("distbench executor idle for %.0f s: exiting", self.keep_warm)
                ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                return

    def ping(self, keep_warm: float) -> int:
        """Marks the executor in use by a driver that wants it warm ``keep_warm`` seconds
        after its last shard; returns the process id."""
        self.keep_warm = max(float(keep_warm), 1.0)
        self.last_active = time.monotonic()
        return os.getpid()

    def run(self, shard: Any) -> Any:
        """Plays one shard (see :func:`distbench.engine.driver.execute_shard`)."""
        from distbench.engine.worker import execute_shard

        return self.call(execute_shard, shard)

    def call(self, fn: Any, *args: Any) -> Any:
        """Runs ``fn(*args)`` here, warm (a shard, or the summary's resampling:
        :class:`distbench.engine.remote.RayCalls`)."""
        self.busy += 1
        try:
            return fn(*args)
        finally:
            self.busy -= 1
            self.last_active = time.monotonic()


def _node_slots() -> list[tuple[str, int]]:
    """(node id, executors) for every alive node: one executor per CPU, at least one."""
    import ray

    slots = []
    for node in ray.nodes():
        if node.get("Alive"):
            cpus = int(node.get("Resources", {}).get("CPU", 0))
            if cpus > 0:
                slots.append((node["NodeID"], cpus))
    return sorted(slots)


def acquire(keep_warm: float, timeout: float = 120.0,
            on_create: Callable[[int], None] | None = None) -> list[Any]:
    """The pool's executors for this code, created where missing, pinged (so they stay warm),
    and ready; an empty list when the pool cannot be used (the caller runs Ray tasks).
    ``on_create`` is called with the number of executors to start, when some are missing."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    fp = fingerprint()
    slots = [(f"{PREFIX}-{fp}-{node_id[:12]}-{k}", node_id)
             for node_id, count in _node_slots() for k in range(count)]
    if on_create:
        try:
            alive = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                     if a.get("namespace") == NAMESPACE}
        except Exception:  # noqa: BLE001 - only for a message
            alive = set()
        missing = sum(name not in alive for name, _ in slots)
        if missing:
            on_create(missing)
    # ping answers while a shard runs (another driver may be using the pool)
    remote = ray.remote(concurrency_groups={"control": 1})(ShardExecutor)
    executors = []
    for name, node_id in slots:
        executors.append(remote.options(
            name=name,
            namespace=NAMESPACE,
            lifetime="detached",
            get_if_exists=True,
            num_cpus=0,
            max_restarts=-1,
            max_task_retries=3,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=True),
        ).remote(fp, keep_warm))
    try:
        ray.get([e.ping.options(concurrency_group="control").remote(keep_warm)
                 for e in executors], timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any failure: fall back to plain tasks
        log.warning("warm executor pool unavailable (%s); running shards as Ray tasks",
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return []
    return executors


def pool_results(queue: Any, executors: list[Any]) -> Iterator[tuple[Any, Any]]:
    """Runs the shards of ``queue`` (a :class:`~distbench.engine.budget.ShardQueue`) on
    ``executors`` (at most QUEUE_PER_EXECUTOR queued on each) and yields
    (shard, result) as they finish. A shard whose executor is gone is re-run as a Ray task."""
    import ray
    from ray.exceptions import RayActorError

    from distbench.engine.worker import shard_task

    fallback = shard_task()
    pending: dict[Any, tuple[Any, int | None]] = {}
    load = [0] * len(executors)

    def submit() -> None:
        while True:
            k = min(range(len(executors)), key=load.__getitem__)
            if load[k] >= QUEUE_PER_EXECUTOR:
                return
            shard = queue.take()
            if shard is None:  # none left, or the budget admits no more
                return
            load[k] += 1
            pending[executors[k].run.remote(shard)] = (shard, k)

    try:
        submit()
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                shard, k = pending.pop(ref)
                if k is not None:
                    load[k] -= 1
                try:
                    result = ray.get(ref)
                except RayActorError:
                    log.warning("executor of shard %s is gone; re-running it as a Ray task",
                                shard.shard_id)
                    pending[fallback.remote(shard)] = (shard, None)
                    continue
                yield shard, result
            submit()
    finally:
        # The run stopped early (an error, Ctrl-C): shards still queued on the executors
        # must not run for nobody.
        for ref in pending:
            ray.cancel(ref)
