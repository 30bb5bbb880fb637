"""Plain function calls on a run's Ray workers, for the numeric work after the shards.

The summary's bootstrap runs on the workers that just played the shards: they have numba and
the kernels loaded, and a new driver would spend more than a second loading them itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from typing import Any

log = logging.getLogger(__name__)


class RayCalls:
    """An :class:`~distbench.report.bootstrap.Offload` over the run's Ray workers: the warm
    executors when the run has them (in turn), else one-CPU Ray tasks (Ray gives them the
    workers that ran the shards). A call whose worker fails runs in this process instead.

    Args:
        executors: The run's warm executors (:func:`distbench.engine.executors.acquire`), or
            none.
        cpus: CPUs of the cluster: how many tasks run at once without executors.
    """

    def __init__(self, executors: list[Any], cpus: int) -> None:
        self.executors = list(executors)
        self.width = len(self.executors) or max(1, int(cpus))
        self._turn = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        import ray

        if self.executors:
            executor = self.executors[self._turn % len(self.executors)]
            self._turn += 1
            ref = executor.call.remote(fn, *args)
        else:
            ref = _task(fn).remote(*args)

        def wait() -> Any:
            try:
                return ray.get(ref)
            except ray.exceptions.RayError as exc:
                log.warning("remote %s failed (%s); running it here", fn.__name__,
                            str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
                return fn(*args)

        return wait


@cache
def _task(fn: Callable[..., Any]) -> Any:
    import ray

    return ray.remote(fn).options(num_cpus=1, max_retries=3)
