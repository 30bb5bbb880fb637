"""Multi-turn games with the bundled model: a round's prompts decoded together (new) against
one prompt at a time (old, ``DISTBENCH_LOCAL_ROUNDS=0``), the same episodes in the same run.

Plays one shard in this process (no Ray, no cache: every answer is decoded), alternating old
and new ``--repeats`` times on the same episodes: negotiation (the bundled model against
``scripted:fair``, semi, en) and fog (the bundled model as agent a against ``tier3``, one seat
order). Prints per play the wall and CPU seconds, episodes per minute, the model's calls,
completion tokens, valid answers, the 1-minute load average before and after, and whether the
new path's answers equal the old path's (call by call).

Usage: python benchmarks/bench_local_multiturn.py [--games 8] [--fog-games 4] [--fog-turns 3]
    [--repeats 1] [--families negotiation,fog]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import pyarrow.compute as pc

from distbench.games.fog.plan import FogRunConfig, plan_fog_shards
from distbench.games.fog.runner import run_shard as run_fog
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards
from distbench.games.negotiation.runner import run_shard as run_negotiation
from distbench.llm.local import LocalBackend, shared_model
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="negotiation instances")
    parser.add_argument("--fog-games", type=int, default=4)
    parser.add_argument("--fog-turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--families", default="negotiation,fog")
    args = parser.parse_args()
    model = shared_model()
    model.warm_up()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), platform.machine(),
          os.cpu_count(), "CPUs,", model.n_threads, "llama thread(s)", flush=True)
    for family in args.families.split(","):
        totals = {"old": [0.0, 0], "new": [0.0, 0]}
        for _ in range(args.repeats):
            old, new = play(family, args, False), play(family, args, True)
            same = sum(a == b for a, b in zip(old["answers"], new["answers"], strict=False))
            for run in (old, new):
                totals[run["path"]][0] += run["wall_s"]
                totals[run["path"]][1] += run["episodes"]
                shown = {k: v for k, v in run.items() if k != "answers"}
                print(f"  {family} {shown} episodes/min "
                      f"{run['episodes'] * 60 / run['wall_s']:.2f}", flush=True)
            print(f"  {family}: new answers equal to old: {same}/{len(old['answers'])}",
                  flush=True)
        rate = {p: n * 60 / s for p, (s, n) in totals.items()}
        print(f"{family}: old {rate['old']:.2f}, new {rate['new']:.2f} episodes/min: "
              f"{rate['new'] / rate['old']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
