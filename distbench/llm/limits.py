"""Rate limits and retry policy: the one place that decides when to send and when to retry.

* :class:`RateLimiter` paces requests with two token buckets (requests per minute and tokens
  per minute) and bounds concurrent requests with a resizable semaphore, and adapts all three
  to 429 answers (AIMD, see below); :meth:`RateLimiter.state` says what it allows now.
* :func:`classify_status` says what an HTTP status means for a call; :func:`retry_after_seconds`
  reads ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date); :func:`backoff_delay`
  is exponential backoff with jitter.

**Adaptive limiting.** The limiter runs at a *level* between ``FLOOR`` (0.1) and 1 of the
configured limits: request rate ``level * rpm``, token rate ``level * tpm``, concurrency
``ceil(level * max_concurrency)`` (at least 1). It never allows more than configured.

* *Multiplicative decrease*: a 429 multiplies the level by ``DECREASE`` (0.95), once per
  episode: a 429 for a request sent before the last cut says the old level was too high, which
  the cut already answered, so it does not cut again (TCP's one decrease per window; inspect_ai
  debounces its connection cuts the same way).
* *Additive increase*: each success of a request sent after the last cut adds ``INCREASE``
  (0.025) to the level, up to 1. Between two cuts come about ``(1 - p) / p`` such successes when
  a share ``p`` of requests is answered 429, so the level stays near 1 while ``p`` is below
  about a third and sinks when it is above. 429s that do not come from our pace (a server
  refusing a share of requests at random) then slow a run little, while a server whose real
  limit is below the configured one pulls the level down until most requests pass (at a real
  limit of half the configured rate the level settles near 0.8 with about 40% of requests
  refused, which still delivers the server's whole rate). A cut is won back by two successes. Small
  steps keep the level close to 1 under random 429s; the floor is ``FLOOR`` (0.1).
* *No repricing*: the buckets are kept as schedules (:class:`_Pacer`): a reservation's send
  time is fixed when it is made, so a cut prices only later reservations. (A token count
  repaid at the current rate would re-charge debt run up at the old rate at the new, slower
  one, so one cut to the floor turned a queue of a few seconds into minutes.) The rate bucket
  is reserved inside a concurrency slot, so at most ``max_concurrency`` reservations are
  ahead of a cut.
* *Never above the configured rate*: besides the schedule, no two sends are closer than
  ``60 / rpm`` seconds, even after a sleep overshot (a schedule alone would send the next
  request early to make up for it).
* *Retry-After*: the caller sleeps the announced time before the throttled request's retry
  (:meth:`distbench.llm.http.OpenAICompatibleBackend._call`); other requests go on at the
  lowered level. The announced time is untrusted: one that is not a finite number, or that
  is longer than ``Limits.retry_after_cap`` (:data:`RETRY_AFTER_CAP_S`, 60 s, by default),
  waits the cap (``999999999``, ``inf`` or a date in 2099 would hold a run for ever).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import email.utils
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

RETRYABLE_STATUSES = frozenset({408, 409, 429})
RETRY_AFTER_CAP_S = 60.0
"""Longest wait a ``Retry-After`` obtains by default (the ``retry_after_cap`` option)."""
AUTH_STATUSES = frozenset({401, 403})

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Limits:
    """Limits of one endpoint.

    Attributes:
        rpm: Requests per minute (None: unlimited).
        tpm: Tokens per minute, prompt + completion, estimated before the call (None: unlimited).
        max_concurrency: Requests in flight at once.
        timeout: Seconds before one attempt is abandoned.
        max_retries: Retries after the first attempt (so at most ``max_retries + 1`` attempts).
        backoff_base: First backoff delay in seconds.
        backoff_cap: Largest backoff delay in seconds.
        retry_after_cap: Longest wait a server's ``Retry-After`` obtains, in seconds.
    """

    rpm: float | None = 60.0
    tpm: float | None = None
    max_concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    retry_after_cap: float = RETRY_AFTER_CAP_S

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if not self.retry_after_cap >= 0:
            raise ValueError("retry_after_cap must be >= 0")


def classify_status(status: int) -> str:
    """``"ok"``, ``"auth"`` (stop the run), ``"retry"`` or ``"fail"`` (fail this call now)."""
    if 200 <= status < 300:
        return "ok"
    if status in AUTH_STATUSES:
        return "auth"
    if status in RETRYABLE_STATUSES or status >= 500:
        return "retry"
    return "fail"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None,
                        cap: float = RETRY_AFTER_CAP_S) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After`` (a
    number of seconds or an HTTP date), at most ``cap``: an infinite or longer value waits
    ``cap`` (logged); None when neither header is readable (``nan`` is not a number of seconds:
    the call backs off as it would without the header)."""
    wait = _announced_wait(headers, time.time() if now is None else now)
    if wait is None:
        return None
    if not wait <= cap:  # also NaN
        log.log(logging.DEBUG if _CAPPED else logging.WARNING,
                "the server asked to wait %s s before retrying: waiting %g s (the cap)",
                f"{wait:.6g}", cap)
        _CAPPED.append(wait)
        del _CAPPED[1:]
        return cap
    return max(0.0, wait)


