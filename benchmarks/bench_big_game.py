"""Memory of a run of one game with very many trials (issue 18: 10⁸ trials under 1 GB).

Runs ``distbench run --llm-type dummy --num-games 1 --num-trials N`` in a fresh folder under
``/usr/bin/time -v`` (the driver's peak resident memory, as the kernel counts it), while a
poller reads ``/proc/<pid>/status`` every half second for the peak resident memory
(``VmHWM``) of the driver and of every Ray worker process (``ray::...``; Ray's own services,
the GCS, raylet, dashboard, are listed apart; only the run's own processes, descendants of the
driver, are counted). Then it checks the rows: ``N`` trials, each
trial number once, and the summary's total.

The game's trials are split across shards of ``--shard-trials`` (default: the dummy's 20,000),
so no process ever holds more than one shard's rows, and the summary's median is read from
counts of distinct gaps rather than from every value (``games/matrix/summary.py``).

Usage: python benchmarks/bench_big_game.py [--trials 100000000] [--no-parallel]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LIMIT_MB = 1024


def _status(pid: int) -> tuple[str, int] | None:
    """(process name from its command line, peak resident KiB) of a live process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    name = cmdline[0].decode(errors="replace") if cmdline and cmdline[0] else ""
    return (name, int(peak.group(1))) if peak else None


def _descends(pid: int, root: int) -> bool:
    """``pid`` is ``root`` or one of its descendants (the run's own Ray instance is started by
    its driver, and its workers by that instance's raylet)."""
    seen = 0
    while pid > 1 and seen < 64:
        if pid == root:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        seen += 1
    return False


class Poller(threading.Thread):
    """Peak resident memory of the driver and of every Ray process, sampled every 0.5 s."""

    def __init__(self, driver_pid: int) -> None:
        super().__init__(daemon=True)
        self.driver_pid = driver_pid
        self.peaks: dict[int, tuple[str, int]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.5)

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            seen = _status(pid)
            if seen is None:
                continue
            name, peak = seen
            if not _descends(pid, self.driver_pid):  # another job's processes
                continue
            driver = pid == self.driver_pid or "distbench" in name and pid in self._children()
            if driver or name.startswith("ray::") or "/ray/" in name or "raylet" in name:
                label = "driver" if driver else name.split()[0]
                old = self.peaks.get(pid, (label, 0))
                self.peaks[pid] = (label, max(old[1], peak))

    def _children(self) -> set[int]:
        try:
            text = Path(f"/proc/{self.driver_pid}/task/{self.driver_pid}/children").read_text()
        except OSError:
            return set()
        return {int(x) for x in text.split()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000_000)
    parser.add_argument("--no-parallel", action="store_true", help="play in the driver")
    parser.add_argument("--keep", action="store_true", help="keep the run folder")
    args = parser.parse_args()
    if not Path("/usr/bin/time").exists():
        print("needs /usr/bin/time (apt install time)")
        return 2
    root = Path(tempfile.mkdtemp(prefix="distbench-big-"))
    distbench = Path(sys.executable).with_name("distbench")
    argv = ["/usr/bin/time", "-v", str(distbench), "run", "--llm-type", "dummy",
            "--num-games", "1", "--num-trials", str(args.trials), "--run-id", "big",
            "--no-parallel" if args.no_parallel else "--parallel"]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_ADDRESS", None)  # a Ray instance of its own: its workers are this run's
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(" ".join(argv[2:]))
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    poller = Poller(proc.pid)
    poller.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    poller.done.set()
    poller.join()
    if proc.returncode != 0:
        print(f"the run failed ({proc.returncode}):\n{err[-3000:]}")
        return 1
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    run_dir = root / "results" / "big"
    summary = json.loads((run_dir / "summary.json").read_text())
    records = summary["groups"]
    total = sum(r["total_trials"] for r in records)
    check = subprocess.run(
        [str(distbench), "query", str(run_dir), "select count(*), count(distinct trial), "
         "min(trial), max(trial) from trials", "--format", "csv"],
        capture_output=True, text=True, env=env)
    rows = check.stdout.strip().splitlines()[-1]
    size = sum(f.stat().st_size for f in run_dir.rglob("*") if f.is_file())
    print(f"\n{args.trials:,} trials of one game in {elapsed:.0f} s "
          f"({args.trials / elapsed:,.0f} trials/s), {size / 1e6:,.0f} MB on disk")
    print(f"rows: count, distinct trials, min, max = {rows}; summary total_trials = {total:,}")
    driver_mb = peak_kb / 1024
    print(f"driver peak resident (time -v): {driver_mb:,.0f} MB "
          f"({'under' if driver_mb < LIMIT_MB else 'OVER'} {LIMIT_MB} MB)")
    workers = [(name, kb / 1024) for name, kb in poller.peaks.values()
               if name.startswith("ray::") and "Agent" not in name]
    services = [(name, kb / 1024) for name, kb in poller.peaks.values()
                if name != "driver" and (name, kb / 1024) not in workers]
    if workers:
        worst = max(mb for _, mb in workers)
        print(f"Ray workers: {len(workers)}, peak resident of the largest {worst:,.0f} MB "
              f"({'under' if worst < LIMIT_MB else 'OVER'} {LIMIT_MB} MB); each: "
              + ", ".join(f"{mb:,.0f}" for _, mb in sorted(workers, key=lambda w: -w[1])))
    if services:
        print("Ray's own services (not the run's): " + ", ".join(
            f"{Path(name).name} {mb:,.0f} MB" for name, mb in sorted(services)))
    ok = (rows.startswith(f"{args.trials},{args.trials},0,{args.trials - 1}")
          and total == args.trials and driver_mb < LIMIT_MB
          and all(mb < LIMIT_MB for _, mb in workers))
    print("verdict:", "PASS" if ok else "FAIL")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"run kept in {run_dir}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
