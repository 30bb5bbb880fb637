"""Multi-turn games with the bundled model: a round's prompts decoded together (new) against
one prompt at a time (old, ``DISTBENCH_LOCAL_ROUNDS=0``), the same episodes in the same run.

Runs the CLI in whole processes, alternating old and new: negotiation (the bundled model
against ``scripted:fair``) and fog (the bundled model as an agent against ``tier3``). Prints
per run the wall time (process and Ray start-up included), the 1-minute load average before
and after, and the speed-up of the new path (the same games, so the ratio of episodes per
minute). Answer agreement between the paths is not measured here (see benchmarks/README.md).

Usage: python benchmarks/bench_local_multiturn.py [--games 3] [--families negotiation,fog]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "negotiation": ["--family", "negotiation", "--llm-type", "local", "--opponent",
                    "scripted:fair", "--mode", "semi", "--lang", "en"],
    "fog": ["--family", "fog", "--llm-type", "local", "--opponent", "tier3"],
}


def one_run(family: str, games: int, rounds: bool, root: Path) -> dict:
    env = dict(os.environ, DISTBENCH_LOCAL_ROUNDS="1" if rounds else "0",
               RAY_AUTH_MODE="disabled")
    out = root / f"{family}-{'new' if rounds else 'old'}"
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "distbench", "run", *COMMANDS[family], "--num-games", str(games),
         "--output-dir", str(out), "--no-cache"], env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    return {"family": family, "path": "new" if rounds else "old", "games": games,
            "seconds": round(seconds, 1), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2), "exit": done.returncode,
            "tail": done.stdout.strip().splitlines()[-1:] or done.stderr.strip().splitlines()[-1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--families", default="negotiation,fog")
    args = parser.parse_args()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), "CPUs")
    with tempfile.TemporaryDirectory() as folder:
        for family in args.families.split(","):
            runs = [one_run(family, args.games, rounds, Path(folder)) for rounds in (False, True)]
            for run in runs:
                print(run)
            old, new = runs
            print(f"{family}: new path {old['seconds'] / max(new['seconds'], 1e-9):.2f}x "
                  "the old one (wall time of the same games)")


if __name__ == "__main__":
    main()