_CAPPED: list[float] = []
"""Non-empty once a wait was capped in this process (the warning is given once)."""


def _announced_wait(headers: Mapping[str, str], now: float) -> float | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        wait = _seconds(ms)
        if wait is not None:
            return wait / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    wait = _seconds(value)
    if wait is not None:
        return wait
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if when is None:
        return None
    try:
        return when.timestamp() - now
    except (OverflowError, ValueError, OSError):
        return math.inf


def _seconds(text: str) -> float | None:
    """``text`` as a number (None: not one, or NaN)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Delay before retry number ``attempt`` (1-based): half of ``base * 2**(attempt-1)``
    (capped) plus a uniform jitter of up to the other half."""
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


class _Pacer:
    """A token bucket kept as a schedule (GCRA): ``tat`` is the time at which every reservation
    made so far is paid for, each reservation of ``amount`` moving it on by ``amount / rate``
    at the rate in force when it is made.

    A reservation's send time is fixed when it is made, so changing ``rate`` reprices nothing
    that was reserved before: debt run up at the old rate is repaid at the old rate, and only
    later reservations pay the new one. Up to ``capacity`` tokens may go at once (burst).
    """

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.tat = now

    def reserve(self, amount: float, now: float) -> float:
        """Takes ``amount`` (at most the capacity) and returns the time it may be used."""
        amount = min(amount, self.capacity)
        self.tat = max(self.tat, now) + amount / self.rate
        return max(now, self.tat - self.capacity / self.rate)


