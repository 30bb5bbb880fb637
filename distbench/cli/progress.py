"""The progress line of ``run``, ``sweep run`` and ``fog tournament|study`` on stderr.

Units (trials, episodes, games) move when a shard commits; model calls move as they return
(the driver reads the endpoints' live counts a few times a second), so a run of one shard
shows its pace from the first call. Beside the answers, the line counts the answers asked for
and not yet back (``in flight``) and says what a model is doing while that shows in no count
(the endpoint's status: "loading smollm2-135m-instruct ...", "first call: evaluating the
prompt ..."). On a terminal the line is redrawn in place; elsewhere (CI, ``ray job`` logs,
``2> file``) a plain line is printed only when something changed (a count, the calls in
flight, the status): at most every 0.5 s in the first 5 s, every 2 s then, less often as the
run grows (at most every 30 s apart, never when nothing changed), and once at the end.

The ETA is absent until it can be estimated: it is the pace since the first progress was
seen (before that, Ray's worker start-up, a model's loading and its cold first call make the
start slow, and an average from the start would overstate the remaining time several times
over), so it needs progress at two moments. It uses calls when the plan knows how many it
makes (or, for the multi-turn families whose episodes end when the players agree or fall, the
most it can make: every turn of every model seat, lowered as each shard commits to the calls it
made, so the ETA is an upper bound that tightens as episodes end), else units; when the calls go past the plan's count (follow-up calls it could not
count, such as logprob mode's readings after white space), the ETA follows the units from
then on, and shows nothing until they move rather than a figure the calls have outrun. It is estimated when a count moves and held between (so it does not climb
while a slow call is out), and it never grows: when the pace slows, the ETA holds until the
remaining work at the new pace falls below it.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Any, TextIO

import click


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Callbacks for :func:`distbench.engine.driver.run_plan` (``on_stage``, ``on_start``,
    ``progress``, ``on_calls``) that draw the progress line.

    Args:
        unit: What the units are, e.g. "trials".
        planned: Shards in the plan (to say how many were already committed).
        clock: Time source (seconds); for tests.
        expected_calls: Model calls the run will make, when the plan knows (for the ETA).
        shard_calls: Shard -> the model calls it makes at most (``RunPlan.shard_calls``): the
            ETA's count when ``expected_calls`` is None.
        ceiling_calls: The sum of ``shard_calls`` over the shards to run.
        stream: Where to write (default: stderr).
        tty: Redraw in place (default: whether ``stream`` is a terminal).
    """

    def __init__(self, unit: str, planned: int, clock=time.monotonic,
                 expected_calls: int | None = None, stream: TextIO | None = None,
                 tty: bool | None = None,
                 expected_tokens: tuple[int, int] | None = None,
                 expected_cost: float | None = None,
                 expected_requests: int | None = None,
                 shard_calls: Any = None, ceiling_calls: int | None = None) -> None:
        self.unit = unit
        self.shard_calls_of = shard_calls
        self.ceiling_calls = ceiling_calls or None
        self.expected_requests = expected_requests
        self.planned = planned
        self.clock = clock
        self.expected_calls = expected_calls
        self.expected_tokens = expected_tokens
        self.expected_cost = expected_cost
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.started = False
        self.shards = 0
        self.done = self.todo_units = self.todo_shards = 0
        self.shard_calls = self.shard_failed = 0  # from committed shards' stats
        self.live_calls = self.live_failed = 0  # from the endpoints, as calls return
        self.live_sent = 0  # answers asked of the endpoints (sent - calls: in flight)
        self.status = ""  # what the models are doing, when slow and in no count
        self.throttle = ""  # the rate limiter below its configured rate after 429s
        self._first_units: tuple[float, int] | None = None  # when the first shard ended
        self._first_calls: tuple[float, int] | None = None  # when calls were first seen
        self._last_calls: tuple[float, int] | None = None  # when the calls last moved
        self._eta: float | None = None  # as estimated when a count last moved
        self._outrun = False  # the calls went past the plan's count: the ETA follows the units
        self._t0 = clock()
        self._last_line = -1e18
        self._last_counts: tuple[Any, ...] | None = None
        self._lock = threading.Lock()
        self.budget: Any = None  # a distbench.engine.budget.Budget: its spend is shown
        self.execution = "live"
        self.batch_price = 0.5
        self.expected: Any = None  # a distbench.engine.estimate.Expected: the likely bill

    @property
    def bar(self) -> bool | None:
        """Whether a progress line is being drawn (None before ``start`` or with no work)."""
        return True if self.started else None

    @property
    def calls(self) -> int:
        return max(self.shard_calls, self.live_calls)

    @property
    def failed(self) -> int:
        return max(self.shard_failed, self.live_failed)

    def stage(self, message: str) -> None:
        click.echo(f"{message} ...", file=self.stream)

    def start(self, shards: int, units: int) -> None:
        committed = self.planned - shards
        if shards == 0:
            click.echo("all shards already committed; nothing to run", file=self.stream)
            return
        note = f" ({committed} already committed)" if committed else ""
        calls = ""
        if self.expected_calls:
            details = []  # in one parenthesis: samples, tokens, cost
            if self.expected_requests is not None:
                what = f"about {self.expected_requests:,} model requests"
                details.append(f"{self.expected_calls:,} samples")
            else:
                what = f"about {self.expected_calls:,} model calls"
            if self.expected_tokens:
                details.append(f"~{self.expected_tokens[0]:,} prompt tokens, at most "
                               f"{self.expected_tokens[1]:,} completion tokens")
                details.append(self._cost_text()
                               if self.expected_cost is not None else "no price given (--price)")
            calls = f", {what}" + (f" ({'; '.join(details)})" if details else "")
        elif self.ceiling_calls:
            calls = f", at most {self.ceiling_calls:,} model calls"
        click.echo(f"running {shards} shard(s), {units:,} {self.unit}{calls}{note}",
                   file=self.stream)
        self.todo_units, self.todo_shards = units, shards
        self._t0 = self.clock()
        self.started = True
        self._draw(force=True)

    def _cost_text(self) -> str:
        """The cost estimate: live and at the batch price, the one this run pays first."""
        live = f"${self.expected_cost:,.2f} live"
        batch = f"${self.expected_cost * self.batch_price:,.2f} at the batch price"
        likely = self.expected
        if likely is not None and likely.cost is not None:
            price = self.batch_price if self.execution == "batch" else 1.0
            where = " at the batch price" if self.execution == "batch" else ""
            sure = (f"at most {batch} ({live})" if self.execution == "batch"
                    else f"at most ${self.expected_cost:,.2f} ({batch}: --execution batch)")
            return (f"expected ~${likely.cost * price:,.2f}{where} with ~"
                    f"{likely.completion_tokens:,} completion tokens by "
                    f"{likely.source_text()}; {sure}")
        if self.execution == "batch":
            return f"at most {batch} ({live})"
        return f"at most ${self.expected_cost:,.2f} ({batch}: --execution batch)"

    def update(self, shard: Any, stats: dict[str, int]) -> None:
        """A shard was committed."""
        with self._lock:
            self.shards += 1
            self.done += shard.num_units
            self.shard_calls += stats.get("calls", 0)
            self.shard_failed += stats.get("call_failed", 0)
            if self.ceiling_calls and self.shard_calls_of is not None:
                # the shard's episodes ended: the turns they did not play are no longer ahead
                most = self.shard_calls_of(shard)
                self.ceiling_calls -= most - min(most, stats.get("calls", 0))
            if self._first_units is None:
                self._first_units = (self.clock(), self.done)
            self._estimate()
        self._draw()

    def live(self, counts: dict[str, Any]) -> None:
        """The model calls answered so far in this run (``calls``, ``failed``), the answers
        asked for (``sent``) and the endpoints' ``status``, live."""
        with self._lock:
            calls = counts.get("calls", 0)
            now = self.clock()
            moved = calls != self.live_calls
            if calls and self._first_calls is None:
                self._first_calls = (now, calls)
            self.live_calls, self.live_failed = calls, counts.get("failed", 0)
            self.live_sent = counts.get("sent", 0)
            self.status = counts.get("status") or ""
            if moved:
                self._last_calls = (now, calls)
                self._estimate()
            rate, limit = counts.get("rate_rps"), counts.get("rate_limit_rps")
            self.throttle = (f"  throttled: {rate:.3g} req/s of {limit:.3g}"
                             if rate is not None and limit and rate < 0.995 * limit else "")
        self._draw()

    @property
    def in_flight(self) -> int:
        """Answers asked of the endpoints and not back yet."""
        return max(0, self.live_sent - self.live_calls)

    def rate(self) -> float | None:
        """Calls per second from when calls were first seen to when they last moved (None:
        not known yet)."""
        if self._first_calls is None or self._last_calls is None:
            return None
        (since, first), (last, calls) = self._first_calls, self._last_calls
        elapsed = last - since
        return (calls - first) / elapsed if elapsed > 0 and calls > first else None

    def _estimate(self) -> None:
        """Estimates the ETA again (a count moved; the caller holds the lock): never above
        the last estimate."""
        if self.todo_units and self.done >= self.todo_units:
            self._eta = 0.0
            return
        estimate = None
        rate = self.rate()
        target = self.expected_calls or self.ceiling_calls
        # the plan's count reached is work done, not outrun: 0:00 until the shard commits
        outrun = bool(target) and self.live_calls > target  # type: ignore[operator]
        if target and rate and not outrun:
            estimate = max(0.0, target - self.live_calls) / rate
        elif self._first_units is not None:
            since, units = self._first_units
            elapsed = self.clock() - since
            if self.done > units and elapsed > 0:
                estimate = (self.todo_units - self.done) * elapsed / (self.done - units)
        if outrun and not self._outrun:
            # more calls than the plan announced (follow-up calls it could not count): its
            # count is no guide any more, and an ETA from it would say 0:00 while work is left
            self._outrun, self._eta = True, None
        if estimate is not None:
            self._eta = estimate if self._eta is None else min(self._eta, estimate)

    def eta(self) -> float | None:
        """Seconds left, as estimated when a count last moved (None: not known yet)."""
        return self._eta

    def suffix(self) -> str:
        eta = self.eta()
        rate = self.rate()
        pace = f"  {rate:.1f} calls/s" if rate else ""
        flight = f" ({self.in_flight:,} in flight)" if self.in_flight else ""
        status = f"  - {self.status}" if self.status else ""
        budget = self.budget.line() if self.budget is not None else ""
        return (f"shards {self.shards}/{self.todo_shards}  calls {self.calls:,}{flight}  "
                f"failed {self.failed:,}{pace}{self.throttle}{budget}"
                + ("" if eta is None else f"  ETA {_clock(eta)}") + status)

    def line(self) -> str:
        share = f" ({100 * self.done / self.todo_units:.0f}%)" if self.todo_units else ""
        return f"{self.unit} {self.done:,}/{self.todo_units:,}{share}  {self.suffix()}"

    def _interval(self) -> float:
        """Seconds between plain lines: 0.5 in the first 5 s (a short run still shows its
        pace), then 2, then a tenth of the time so far, at most 30."""
        elapsed = self.clock() - self._t0
        return 0.5 if elapsed < 5 else min(30.0, max(2.0, elapsed / 10))

    def _draw(self, force: bool = False) -> None:
        if not self.started:
            return
        with self._lock:
            now = self.clock()
            if self.tty:
                if force or now - self._last_line >= 0.1:
                    self._last_line = now
                    width = shutil.get_terminal_size().columns - 1  # a wrapped line stays
                    self.stream.write("\r" + self.line()[:max(20, width)] + "\x1b[K")
                    self.stream.flush()
            elif force or now - self._last_line >= self._interval():
                counts = (self.done, self.calls, self.failed, self.in_flight, self.status)
                if counts == self._last_counts:
                    return  # nothing changed: no line (Ray or a model still starting)
                self._last_line, self._last_counts = now, counts
                self.stream.write("progress: " + self.line() + "\n")
                self.stream.flush()

    def close(self) -> None:
        if self.started:
            self._draw(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()
            self.started = False


def _expected(plan: Any, run_dir: Any) -> Any:
    """The likely bill of the plan's shards not committed yet
    (:func:`distbench.engine.estimate.expected_of`), completion lengths taken from the earlier
    runs beside ``run_dir`` when they hold the same models; None without a per-shard hook."""
    from pathlib import Path

    from distbench.engine.estimate import expected_of, observed_completion
    from distbench.store.writer import committed_ids

    if getattr(plan, "shard_expected", None) is None or not plan.expected_calls:
        return None
    done = committed_ids(run_dir)
    observed = observed_completion(Path(run_dir).parent, plan.specs())
    return expected_of(plan, observed, [s for s in plan.shards if s.shard_id not in done])


def _ceiling(plan: Any, run_dir: Any) -> int | None:
    """The model calls the plan's shards not committed yet make at most
    (``RunPlan.shard_calls``), when the family can tell and gives no ``expected_calls``."""
    from distbench.store.writer import committed_ids

    hook = getattr(plan, "shard_calls", None)
    if hook is None or plan.expected_calls:
        return None
    done = committed_ids(run_dir)
    return sum(hook(s) for s in plan.shards if s.shard_id not in done) or None


def run_with_progress(plan: Any, run_dir: Any, **kwargs: Any) -> Any:
    """:func:`distbench.engine.driver.run_plan` with the progress line on stderr (every
    command that runs a plan uses it); ``max_cost`` and ``max_tokens_total`` make its budget
    (:func:`distbench.engine.budget.make_budget`), whose spend the line shows."""
    from distbench.engine.budget import make_budget
    from distbench.engine.driver import run_plan

    progress = Progress(plan.unit, planned=len(plan.shards), expected_calls=plan.expected_calls,
                        expected_tokens=plan.expected_tokens, expected_cost=plan.expected_cost,
                        expected_requests=plan.expected_requests,
                        shard_calls=getattr(plan, "shard_calls", None),
                        ceiling_calls=_ceiling(plan, run_dir))
    max_cost, max_tokens = kwargs.pop("max_cost", None), kwargs.pop("max_tokens_total", None)
    progress.budget = kwargs["budget"] = make_budget(
        plan, max_cost, max_tokens, kwargs.get("execution", "live"),
        kwargs.get("batch_price", 0.5))
    progress.execution = kwargs.get("execution", "live")
    progress.batch_price = kwargs.get("batch_price", 0.5)
    progress.expected = _expected(plan, run_dir)
    try:
        return run_plan(plan, run_dir, progress=progress.update, on_start=progress.start,
                        on_stage=progress.stage, on_calls=progress.live, **kwargs)
    finally:
        progress.close()
