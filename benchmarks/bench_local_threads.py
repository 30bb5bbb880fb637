"""The bundled model's llama.cpp thread count, 1 against 2 against the automatic choice, idle
and under a load generator.

Each (threads, load) cell is a whole process of its own with a fixed ``n_threads`` (or, in the
``auto`` cell, none: the threads are chosen before each call, and the row lists the counts
taken): it loads
SmolLM2, then times (a) the sequential path, ``--calls`` one-request calls one after another
(``LocalModel.complete``), and (b) a round, the same prompts answered together
(``LocalModel.answer_round``). Prompts are negotiation-like (a shared instruction block and a
different tail each), ``--tokens`` tokens of answer at temperature 1.0. Per part it prints wall
and CPU seconds and wall milliseconds per generated token, and a digest of the answers (the
thread count changes no answer, so the digests of a part agree across cells). ``--load N``
runs N busy-looping processes (``while True: pass``, like ``yes > /dev/null``) during the
loaded cells; the 1-minute load average is printed before each cell.

Usage: python benchmarks/bench_local_threads.py [--calls 6] [--tokens 48] [--load 2]
    [--repeats 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import time

_RULES = ("You negotiate how to split 10 coins with another player. Each turn you may propose "
          "a split or accept the last proposal. Answer with one line: PROPOSE a/b or ACCEPT. ")


def _prompts(calls: int) -> list[str]:
    return [f"{_RULES}Round {i + 1}: the other player proposed {i % 10}/{10 - i % 10}. "
            f"Your answer:" for i in range(calls)]


def child(threads: int, calls: int, tokens: int) -> None:
    """One whole process: the sequential part then the round part; prints a JSON line."""
    from distbench.llm.local import shared_model

    model = shared_model(n_threads=threads or None)  # 0: chosen before each call
    picks: list[int] = []
    if not threads:
        choose = model._choose_threads
        model._choose_threads = lambda: picks.append(choose()) or picks[-1]
    model.warm_up()
    prompts = _prompts(calls)
    row: dict = {"threads": threads or "auto"}
    for part in ("sequential", "round"):
        wall, cpu = time.perf_counter(), time.process_time()
        if part == "sequential":
            out = [model.complete(p, max_tokens=tokens, temperature=1.0, seed=i)
                   for i, p in enumerate(prompts)]
            texts = [o["choices"][0]["text"] for o in out]
            generated = sum(o["usage"]["completion_tokens"] for o in out)
        else:
            out = model.answer_round([{"style": "completion", "prompt": p, "seed": i,
                                       "max_tokens": tokens, "temperature": 1.0}
                                      for i, p in enumerate(prompts)])
            texts = [o["text"] for o in out]
            generated = sum(o["usage"]["completion_tokens"] for o in out)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        row[part] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "tokens": generated,
                     "ms_per_token": round(wall * 1000 / max(1, generated), 1),
                     "digest": hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:10]}
    if picks:
        row["picked"] = sorted(set(picks))  # the threads the automatic choice took
    print(json.dumps(row))


def _busy() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--load", type=int, default=2, help="busy processes of the loaded cells")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.calls, args.tokens)
        return
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), "CPUs", flush=True)
    for load in (0, args.load):
        busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(load)]
        for process in busy:
            process.start()
        try:
            for _ in range(args.repeats):
                for threads in (1, 2, 0):
                    before = os.getloadavg()[0]
                    out = subprocess.run([sys.executable, __file__, "--child", str(threads),
                                          "--calls", str(args.calls), "--tokens",
                                          str(args.tokens)],
                                         capture_output=True, text=True, check=True)
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                    print(f"  busy {load} load {before:.1f}: {json.dumps(row)}", flush=True)
        finally:
            for process in busy:
                process.terminate()


if __name__ == "__main__":
    main()
