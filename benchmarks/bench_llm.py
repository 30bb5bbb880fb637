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
4. A 429 storm: the same ``distbench run`` of ``--storm-calls`` (200) model calls against the
   mock server twice, side by side: without faults, and with 20% of requests answered 429
   (``Retry-After: 1``). We print both wall times and their ratio (target <= 1.3), the trials
   lost (target 0), the largest number of requests sent in any 1 s window (from the requests'
   send times; target <= the configured rate) and the limiter's lowest level.

Usage: python benchmarks/bench_llm.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import os
import platform
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

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


@contextmanager
def _send_times(stamps: list[float]):
    """Records the send time of every ``/v1`` request httpx makes in this process."""
    original = httpx.AsyncHTTPTransport.handle_async_request

    async def recording(self, request):
        if request.url.path.startswith("/v1/") and request.method == "POST":
            stamps.append(time.monotonic())
        return await original(self, request)

    httpx.AsyncHTTPTransport.handle_async_request = recording
    try:
        yield stamps
    finally:
        httpx.AsyncHTTPTransport.handle_async_request = original


def max_in_window(stamps: list[float], window: float = 1.0) -> int:
    """The largest number of ``stamps`` in any half-open interval ``[t, t + window)``."""
    ordered = sorted(stamps)
    return max((bisect.bisect_left(ordered, t + window) - i for i, t in enumerate(ordered)),
               default=0)


