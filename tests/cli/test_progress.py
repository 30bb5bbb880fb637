"""The progress line: counts, and an ETA from the rate after the first shard."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from distbench.cli.progress import Progress


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _shard(units: int) -> SimpleNamespace:
    return SimpleNamespace(num_units=units)


def test_the_eta_ignores_the_start_up_before_the_first_shard(capsys):
    clock = _Clock()
    p = Progress("trials", planned=10, clock=clock)
    p.start(8, 800)
    assert "running 8 shard(s), 800 trials (2 already committed)" in capsys.readouterr().err
    assert p.eta() is None and "ETA" not in p.suffix()  # absent until it can be estimated
    clock.now = 30.0  # Ray and the workers took 30 s to start: not the work's pace
    p.update(_shard(100), {"calls": 100, "call_failed": 3})
    assert p.eta() is None  # one point: no rate yet
    clock.now = 32.0
    p.update(_shard(100), {"calls": 100})
    assert p.eta() == pytest.approx(600 * 2.0 / 100)  # 100 units in 2 s since the first
    assert p.suffix() == "shards 2/8  calls 200  failed 3  ETA 0:12"
    for _ in range(6):
        p.update(_shard(100), {})
    assert p.eta() == 0.0
    p.close()


def test_nothing_to_run_says_so(capsys):
    p = Progress("units", planned=4)
    p.start(0, 0)
    assert "all shards already committed; nothing to run" in capsys.readouterr().err
    assert p.bar is None
    p.close()


@pytest.mark.parametrize("seconds, text", [(0, "0:00"), (59.6, "1:00"), (3725, "1:02:05")])
def test_clock_format(seconds, text):
    from distbench.cli.progress import _clock

    assert _clock(seconds) == text


class _Stream:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_off_a_terminal_plain_lines_follow_the_live_calls_and_skip_idle_ones():
    clock, out = _Clock(), _Stream()
    p = Progress("trials", planned=1, clock=clock, expected_calls=100, stream=out)
    p.start(1, 100)
    clock.now = 3.0
    p.live({"calls": 0, "failed": 0})  # Ray still starting: nothing moved, no line
    clock.now = 5.0
    p.live({"calls": 10, "failed": 1})
    clock.now = 10.0
    p.live({"calls": 60, "failed": 1})  # 50 calls in 5 s since calls were first seen
    clock.now = 10.5
    p.live({"calls": 65, "failed": 1})  # too soon after the last line
    p.update(_shard(100), {"calls": 100, "call_failed": 1})
    p.close()
    lines = out.text.splitlines()
    assert lines[0] == "running 1 shard(s), 100 trials, about 100 model calls"
    progress = [ln for ln in lines if ln.startswith("progress: ")]
    assert [ln.split("calls ")[1].split()[0] for ln in progress] == ["0", "10", "60", "100"]
    assert "10.0 calls/s  ETA 0:04" in progress[2]  # 40 calls left at 10 calls/s
    assert progress[-1].startswith("progress: trials 100/100 (100%)  shards 1/1")


def test_a_run_against_a_slow_server_reports_calls_before_it_ends(tmp_path):
    """The issue's check: stderr not a terminal, one shard, a server answering in 200 ms:
    at least three progress lines with increasing call counts before the run ends. One
    request per trial (``--max-n 1``), as when the issue was written: with ``n`` the 50
    answers come in 10 requests, about as fast as one line."""
    import os
    import subprocess
    import sys

    from distbench.mockserver import ServerConfig, start_server

    with start_server(ServerConfig(latency_ms=200)) as server:
        out = subprocess.run(
            [sys.executable, "-m", "distbench", "run", "--llm-type", "openai", "--base-url",
             server.url, "--num-games", "10", "--num-trials", "5", "--run-id", "p", "--no-cache",
             "--max-n", "1"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={**os.environ, "OPENAI_API_KEY": "sk-test", "RAY_AUTH_MODE": "disabled"})
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("progress: ")]
    calls = [int(ln.split("calls ")[1].split()[0].replace(",", "")) for ln in lines]
    before_end = [c for c in calls if 0 < c < 50]
    assert len(before_end) >= 3, out.stderr
    assert before_end == sorted(before_end) and calls[-1] == 50


def test_a_throttled_endpoint_shows_its_rate_in_the_line():
    clock, out = _Clock(), _Stream()
    p = Progress("trials", planned=1, clock=clock, stream=out)
    p.start(1, 100)
    p.live({"calls": 5, "failed": 0, "rate_rps": 12.0, "rate_limit_rps": 20.0})
    assert "throttled: 12 req/s of 20" in p.suffix()
    p.live({"calls": 9, "failed": 0, "rate_rps": 20.0, "rate_limit_rps": 20.0})
    assert "throttled" not in p.suffix()
    p.close()


def test_the_eta_is_held_between_answers_and_never_grows_when_the_pace_slows():
    clock, out = _Clock(), _Stream()
    p = Progress("trials", planned=1, clock=clock, expected_calls=100, stream=out)
    p.start(1, 100)
    clock.now = 20.0
    p.live({"calls": 10, "sent": 100})  # the cold first call: not the pace
    assert p.eta() is None and "ETA" not in p.suffix()
    clock.now = 25.0
    p.live({"calls": 20, "sent": 100})  # 10 calls in 5 s: 80 left, 40 s
    assert p.eta() == pytest.approx(40.0)
    clock.now = 60.0  # a slow call out: no new answer, the estimate holds (no climb)
    p.live({"calls": 20, "sent": 100})
    assert p.eta() == pytest.approx(40.0)
    clock.now = 85.0  # 20 calls in 65 s: 70 left would be 227 s at that pace; it holds
    p.live({"calls": 30, "sent": 100})
    assert p.eta() == pytest.approx(40.0)
    clock.now = 90.0  # back to pace: 60 left at 30 calls in 70 s, 140 s: still held
    p.live({"calls": 40, "sent": 100})
    assert p.eta() == pytest.approx(40.0)
    clock.now = 95.0
    p.live({"calls": 90, "sent": 100})  # 80 calls in 75 s: 10 left, 9.4 s
    assert p.eta() == pytest.approx(10 * 75 / 80)
    p.close()
    etas = [ln.split("ETA ")[1].split()[0] for ln in out.text.splitlines() if "ETA " in ln]
    seconds = [int(e.split(":")[0]) * 60 + int(e.split(":")[1]) for e in etas]
    assert seconds == sorted(seconds, reverse=True) and len(seconds) >= 3


def test_off_a_terminal_a_line_is_printed_only_when_something_changed():
    clock, out = _Clock(), _Stream()
    p = Progress("trials", planned=1, clock=clock, expected_calls=100, stream=out)
    p.start(1, 100)
    for second in range(1, 120):  # two minutes of a model loading: one line per change
        clock.now = float(second)
        status = "loading smollm2 ..." if second < 3 else "first call: evaluating the prompt ..."
        p.live({"calls": 0, "sent": 100, "status": status})
    clock.now = 130.0
    p.live({"calls": 10, "sent": 100, "status": ""})
    p.close()
    progress = [ln for ln in out.text.splitlines() if ln.startswith("progress: ")]
    # start, loading, first call, 10 answers; the end changed nothing: no repeated line
    assert len(progress) == 4, progress
    assert progress[1].endswith("calls 0 (100 in flight)  failed 0  - loading smollm2 ...")
    assert progress[2].endswith("- first call: evaluating the prompt ...")
    assert "calls 10 (90 in flight)" in progress[3] and " - " not in progress[3]


def test_on_a_terminal_the_line_is_cut_to_its_width(monkeypatch):
    """A line wider than the terminal would wrap, and the next redraw (``\\r``) would leave
    the wrapped part behind on every update."""
    import os
    import shutil

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((60, 24)))
    clock, out = _Clock(), _Stream()
    p = Progress("trials", planned=1, clock=clock, expected_calls=100, stream=out, tty=True)
    p.start(1, 100)
    clock.now = 1.0
    p.live({"calls": 0, "sent": 100, "status": "first call: evaluating the prompt ..."})
    p.close()
    drawn = [part.replace("\x1b[K", "") for part in out.text.split("\r")[1:]]
    assert len(drawn) >= 2 and all(len(part.rstrip("\n")) <= 59 for part in drawn), drawn
    assert drawn[1].startswith("trials 0/100 (0%)  shards 0/1  calls 0 (100 in flight)")


def test_calls_past_the_plans_count_drop_the_call_eta_for_the_units_one():
    """Logprob follow-ups make more calls than the plan announced: the ETA from the calls would
    sit at its last value (or 0:00) while work is left; it goes, and the units' pace takes over."""
    clock = _Clock()
    p = Progress("trials", planned=4, clock=clock, expected_calls=80)
    p.start(4, 400)
    clock.now = 10.0
    p.live({"calls": 10, "sent": 80})
    clock.now = 20.0
    p.live({"calls": 60, "sent": 80})  # 50 calls in 10 s: 20 left, 4 s
    assert p.eta() == pytest.approx(4.0)
    clock.now = 30.0
    p.live({"calls": 90, "sent": 120})  # past the plan's 80: its count is no guide
    assert p.eta() is None and "ETA" not in p.suffix()
    p.update(_shard(100), {"calls": 90})
    clock.now = 40.0
    p.update(_shard(100), {"calls": 40})  # 100 trials in 10 s: 200 left, 20 s
    assert p.eta() == pytest.approx(20.0)
    p.close()