class _Slots:
    """A first-come-first-served semaphore whose number of slots can change while in use.

    Lowering ``limit`` below the slots in use takes none back: fewer are handed out until the
    count in use is under the new limit.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.in_use = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def limit(self) -> int:
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        self._limit = value
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self._limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_use += 1
                waiter.set_result(None)

    async def __aenter__(self) -> None:
        if not self._waiters and self.in_use < self._limit:
            self.in_use += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # granted, then cancelled before use: hand it on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_use -= 1
        self._wake()


@dataclass(frozen=True, slots=True)
class LimiterState:
    """What a limiter allows now, beside what it was configured to allow.

    Attributes:
        level: The fraction of the configured limits in force (1.0: not throttled).
        rps: Requests per second allowed now (None: no request limit).
        configured_rps: Requests per second configured (``rpm / 60``).
        concurrency: Requests allowed in flight now.
        configured_concurrency: ``max_concurrency``.
        in_flight: Requests holding a slot now.
        throttled: 429 answers seen so far.
    """

    level: float
    rps: float | None
    configured_rps: float | None
    concurrency: int
    configured_concurrency: int
    in_flight: int
    throttled: int

    def describe(self) -> str:
        """``"throttled: 12 req/s of 20"`` while below the configured limits, else ``""``."""
        if self.level >= 1.0:
            return ""
        if self.rps is not None and self.configured_rps is not None:
            return f"throttled: {self.rps:.3g} req/s of {self.configured_rps:.3g}"
        return f"throttled: {self.concurrency} in flight of {self.configured_concurrency}"


class RateLimiter:
    """Paces requests for one endpoint and adapts to 429s; see the module docstring.

    Args:
        limits: The endpoint's limits (the ceiling the limiter never exceeds).
        clock: Time source in seconds (monotonic); for tests.
        sleep: Async sleep; for tests.
    """

    DECREASE = 0.95
    INCREASE = 0.025
    FLOOR = 0.1

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        now = clock()
        self._configured_rps = limits.rpm / 60.0 if limits.rpm else None
        self._configured_tps = limits.tpm / 60.0 if limits.tpm else None
        # Capacity 1: strict pacing, so a server-side limit of the same rate is never exceeded
        # by a burst.
        rps, tps = self._configured_rps, self._configured_tps
        self._requests = _Pacer(rps, 1.0, now) if rps else None
        self._tokens = _Pacer(tps, max(tps * 5.0, 1.0), now) if tps else None
        self._slots = _Slots(limits.max_concurrency)
        self._min_gap = 1.0 / rps if rps else 0.0
        self._last_send = -math.inf
        self.level = 1.0
        self._cut_at = -math.inf
        self.throttled = 0

    @property
    def current_rps(self) -> float | None:
        """The request rate in force now (lower than configured after 429s)."""
        return self._requests.rate if self._requests else None

    def state(self) -> LimiterState:
        """The limits in force now and the configured ones."""
        return LimiterState(
            level=self.level, rps=self.current_rps, configured_rps=self._configured_rps,
            concurrency=self._slots.limit, configured_concurrency=self.limits.max_concurrency,
            in_flight=self._slots.in_use, throttled=self.throttled,
        )

    async def acquire(self, tokens: float = 0.0) -> float:
        """Waits until one request of about ``tokens`` tokens may be sent; returns the time
        (on the limiter's clock) it may be sent, to hand back to :meth:`on_throttled` or
        :meth:`on_success` with its answer.

        Send times are fixed at reservation, in call order, so callers are served first come,
        first served.
        """
        now = self._clock()
        at = now
        if self._requests:
            at = max(at, self._requests.reserve(1.0, now))
        if self._tokens and tokens > 0:
            at = max(at, self._tokens.reserve(tokens, now))
        if at > now:
            await self._sleep(at - now)
        if self._min_gap:
            # Never two sends closer than the configured rate allows, even when a sleep
            # overshot and the next reservation's time has come already (the schedule credits
            # a late send to the next one). Checked against the last actual send, and claimed
            # with no await between the check and the claim.
            while (wait := self._last_send + self._min_gap - self._clock()) > 0:
                await self._sleep(wait)
            at = max(at, self._clock())
            self._last_send = at
        return at

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The concurrency bound: ``async with limiter.slot(): ...`` around each attempt."""
        return self._slots

    def on_throttled(self, sent_at: float | None = None) -> bool:
        """A 429 arrived for a request sent at ``sent_at`` (None: unknown, counts as new).

        Returns:
            Whether the limits were cut (False for a 429 of a request sent before the last cut).
        """
        self.throttled += 1
        if sent_at is not None and sent_at < self._cut_at:
            return False
        self._cut_at = self._clock()
        self._set_level(max(self.FLOOR, self.level * self.DECREASE))
        return True

    def on_success(self, sent_at: float | None = None) -> None:
        """A request sent at ``sent_at`` succeeded: if it was sent after the last cut, win back
        ``INCREASE`` of the configured limits."""
        if self.level >= 1.0 or (sent_at is not None and sent_at < self._cut_at):
            return
        self._set_level(min(1.0, self.level + self.INCREASE))

    def _set_level(self, level: float) -> None:
        old = self.level
        self.level = level
        if self._requests and self._configured_rps:
            self._requests.rate = self._configured_rps * level
        if self._tokens and self._configured_tps:
            self._tokens.rate = self._configured_tps * level
        self._slots.limit = max(1, math.ceil(self.limits.max_concurrency * level - 1e-9))
        if (old >= 1.0) != (level >= 1.0):
            log.info("rate limiter %s: level %.2f of the configured limits",
                     "throttled" if level < 1.0 else "recovered", level)
