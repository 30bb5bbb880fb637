"""Multi-turn games with the bundled model: a round's prompts decoded together (new) against
one prompt at a time (seq, ``DISTBENCH_LOCAL_ROUNDS=0``) and, with ``--baseline COMMIT``,
against today's sequential path (that commit's code, from a git worktree), the same episodes in
the same run.

Plays one shard per path (no Ray, no cache: every answer is decoded), each path in a process of
its own (the model loaded and warmed first, outside the timing), ``--repeats`` times in turn:
negotiation (the bundled model against ``scripted:fair``, semi, en) and fog (the bundled model
as agent a against ``tier3``, one seat order). Prints per play the wall and CPU seconds,
episodes per minute, the model's calls, completion tokens, valid answers, llama threads, the
1-minute load average before and after, and how many of each path's answers equal the new
path's (call by call).

Usage: python benchmarks/bench_local_multiturn.py [--games 8] [--fog-games 4] [--fog-turns 3]
    [--repeats 1] [--families negotiation,fog] [--baseline 2bef420]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.compute as pc

from distbench.games.fog.plan import FogRunConfig, plan_fog_shards
from distbench.games.fog.runner import run_shard as run_fog
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards
from distbench.games.negotiation.runner import run_shard as run_negotiation
from distbench.llm.local import LocalBackend
from distbench.llm.registry import make_spec


def _shard(family: str, args: argparse.Namespace, spec):
    if family == "negotiation":
        config = NegotiationRunConfig(seeds=(0,), num_games=args.games, modes=("semi",),
                                      langs=("en",), player_a=spec, player_b="scripted:fair")
        return plan_shards(config, "bench")[0], run_negotiation, "turns", "parse_status"
    config = FogRunConfig(pairings=((spec, "tier3"),), num_games=args.fog_games,
                          max_turns=args.fog_turns, both_seat_orders=False)
    return plan_fog_shards(config, "bench")[0], run_fog, "fog_reports", "report_status"


def play(family: str, args: argparse.Namespace, rounds: bool) -> dict:
    os.environ["DISTBENCH_LOCAL_ROUNDS"] = "1" if rounds else "0"
    spec = make_spec("local")
    shard, run, table, status = _shard(family, args, spec)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    result = run(shard, {spec: LocalBackend(spec)})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    calls = result.tables["calls"][1]
    rows = result.tables[table][1]
    rows = rows.filter(pc.is_valid(rows["call_id"]))  # the model's answers
    statuses = rows.column(status).to_pylist()
    return {"path": "new" if rounds else "old", "episodes": result.stats.get(
                "episodes", result.stats.get("games")), "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "calls": calls.num_rows,
            "completion_tokens": pc.sum(calls["completion_tokens"]).as_py(),
            "valid": sum(s in ("proposal", "ok", "message") for s in statuses),
            "answered": len(statuses),
            "answers": calls["response_text"].to_pylist(),
            "load": f"{load:.1f}-{os.getloadavg()[0]:.1f}"}


def _run(tree: str, family: str, args: argparse.Namespace, rounds: bool) -> dict:
    """A path played in a process of its own, from the source tree ``tree`` (this one, or a
    worktree of the baseline commit): its ``play`` and its model code."""
    code = ("import sys, json, argparse; sys.path[:0] = ['.', 'benchmarks']; "
            "import bench_local_multiturn as b; from distbench.llm.local import shared_model; "
            "m = shared_model(); m.warm_up(); "  # loaded and warmed outside the timing
            f"r = b.play({family!r}, argparse.Namespace(**{vars(args)!r}), {rounds!r}); "
            "r['threads'] = m.n_threads; print('RESULT ' + json.dumps(r), flush=True)")
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(next(line for line in out.splitlines()
                           if line.startswith("RESULT "))[len("RESULT "):])


ROOT = str(Path(__file__).resolve().parents[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="negotiation instances")
    parser.add_argument("--fog-games", type=int, default=4)
    parser.add_argument("--fog-turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--families", default="negotiation,fog")
    parser.add_argument("--baseline", default=None, metavar="COMMIT",
                        help="also play today's sequential path from this commit (a git "
                             "worktree of it, removed after)")
    args = parser.parse_args()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), platform.machine(),
          os.cpu_count(), "CPUs", flush=True)
    with contextlib.ExitStack() as stack:
        paths = [("seq", ROOT, False), ("new", ROOT, True)]
        if args.baseline:
            tree = tempfile.mkdtemp(prefix="distbench-baseline-")
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", tree,
                            args.baseline], check=True, capture_output=True)
            stack.callback(subprocess.run, ["git", "-C", ROOT, "worktree", "remove", "--force",
                                            tree], check=False, capture_output=True)
            paths.insert(0, ("today", tree, False))
        child = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "baseline"})
        for family in args.families.split(","):
            totals = {name: [0.0, 0] for name, _, _ in paths}
            for _ in range(args.repeats):
                runs = {name: _run(tree, family, child, rounds) for name, tree, rounds in paths}
                for name, run in runs.items():
                    totals[name][0] += run["wall_s"]
                    totals[name][1] += run["episodes"]
                    shown = {k: v for k, v in run.items() if k not in ("answers", "path")}
                    print(f"  {family} {name}: {shown} episodes/min "
                          f"{run['episodes'] * 60 / run['wall_s']:.2f}", flush=True)
                for name, run in runs.items():
                    if name != "new":
                        same = sum(a == b for a, b in zip(run["answers"], runs["new"]["answers"],
                                                          strict=False))
                        print(f"  {family}: new answers equal to {name}'s: {same}/"
                              f"{len(run['answers'])}", flush=True)
            rate = {name: n * 60 / s for name, (s, n) in totals.items()}
            print(f"{family}: " + ", ".join(f"{name} {r:.2f}" for name, r in rate.items())
                  + " episodes/min; new: " + ", ".join(
                      f"{rate['new'] / r:.2f}x {name}" for name, r in rate.items()
                      if name != "new"), flush=True)


if __name__ == "__main__":
    main()
