"""The adaptive rate limiter on a fake clock: no repricing of old debt after a cut, recovery to
the configured limits, never above them, Retry-After honoured."""

from __future__ import annotations

import asyncio
import bisect
import heapq
import random

import httpx
import pytest

from distbench.llm.base import Request
from distbench.llm.http import OpenAICompatibleBackend
from distbench.llm.limits import Limits, RateLimiter
from distbench.llm.registry import make_spec


class FakeTime:
    """A clock and an async sleep that moves it (plus an optional overshoot per sleep)."""

    def __init__(self, overshoots: list[float] | None = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._overshoots = overshoots or [0.0]

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds + self._overshoots[len(self.sleeps) % len(self._overshoots)]


def _limiter(ft: FakeTime, **limits) -> RateLimiter:
    return RateLimiter(Limits(**limits), clock=ft.clock, sleep=ft.sleep)


class VirtualTime:
    """A virtual clock for concurrent sleepers: ``sleep`` parks the caller until ``run``
    advances the clock to its wake-up time (plus an overshoot on every other sleep)."""

    def __init__(self, overshoot: float) -> None:
        self.now = 0.0
        self.overshoot = overshoot
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._count = 0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self._count += 1
        late = self.overshoot if self._count % 2 else 0.0
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self.now + seconds + late, self._count, future))
        await future

    async def run(self, coros) -> list:
        tasks = [asyncio.create_task(c) for c in coros]
        while True:
            for _ in range(20):  # let every task run until it sleeps or ends
                await asyncio.sleep(0)
            if not self._timers:
                break
            when, _, future = heapq.heappop(self._timers)
            self.now = max(self.now, when)
            future.set_result(None)
        return [t.result() for t in tasks]


def _max_in_window(times: list[float], window: float = 1.0) -> int:
    ordered = sorted(times)
    return max(bisect.bisect_left(ordered, t + window - 1e-9) - i for i, t in enumerate(ordered))


def test_a_cut_does_not_reprice_reservations_made_at_the_old_rate():
    vt = VirtualTime(overshoot=0.0)
    limiter = RateLimiter(Limits(rpm=600, max_concurrency=64), clock=vt.clock, sleep=vt.sleep)

    async def queued() -> float:
        return await limiter.acquire()

    async def storm_then_two() -> tuple[float, float]:
        # At t = 0, with 20 requests reserved (a queue of 2 s at 10/s), a storm of 429s cuts
        # the limiter to its floor, a tenth of the rate.
        for _ in range(50):
            limiter.on_throttled()
        assert limiter.current_rps == pytest.approx(1.0)
        return await limiter.acquire(), await limiter.acquire()

    *times, (nxt, after) = asyncio.run(vt.run([*(queued() for _ in range(20)),
                                               storm_then_two()]))
    assert times == pytest.approx([0.1 * i for i in range(20)])
    # The next request waits for the debt run up at 10/s, repaid at 10/s (2 s), not at the
    # new rate of 1/s (20 s); only its own interval and later ones are priced at 1/s.
    assert nxt == pytest.approx(2.0)
    assert after == pytest.approx(3.0)


def test_429s_of_requests_sent_before_a_cut_do_not_cut_again():
    ft = FakeTime()
    limiter = _limiter(ft, rpm=600, max_concurrency=10)
    sent = [asyncio.run(limiter.acquire()) for _ in range(10)]  # sent at 0.0 .. 0.9
    ft.now = 1.0
    assert limiter.on_throttled(sent[0]) is True
    level = limiter.level
    assert level < 1.0
    for t in sent[1:]:  # the same episode: sent at the old level, answered after the cut
        assert limiter.on_throttled(t) is False
    assert limiter.level == level and limiter.throttled == 10
    # Successes of requests sent before the cut say nothing about the new level either.
    for t in sent:
        limiter.on_success(t)
    assert limiter.level == level
    ft.now = 1.5
    assert limiter.on_throttled(1.2) is True  # sent after the cut: a new episode
    assert limiter.level < level


def test_recovers_additively_to_exactly_the_configured_limits():
    ft = FakeTime()
    limiter = _limiter(ft, rpm=1200, tpm=60_000, max_concurrency=8)
    for _ in range(100):
        limiter.on_throttled()
    low = limiter.state()
    assert low.level == pytest.approx(RateLimiter.FLOOR)
    assert low.rps == pytest.approx(2.0) and low.configured_rps == pytest.approx(20.0)
    assert low.concurrency == 1 and low.configured_concurrency == 8
    assert low.describe() == "throttled: 2 req/s of 20"
    assert limiter._tokens.rate == pytest.approx(100.0)  # tokens per second follow the level
    ft.now = 10.0
    levels = []
    for _ in range(100):
        limiter.on_success(ft.now)
        levels.append(limiter.level)
    steps = [round(b - a, 9) for a, b in zip(levels, levels[1:], strict=False) if b < 1.0]
    assert set(steps) == {RateLimiter.INCREASE}  # additive
    full = limiter.state()
    assert full.level == 1.0 and full.rps == pytest.approx(20.0) and full.concurrency == 8
    assert limiter._tokens.rate == pytest.approx(1000.0)
    assert full.describe() == ""


