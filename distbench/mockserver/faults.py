"""What the mock server injects: its configuration, the seeded fault draws, the rate limit.

Order of checks for a ``/v1`` call: API key (401), then the rate limit (429), then the injected
fault, then the answer. Injected faults are drawn per call from the calls' arrival order (only
calls that pass the key and rate checks are numbered), seeded by ``ServerConfig.seed``, and
stratified: call ``n`` falls in block ``n // 100`` and gets a uniform ``u = (rank + jitter) /
100`` where ``rank`` is its place in a seeded permutation of the block, so every complete
block of 100 calls holds exactly ``100 * f`` faults of a kind whose fraction ``f`` is a whole
percentage (other fractions are met on average). The fault bands lie on ``[0, 1)`` in the order
``fail_429, fail_500, fail_503, hang, truncate, non_json, garbage, hostile``; :func:`fault_plan`
gives the kinds the first calls will get.

A ``hostile`` call gets the body named by ``ServerConfig.hostile_body`` (:data:`HOSTILE_BODIES`):
an otherwise valid answer with an odd field (token counts of 1e30, NaN, Infinity, int64-max,
negative, strings, lists; ``usage`` as a list or a string; a lone surrogate or HTML in the
text; a
choice ``index`` that is not an integer, repeated or out of range), a body that drips a byte a
second after its headers, a body of 1 GB, or a 429 whose ``Retry-After`` is 999999999, ``inf``
or a date in 2099.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["BATCH_FAULTS", "FAULT_KINDS", "HOSTILE_BODIES", "USAGE_MODES", "FaultDraws",
           "ServerConfig", "TokenBucket", "fault_plan", "misreport_usage"]

FAULT_KINDS = ("fail_429", "fail_500", "fail_503", "hang", "truncate", "non_json", "garbage",
               "hostile")
HOSTILE_USAGE: dict[str, object] = {
    "usage_1e30": {"prompt_tokens": 1e30, "completion_tokens": 3},
    "usage_nan": {"prompt_tokens": float("nan"), "completion_tokens": 3},
    "usage_inf": {"prompt_tokens": 3, "completion_tokens": float("inf")},
    "usage_int64_max": {"prompt_tokens": 2**63 - 1, "completion_tokens": 2**63 - 1},
    "usage_negative": {"prompt_tokens": -40, "completion_tokens": -3},
    "usage_string_count": {"prompt_tokens": "forty", "completion_tokens": "3"},
    "usage_list_count": {"prompt_tokens": [40], "completion_tokens": 3},
    "usage_list": [40, 3],
    "usage_string": "40 prompt tokens",
}
"""The ``usage`` of each odd-usage hostile body (the answer itself is a valid one)."""
HOSTILE_HTML = "<img src=x onerror=alert(1)>"
"""What the ``html`` hostile body puts before the answer's text."""
HOSTILE_BODIES = (*HOSTILE_USAGE, "surrogate", "html", "index_string", "index_duplicate",
                  "index_range", "drip", "huge", "retry_after_huge", "retry_after_inf",
                  "retry_after_2099")
"""The bodies a ``hostile`` call can get (``ServerConfig.hostile_body``)."""
HUGE_BODY_BYTES = 1 << 30
"""Length of the ``huge`` body (1 GB), streamed without a Content-Length."""
_BLOCK = 100
N_MODES = ("serve", "ignore", "reject")
USAGE_MODES = ("honest", "zero", "null", "absent", "negative", "huge")
"""What ``usage`` every answer (live and batch) reports (``ServerConfig.usage``): the true
counts, 0, null counts, no ``usage`` at all, negative counts, or 99,999,999 each. The server's
own bill (``stats()["usage"]``, the batches' ``usage``) always counts the true tokens."""
BATCH_FAULTS = ("create_lost", "lost", "failed", "never_ends", "download_500", "line_surrogate",
                "line_deep", "line_huge", "line_conflict", "line_repeat")
