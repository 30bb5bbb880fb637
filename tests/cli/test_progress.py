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
    assert p.eta() is None and p.suffix().endswith("ETA --:--")
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
