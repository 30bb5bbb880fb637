"""Rate limits and retry policy: the one place that decides when to send and when to retry.

* :class:`RateLimiter` paces requests with two token buckets (requests per minute and tokens
  per minute) and bounds concurrent requests with a semaphore. A 429 answer lowers the request
  rate (multiplicatively, to at most a tenth of the configured rate); successes restore it
  slowly.
* :func:`classify_status` says what an HTTP status means for a call; :func:`retry_after_seconds`
  reads ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date); :func:`backoff_delay`
  is exponential backoff with jitter.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

RETRYABLE_STATUSES = frozenset({408, 409, 429})
AUTH_STATUSES = frozenset({401, 403})


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
    """

    rpm: float | None = 60.0
    tpm: float | None = None
    max_concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 30.0

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


def classify_status(status: int) -> str:
    """``"ok"``, ``"auth"`` (stop the run), ``"retry"`` or ``"fail"`` (fail this call now)."""
    if 200 <= status < 300:
        return "ok"
    if status in AUTH_STATUSES:
        return "auth"
    if status in RETRYABLE_STATUSES or status >= 500:
        return "retry"
    return "fail"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Delay before retry number ``attempt`` (1-based): half of ``base * 2**(attempt-1)``
    (capped) plus a uniform jitter of up to the other half."""
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


class _Bucket:
    """A token bucket refilled continuously at ``rate`` per second up to ``capacity``.

    Reservations may take the balance below zero; the reserver then waits until the balance is
    back at zero. Waiting on a debt (rather than for a full token) keeps the long-run rate exact:
    when a sleep overshoots, the extra time is credited to the next reservation instead of
    being lost to the capacity cap.
    """

    def __init__(self, rate: float, capacity: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def reserve(self, amount: float) -> float:
        """Takes ``amount`` (at most the capacity) and returns the seconds to wait before use."""
        self._refill()
        self.tokens -= min(amount, self.capacity)
        return max(0.0, -self.tokens / self.rate)


class RateLimiter:
    """Paces requests for one endpoint; see the module docstring.

    Args:
        limits: The endpoint's limits.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._configured_rps = limits.rpm / 60.0 if limits.rpm else None
        # Capacity 1: strict pacing, so a server-side limit of the same rate is never exceeded
        # by a burst.
        self._requests = _Bucket(self._configured_rps, 1.0) if self._configured_rps else None
        tps = limits.tpm / 60.0 if limits.tpm else None
        self._tokens = _Bucket(tps, max(tps * 5.0, 1.0)) if tps else None
        self._lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(limits.max_concurrency)
        self.throttled = 0

    @property
    def current_rps(self) -> float | None:
        """The request rate in force now (lower than configured after 429s)."""
        return self._requests.rate if self._requests else None

    async def acquire(self, tokens: float = 0.0) -> None:
        """Waits until one request of about ``tokens`` tokens may be sent.

        Reservations are made in arrival order under a lock, then each caller sleeps off its
        own wait, so callers are served first come, first served.
        """
        wait = 0.0
        async with self._lock:
            if self._requests:
                wait = max(wait, self._requests.reserve(1.0))
            if self._tokens and tokens > 0:
                wait = max(wait, self._tokens.reserve(tokens))
        if wait > 0:
            await asyncio.sleep(wait)

    def slot(self) -> asyncio.Semaphore:
        """The concurrency bound: ``async with limiter.slot(): ...`` around each attempt."""
        return self._slots

    def on_throttled(self) -> None:
        """A 429 arrived: slow down to 80% of the current rate (not below 10% of configured)."""
        self.throttled += 1
        if self._requests and self._configured_rps:
            self._requests.rate = max(self._configured_rps * 0.1, self._requests.rate * 0.8)

    def on_success(self) -> None:
        """A call succeeded: win back 2% of the rate, up to the configured rate."""
        if self._requests and self._configured_rps:
            self._requests.rate = min(self._configured_rps, self._requests.rate * 1.02)