def test_never_above_the_configured_limits_whatever_the_sequence():
    rng = random.Random(3)
    ft = FakeTime()
    limiter = _limiter(ft, rpm=600, max_concurrency=4)
    for _ in range(2000):
        ft.now += rng.random()
        if rng.random() < 0.3:
            limiter.on_throttled(ft.now - rng.random())
        else:
            limiter.on_success(ft.now - rng.random())
        state = limiter.state()
        assert state.rps <= 10.0 + 1e-12 and state.concurrency <= 4
        assert state.rps >= 1.0 - 1e-12 and state.concurrency >= 1


def test_sends_stay_within_the_configured_rate_even_when_sleeps_overshoot():
    # Every other sleep wakes 30 ms late: the next reservation's time has then come already,
    # and sending it at once would put two requests 70 ms apart at a limit of 10/s.
    ft = FakeTime(overshoots=[0.03, 0.0])
    limiter = _limiter(ft, rpm=600)
    times = [asyncio.run(limiter.acquire()) for _ in range(200)]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.1 - 1e-9
    assert _max_in_window(times) <= 10


def test_concurrent_sends_stay_within_the_configured_rate_when_sleeps_overshoot():
    vt = VirtualTime(overshoot=0.03)
    limiter = RateLimiter(Limits(rpm=600, max_concurrency=8), clock=vt.clock, sleep=vt.sleep)

    async def send() -> float:
        async with limiter.slot():
            await limiter.acquire()
            return vt.now  # the time the request goes out

    times = asyncio.run(vt.run([send() for _ in range(60)]))
    gaps = [b - a for a, b in zip(sorted(times), sorted(times)[1:], strict=False)]
    assert min(gaps) >= 0.1 - 1e-9
    assert _max_in_window(times) <= 10
    assert max(times) <= 5.9 + 0.03 * 30 + 1e-9  # and no slower than the overshoots cost


def test_concurrency_follows_the_level_and_slots_are_first_come_first_served():
    ft = FakeTime()
    limiter = _limiter(ft, rpm=None, max_concurrency=4)

    async def run() -> list[tuple[int, int]]:
        entries: list[tuple[int, int]] = []  # (task, requests in flight when it entered)
        release = asyncio.Event()

        async def one(i: int) -> None:
            async with limiter.slot():
                entries.append((i, limiter.state().in_flight))
                await release.wait()

        tasks = [asyncio.create_task(one(i)) for i in range(8)]
        await asyncio.sleep(0)
        assert limiter.state().in_flight == 4
        for _ in range(100):
            limiter.on_throttled()  # down to the floor: one slot
        assert limiter.state().concurrency == 1
        release.set()
        await asyncio.gather(*tasks)
        return entries

    entries = asyncio.run(run())
    assert [i for i, _ in entries] == list(range(8))  # first come, first served
    assert [n for _, n in entries] == [1, 2, 3, 4, 1, 1, 1, 1]  # one at a time after the cut


def test_retry_after_is_honoured_for_the_throttled_request_and_the_limit_drops():
    script = iter([httpx.Response(429, headers={"Retry-After": "3"}),
                   httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})])
    seen: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return next(script)

    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:  # real for pacing, skipped for retries
        sleeps.append(seconds)
        await asyncio.sleep(seconds if seconds < 1.0 else 0.0)

    spec = make_spec("vllm", "m1", "chat", base_url="http://testserver", rpm=600, max_retries=3)
    backend = OpenAICompatibleBackend(spec, transport=httpx.MockTransport(handler),
                                      sleep=fake_sleep)

    async def run():
        [resp] = await backend.generate([Request(prompt="Pick.", seed=1, task="", max_tokens=4)])
        return resp, backend.limiter.state()

    resp, state = asyncio.run(run())
    assert resp.status == "ok" and resp.attempts == 2 and len(seen) == 2
    retry_waits = [s for s in sleeps if s >= 1.0]
    assert len(retry_waits) == 1 and 3.0 <= retry_waits[0] <= 3.0 * 1.1 + 0.01
    # The pacing waits are one interval at most (10/s, or the lowered rate): no repriced debt.
    assert all(s <= 1 / (10 * RateLimiter.FLOOR) for s in sleeps if s < 1.0)
    assert state.throttled == 1 and state.level < 1.0


def test_endpoint_stats_show_the_limits_in_force_through_the_wrappers():
    from distbench.llm.endpoint import CachingBackend, MeteredBackend, limiter_stats

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "0"})

    async def no_sleep(seconds: float) -> None:
        return None

    spec = make_spec("vllm", "m1", "chat", base_url="http://testserver", rpm=1200,
                     max_concurrency=8, max_retries=0)
    inner = OpenAICompatibleBackend(spec, transport=httpx.MockTransport(handler), sleep=no_sleep)
    backend = MeteredBackend(CachingBackend(inner, None), "key")
    assert limiter_stats(backend) == {}  # no limiter before the first call
    [resp] = asyncio.run(backend.generate([Request(prompt="Pick.", seed=1, task="",
                                                    max_tokens=4)]))
    assert resp.status == "failed"
    stats = limiter_stats(backend)
    assert stats == {"concurrency": 8, "concurrency_limit": 8, "throttled": 1,
                     "rate_rps": pytest.approx(20.0 * RateLimiter.DECREASE),
                     "rate_limit_rps": pytest.approx(20.0)}
