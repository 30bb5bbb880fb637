"""A run played in the driver's own process loads the summary's resampling kernel on a thread
while its shards play (numba's import and cached code: most of a second that the summary no
longer waits for; ``benchmarks/bench_gama_speed.py``), and the summary waits for it."""

from __future__ import annotations

import threading

import distbench.engine.driver as driver
from distbench.engine.sweep import plan_sweep
from distbench.spec import parse_spec


def _plan(run_id: str):
    spec = parse_spec({"seeds": [1], "games_per_bucket": 2, "trials_per_game": 1,
                       "modes": ["pure"], "buckets": ["2x2_lowVar_mixed"],
                       "providers": {"dummy": {"tiers": {"A": ["m1"]}}}}, "t.toml")
    return plan_sweep(spec, run_id)


def test_a_local_run_loads_the_kernel_on_a_thread_before_its_summary(tmp_path, monkeypatch):
    seen: list[str] = []
    summaries: list[bool] = []
    real_warm, real_summary = driver.warm_kernel, driver._summary_and_health

    def warm() -> None:
        seen.append(threading.current_thread().name)
        real_warm()

    def summary(*args, **kwargs):
        summaries.append(bool(seen))  # the warm-up began before the summary
        return real_summary(*args, **kwargs)

    monkeypatch.setattr(driver, "warm_kernel", warm)
    monkeypatch.setattr(driver, "_summary_and_health", summary)
    outcome = driver.run_plan(_plan("w"), tmp_path / "w", parallel=False)
    assert outcome.executed >= 1
    assert seen == ["warm-kernel"] and summaries == [True]
    assert not any(t.name == "warm-kernel" for t in threading.enumerate())  # joined


def test_nothing_to_play_loads_nothing_ahead(tmp_path, monkeypatch):
    driver.run_plan(_plan("n"), tmp_path / "n", parallel=False)
    seen: list[str] = []
    monkeypatch.setattr(driver, "warm_kernel", lambda: seen.append("warm"))
    again = driver.run_plan(_plan("n"), tmp_path / "n", parallel=False)  # every shard committed
    assert again.executed == 0 and seen == []


def test_the_thread_loads_arrows_list_conversion_before_the_kernel(tmp_path, monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(driver, "warm_arrow", lambda: seen.append("arrow"))
    monkeypatch.setattr(driver, "warm_kernel", lambda: seen.append("kernel"))
    driver.run_plan(_plan("a"), tmp_path / "a", parallel=False)
    assert seen == ["arrow", "kernel"]  # the shard's tables are built before the summary


def test_warm_arrow_loads_what_arrows_first_list_conversion_loads():
    import subprocess
    import sys

    probe = ("import sys; import pyarrow as pa; from distbench.store.fields import warm_arrow; "
             "before = set(sys.modules); pa.array([1]); first = set(sys.modules) - before; "
             "print(len(first) > 0)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "True"  # a first conversion loads modules
    probe = ("import sys; import pyarrow as pa; from distbench.store.fields import warm_arrow; "
             "warm_arrow(); before = set(sys.modules); pa.array(['x']); "
             "pa.table({'a': [[1]]}); print(sorted(set(sys.modules) - before))")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"  # after the warm-up: nothing more
