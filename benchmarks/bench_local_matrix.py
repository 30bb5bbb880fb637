"""The matrix family's batched local decode against a plain llama-cpp-python loop over the same
prompts, each in a whole process of its own, alternating, optionally under a load generator.

The prompts: ``--games`` games of ``3x3_midVar_mixed`` (seed 42), the family's pure prompt in
completion style, ``--trials`` seeds each, 16-token answers (the family's completion budget),
plain temperature sampling at 1.0. The plain loop: one ``llama_cpp.Llama`` (SmolLM2, 1 or 2
threads as the batched side chooses), ``create_completion`` per (prompt, seed). The batched
path: ``LocalModel.complete_many`` per game (the trials of a game decoded together). Each
process's wall time is measured from outside (start-up and model load included) and the
decode time and CPU seconds inside (CPU time counts the other jobs' load less). ``--model``
picks a bundled model (``gemma3-270m``: Q4_K_M, whose weights llama.cpp repacks for AVX2;
SmolLM2's Q4_1 it does not). ``--load N`` runs N busy-looping processes meanwhile (the "load 4" of
issue 38); the 1-minute load average is printed before and after each process.

Usage: python benchmarks/bench_local_matrix.py [--games 4] [--trials 20] [--repeats 2] [--load 0]
    [--model smollm2-135m-instruct]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time

PLAIN = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}


def _prompts(games: int) -> list[str]:
    from distbench.games.matrix.generate import generate_games
    from distbench.games.matrix.prompts import pure_prompt

    return [pure_prompt(p, style="completion") for p in generate_games("3x3_midVar_mixed", 42, 0,
                                                                       games)]


def child(path: str, games: int, trials: int, model_name: str) -> None:
    """One whole process: decode every (prompt, seed) and print a JSON line."""
    from distbench.llm.local import find_model_path, shared_model

    prompts = _prompts(games)
    seeds = list(range(trials))
    started = time.perf_counter()
    model = shared_model(model=model_name)
    if path == "plain":
        from llama_cpp import Llama

        threads = model.n_threads  # the thread choice the batched side makes
        llm = Llama(model_path=str(find_model_path(model=model_name)), n_ctx=2048,
                    n_threads=threads, verbose=False)
        decode, cpu = time.perf_counter(), time.process_time()
        texts = [llm.create_completion(p, max_tokens=16, temperature=1.0, seed=s,
                                       **PLAIN)["choices"][0]["text"]
                 for p in prompts for s in seeds]
    else:
        threads = model.n_threads
        decode, cpu = time.perf_counter(), time.process_time()
        texts = [c["text"] for p in prompts
                 for c in model.complete_many(p, seeds, max_tokens=16)["choices"]]
    done = time.perf_counter()
    print(json.dumps({"path": path, "answers": len(texts), "threads": threads,
                      "load_s": round(decode - started, 2), "decode_s": round(done - decode, 2),
                      "cpu_s": round(time.process_time() - cpu, 2)}))


def _busy() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--load", type=int, default=0, help="busy-looping processes meanwhile")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="a bundled model")
    parser.add_argument("--child", choices=("plain", "batched"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.games, args.trials, args.model)
        return
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.load)]
    for process in busy:
        process.start()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), "CPUs,",
          args.load, "busy processes,", args.model, flush=True)
    walls = {"plain": 0.0, "batched": 0.0}
    decodes, cpus = dict(walls), dict(walls)
    try:
        for _ in range(args.repeats):
            for path in ("plain", "batched"):
                load = os.getloadavg()[0]
                started = time.perf_counter()
                out = subprocess.run([sys.executable, __file__, "--child", path, "--games",
                                      str(args.games), "--trials", str(args.trials),
                                      "--model", args.model],
                                     capture_output=True, text=True, check=True)
                wall = time.perf_counter() - started
                row = json.loads(out.stdout.strip().splitlines()[-1])
                walls[path] += wall
                decodes[path] += row["decode_s"]
                cpus[path] += row["cpu_s"]
                print(f"  {row} wall_s {wall:.1f} load {load:.1f}-{os.getloadavg()[0]:.1f}",
                      flush=True)
    finally:
        for process in busy:
            process.terminate()
    print(f"batched {walls['plain'] / walls['batched']:.2f}x the plain loop (whole processes), "
          f"{decodes['plain'] / decodes['batched']:.2f}x (decode time), "
          f"{cpus['plain'] / cpus['batched']:.2f}x (decode CPU time)", flush=True)


if __name__ == "__main__":
    main()