"""What ``ServerConfig.batch_faults`` can do to a faulty batch: ``create_lost`` answers its
create with 502 although it was created; ``lost`` answers 404 to every ``GET`` of it (the
provider forgot it); ``failed`` ends it ``failed`` with an ``errors`` list and no output;
``never_ends`` keeps it ``in_progress`` past its ``expires_at`` (``batch_window`` seconds
after its creation) until it is cancelled; ``download_500`` answers 500 to the first two
downloads of its results; the ``line_*`` faults change its first result line: a lone
surrogate in the text, nesting 100,000 deep, a 10 MB text, a second line for the same request
with another text (``conflict``) or the same line twice (``repeat``)."""


def misreport_usage(payload: dict, mode: str) -> dict:
    """``payload`` (an OpenAI-shaped answer) with its ``usage`` as ``mode`` says
    (:data:`USAGE_MODES`)."""
    if mode == "honest":
        return payload
    out = dict(payload)
    if mode == "absent":
        out.pop("usage", None)
        return out
    value = {"zero": 0, "null": None, "negative": -5, "huge": 99_999_999}[mode]
    out["usage"] = {"prompt_tokens": value, "completion_tokens": value,
                    "total_tokens": None if value is None else 2 * value}
    return out


@dataclass(frozen=True)
class ServerConfig:
    """How the server listens and which faults it injects.

    Attributes:
        host: Address to bind (loopback by default).
        port: TCP port; 0 picks a free one (read it from ``RunningServer.url``).
        seed: Seed of the fault draws and of the mock's answers to calls without a seed.
        latency_ms: Delay added to every ``/v1`` response.
        rate_limit_rps: Token bucket of this many calls per second, burst ``max(1, R / 10)``;
            calls over the limit get 429 with ``Retry-After`` (whole seconds, rounded up) and
            ``retry-after-ms``. None: no limit.
        fail_429: Fraction of calls answered 429 with ``Retry-After: <retry_after>``.
        retry_after: Seconds announced by injected 429s.
        fail_500: Fraction answered 500.
        fail_503: Fraction answered 503.
        hang: Fraction that never get an answer: the server waits ``hang_seconds`` (or until
            it stops), then drops the connection.
        hang_seconds: How long a hung call is held.
        truncate: Fraction answered 200 with a JSON body cut in half.
        non_json: Fraction answered 200 with an HTML page.
        garbage: Fraction answered 200 with valid JSON whose text is nonsense.
        hostile: Fraction answered with the hostile body ``hostile_body``.
        hostile_body: Which (one of :data:`HOSTILE_BODIES`; see the module docstring).
        api_key: When set, ``/v1`` calls need ``Authorization: Bearer <api_key>`` (else 401).
        n_mode: What the server does with a request's ``n`` (several choices): ``"serve"``
            answers ``n`` choices (the OpenAI API, vLLM), ``"ignore"`` answers one
            (llama-cpp-python's server), ``"reject"`` answers 400 "Only one completion choice
            is allowed" (llama.cpp's llama-server).
        batch_dir: Folder of the Batch API's files and batches (kept over restarts; None: a
            new temporary folder), see :mod:`distbench.mockserver.batches`.
        batch_delay: Seconds from a batch's creation to its completion.
        batch_fail: Fraction of a faulty batch's lines sent to its error file.
        batch_expire: Faulty batches expire with half their lines done.
        batch_faulty: How many of the first batches are faulty (None: all).
        batch_faults: Further faults of the faulty batches (:data:`BATCH_FAULTS`).
        batch_window: Seconds from a batch's creation to its ``expires_at``.
        usage: What ``usage`` the answers report (:data:`USAGE_MODES`).
    """

    host: str = "127.0.0.1"
    port: int = 0
    seed: int = 0
    latency_ms: float = 0.0
    rate_limit_rps: float | None = None
    fail_429: float = 0.0
    retry_after: float = 1.0
    fail_500: float = 0.0
    fail_503: float = 0.0
    hang: float = 0.0
    hang_seconds: float = 3600.0
    truncate: float = 0.0
    non_json: float = 0.0
    garbage: float = 0.0
    hostile: float = 0.0
    hostile_body: str = "usage_1e30"
    api_key: str | None = field(default=None, repr=False)
    n_mode: str = "serve"
    batch_dir: str | None = None
    batch_delay: float = 0.0
    batch_fail: float = 0.0
    batch_expire: bool = False
    batch_faulty: int | None = None
    batch_faults: tuple[str, ...] = ()
    batch_window: float = 86400.0
    usage: str = "honest"

    def __post_init__(self) -> None:
        if not 0.0 <= self.batch_fail <= 1.0:
            raise ValueError(f"batch_fail must be a fraction between 0 and 1, got "
                             f"{self.batch_fail}")
        if self.batch_delay < 0:
            raise ValueError(f"batch_delay must be >= 0, got {self.batch_delay}")
        if self.hostile_body not in HOSTILE_BODIES:
            raise ValueError(f"hostile_body must be one of {', '.join(HOSTILE_BODIES)}, "
                             f"got {self.hostile_body!r}")
        unknown = [f for f in self.batch_faults if f not in BATCH_FAULTS]
        if unknown:
            raise ValueError(f"batch_faults: unknown {', '.join(unknown)} (one of "
                             f"{', '.join(BATCH_FAULTS)})")
        if self.usage not in USAGE_MODES:
            raise ValueError(f"usage must be one of {', '.join(USAGE_MODES)}, "
                             f"got {self.usage!r}")
        if self.n_mode not in N_MODES:
            raise ValueError(f"n_mode must be one of {', '.join(N_MODES)}, got {self.n_mode!r}")
        for name in FAULT_KINDS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction between 0 and 1, got {value}")
        total = sum(getattr(self, name) for name in FAULT_KINDS)
        if total > 1.0 + 1e-9:
            raise ValueError(f"the fault fractions add up to {total:g}, more than 1")
        for name in ("latency_ms", "retry_after", "hang_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.rate_limit_rps is not None and self.rate_limit_rps <= 0:
            raise ValueError(f"rate_limit_rps must be > 0, got {self.rate_limit_rps}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {self.port}")

    def fault_bands(self) -> list[tuple[str, float]]:
        """(kind, upper end) of each fault band on [0, 1), for the kinds in use."""
        bands, edge = [], 0.0
        for name in FAULT_KINDS:
            fraction = getattr(self, name)
            if fraction > 0:
                edge = round(edge + fraction, 12)
                bands.append((name, edge))
        return bands


class FaultDraws:
    """Stratified seeded uniforms by call number (see the module docstring)."""

    def __init__(self, config: ServerConfig) -> None:
        self.seed = config.seed
        self.bands = config.fault_bands()
        self._blocks: dict[int, np.ndarray] = {}

    def _block(self, index: int) -> np.ndarray:
        block = self._blocks.get(index)
        if block is None:
            gen = np.random.default_rng(np.random.SeedSequence([self.seed, index, 0xFA17]))
            ranks = gen.permutation(_BLOCK)
            block = (ranks + gen.random(_BLOCK)) / _BLOCK
            if len(self._blocks) > 8:
                self._blocks.clear()
            self._blocks[index] = block
        return block

    def kind(self, number: int) -> str | None:
        """The fault of call ``number`` (0-based), None for a normal answer."""
        if not self.bands:
            return None
        u = float(self._block(number // _BLOCK)[number % _BLOCK])
        for name, edge in self.bands:
            if u < edge:
                return name
        return None


def fault_plan(config: ServerConfig, count: int) -> list[str | None]:
    """The fault kinds (None: answered) the first ``count`` numbered calls get."""
    draws = FaultDraws(config)
    return [draws.kind(n) for n in range(count)]


class TokenBucket:
    """The server-wide rate limit: ``rate`` calls per second, burst ``max(1, rate / 10)``."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate / 10.0)
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0.0 when a token was taken, else the seconds until one is available."""
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return 0.0
            return (1.0 - self.tokens) / self.rate