def test_calls_that_reach_the_plans_count_exactly_end_the_eta_at_zero_not_drop_it():
    """The last answer of a one-shard run arrives before its shard commits: the ETA says 0:00
    (the calls are done) rather than vanishing as if the calls had outrun the plan."""
    clock = _Clock()
    p = Progress("trials", planned=1, clock=clock, expected_calls=10)
    p.start(1, 10)
    clock.now = 2.0
    p.live({"calls": 2, "sent": 10})
    clock.now = 4.0
    p.live({"calls": 6, "sent": 10})
    assert p.eta() == pytest.approx(2.0)
    clock.now = 5.0
    p.live({"calls": 10, "sent": 10})
    assert p.eta() == 0.0 and "ETA 0:00" in p.suffix()
    p.close()


def test_a_ceiling_gives_an_eta_from_the_calls_and_tightens_as_shards_end():
    clock, out = _Clock(), _Stream()
    p = Progress("episodes", planned=2, clock=clock, stream=out, ceiling_calls=200,
                 shard_calls=lambda shard: 100)
    p.start(2, 20)
    assert "at most 200 model calls" in out.text
    clock.now = 5.0
    p.live({"calls": 10})
    assert p.eta() is None  # one point: no pace yet
    clock.now = 6.0
    p.live({"calls": 20})
    assert p.eta() == pytest.approx(180 / 10)  # 10 calls/s, 180 left at most
    clock.now = 7.0
    p.live({"calls": 30})
    p.update(SimpleNamespace(num_units=10), {"calls": 30})  # the first shard used 30 of 100
    assert p.ceiling_calls == 130
    clock.now = 8.0
    p.live({"calls": 40})
    assert p.eta() == pytest.approx(90 / (30 / 3))
    assert "ETA 0:09" in p.suffix()
    p.close()
