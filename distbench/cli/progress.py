"""The progress line of ``run`` and ``sweep run`` on stderr.

A bar over the run's units (trials, episodes, games) with the shards done, the model calls and
failed calls so far, and an ETA. The ETA is the rate since the first shard finished: before
that, Ray's worker start-up and the compiled kernels' loading make the first shards slow, and
an average from the start would overstate the remaining time several times over.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Callbacks for :func:`distbench.engine.driver.run_plan` (``on_stage``, ``on_start``,
    ``progress``) that draw the progress line.

    Args:
        unit: What the units are, e.g. "trials".
        planned: Shards in the plan (to say how many were already committed).
        clock: Time source (seconds); for tests.
    """

    def __init__(self, unit: str, planned: int, clock=time.monotonic) -> None:
        self.unit = unit
        self.planned = planned
        self.clock = clock
        self.bar: Any = None
        self.shards = 0
        self.done = self.calls = self.failed = self.todo_units = self.todo_shards = 0
        self._first: tuple[float, int] | None = None  # (time, units) when the first shard ended

    @staticmethod
    def stage(message: str) -> None:
        click.echo(f"{message} ...", err=True)

    def start(self, shards: int, units: int) -> None:
        committed = self.planned - shards
        if shards == 0:
            click.echo("all shards already committed; nothing to run", err=True)
            return
        note = f" ({committed} already committed)" if committed else ""
        click.echo(f"running {shards} shard(s), {units:,} {self.unit}{note}", err=True)
        self.todo_units, self.todo_shards = units, shards
        self.bar = click.progressbar(length=units, label=self.unit, file=sys.stderr,
                                     show_eta=False, show_pos=True,
                                     item_show_func=lambda _: self.suffix())
        self.bar.__enter__()

    def update(self, shard: Any, stats: dict[str, int]) -> None:
        self.shards += 1
        self.done += shard.num_units
        self.calls += stats.get("calls", 0)
        self.failed += stats.get("call_failed", 0)
        if self._first is None:
            self._first = (self.clock(), self.done)
        if self.bar is not None:
            self.bar.update(shard.num_units, shard)

    def eta(self) -> float | None:
        """Seconds left at the rate since the first shard finished (None: not known yet)."""
        if self._first is None or self.done >= self.todo_units:
            return None if self.done < self.todo_units else 0.0
        since, units = self._first
        elapsed = self.clock() - since
        if self.done <= units or elapsed <= 0:
            return None
        return (self.todo_units - self.done) * elapsed / (self.done - units)

    def suffix(self) -> str:
        eta = self.eta()
        return (f"shards {self.shards}/{self.todo_shards}  calls {self.calls:,}  "
                f"failed {self.failed:,}  ETA {'--:--' if eta is None else _clock(eta)}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