def storm(calls: int, rps: float, concurrency: int, latency_ms: float, fail_429: float,
          retry_after: float) -> dict[str, dict[str, float]]:
    """The same run of ``calls`` calls without and with 429s (see the module docstring)."""
    import pyarrow.parquet as pq

    from distbench.engine.driver import run_config
    from distbench.games.matrix.plan import MatrixRunConfig
    from distbench.llm import limits

    lowest: list[float] = []
    granted: list[float] = []
    # (getattr: the section also runs against the limiter before adaptive limiting)
    original = getattr(limits.RateLimiter, "_set_level", None)
    original_acquire = limits.RateLimiter.acquire

    def tracking(self, level):
        lowest.append(level)
        original(self, level)

    async def acquire(self, tokens=0.0):
        at = await original_acquire(self, tokens)
        granted.append(time.monotonic())
        return at

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, share in (("no 429", 0.0), ("20% 429", fail_429)):
            config = ServerConfig(latency_ms=latency_ms, fail_429=share, retry_after=retry_after)
            stamps: list[float] = []
            lowest.clear()
            granted.clear()
            if original is not None:
                limits.RateLimiter._set_level = tracking
            limits.RateLimiter.acquire = acquire
            try:
                with start_server(config) as server, _send_times(stamps):
                    spec = make_spec("llamacpp", "mock", "chat", base_url=server.url,
                                     rpm=60.0 * rps, max_concurrency=concurrency,
                                     max_retries=8, cache=False)
                    # One trial per game: every call has its own prompt, so the run makes
                    # `calls` requests however trials are batched into requests.
                    run = MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(1,),
                                          num_games=calls, num_trials=1, modes=("pure",),
                                          llm=spec, shard_trials=calls)
                    outcome = run_config(run, Path(tmp) / name.replace(" ", "_").replace("%", ""),
                                         parallel=False)
                    stats = server.stats()
            finally:
                if original is not None:
                    limits.RateLimiter._set_level = original
                limits.RateLimiter.acquire = original_acquire
            trials = pq.read_table(outcome.run_dir / "trials").to_pydict()
            lost = sum(s == "call_failed" for s in trials["parse_status"])
            sends = sorted(stamps)
            out[name] = {
                "elapsed_s": outcome.elapsed_s,
                "calls_s": sends[-1] - sends[0] if sends else 0.0,
                "trials": len(trials["parse_status"]),
                "lost": lost,
                "requests": stats["requests"],
                "answered_429": stats["by_status"].get("429", 0),
                "max_1s": max_in_window(granted),
                "max_1s_wire": max_in_window(sends),
                "min_gap_ms": 1000 * min(map(float.__rsub__, sends, sends[1:]), default=0.0),
                "lowest_level": min(lowest, default=1.0),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--rps", type=float, default=50.0)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--storm-calls", type=int, default=200)
    parser.add_argument("--storm-rps", type=float, default=5.0,
                        help="the storm run's rate limit (at 20 req/s no limiter can stay within 1.3x: see benchmarks/README.md)")
    parser.add_argument("--storm-concurrency", type=int, default=4)
    parser.add_argument("--storm-latency-ms", type=float, default=200.0)
    parser.add_argument("--only", choices=("rate", "local", "logprob", "storm"), default=None,
                        help="run one section only")
    args = parser.parse_args()
    n = args.requests or (200 if args.quick else 1000)

    print(f"# bench_llm  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  {platform.processor() or platform.machine()}"
          f"  cpus={os.cpu_count()}  python {platform.python_version()}")
    def wanted(section: str) -> bool:
        return args.only in (None, section)

    if wanted("rate"):
        r = rate_tracking(args.rps, args.latency_ms, n)
        verdict = "PASS" if r["ratio"] >= 0.95 and r["share_429"] <= 0.01 else "FAIL"
        print(f"\n## rate tracking: mock server, {args.latency_ms:g} ms latency, limit {args.rps:g} req/s")
        print(f"requests {r['requests']}, ok {r['ok']}, {r['elapsed_s']:.2f} s, "
              f"achieved {r['achieved_rps']:.2f} req/s, achieved/limit {r['ratio']:.3f} (target >= 0.95), "
              f"429 share {100 * r['share_429']:.2f}% (target <= 1%)  {verdict}")

    if wanted("local"):
        loc = local_model(10 if args.quick else 30)
        print("\n## bundled local model (SmolLM2-135M-Instruct, llama.cpp, 16-token answers)")
        if loc is None:
            from distbench.llm.local import INSTALL_HINT

            print(f"not installed ({INSTALL_HINT})")
        else:
            print(f"first call {loc['first_call_s']:.2f} s (load + warm-up); then {loc['calls']} calls: "
                  f"{loc['calls_per_s']:.2f} calls/s, {loc['tokens_per_s']:.1f} tokens/s, ok {loc['ok']}")

    if wanted("logprob"):
        games, trials = (5, 100) if args.quick else (20, 100)
        c = logprob_reduction(games, trials)
        print(f"\n## logprob vs mixed: {games} games, {trials} trials per game (calls at the server)")
        print(f"mixed {c['mixed']} calls, logprob {c['logprob']} calls, reduction "
              f"{c['mixed'] / max(1, c['logprob']):.0f}x")

    if wanted("storm"):
        res = storm(args.storm_calls, args.storm_rps, args.storm_concurrency,
                    args.storm_latency_ms, fail_429=0.2, retry_after=1.0)
        print(f"\n## 429 storm: distbench run of {args.storm_calls} calls, mock server "
              f"{args.storm_latency_ms:g} ms latency; rpm {60 * args.storm_rps:g} "
              f"({args.storm_rps:g} req/s), max_concurrency {args.storm_concurrency}")
        for name, r in res.items():
            print(f"{name:>8}: run {r['elapsed_s']:.2f} s (calls {r['calls_s']:.2f} s), "
                  f"{r['requests']} requests ({r['answered_429']} answered 429), trials "
                  f"{r['trials']}, lost {r['lost']}, max sends allowed in 1 s {r['max_1s']} (at the wire "
                  f"{r['max_1s_wire']}, closest two {r['min_gap_ms']:.0f} ms apart), "
                  f"lowest level {r['lowest_level']:.2f}")
        base, hit = res["no 429"], res["20% 429"]
        ratio = hit["elapsed_s"] / base["elapsed_s"]
        ok = (ratio <= 1.3 and hit["lost"] == 0 and base["lost"] == 0
              and max(hit["max_1s"], base["max_1s"]) <= args.storm_rps)
        print(f"ratio {ratio:.2f} (target <= 1.3), calls-only ratio "
              f"{hit['calls_s'] / max(1e-9, base['calls_s']):.2f}, lost {hit['lost']} (target 0), "
              f"max requests in any 1 s {max(hit['max_1s'], base['max_1s'])} "
              f"(target <= {args.storm_rps:g})  {'PASS' if ok else 'FAIL'}")

if __name__ == "__main__":
    main()
