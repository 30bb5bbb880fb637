"""Does a model answer the same through a real OpenAI-compatible server as in-process?

Plays the same pure-mode games (same prompts, same per-request seeds) three ways with a bundled
model:

- ``in-process``: the ``local`` provider (llama-cpp-python in this process, plain sampling);
- ``server, declared``: llama-cpp-python's own server (``python -m llama_cpp.server``),
  through ``--llm-type llamacpp``, every request stating plain sampling (top_k 0, top_p 1,
  min_p 0, repeat_penalty 1: the provider's ``sampling = "llamacpp"`` dialect, the default);
- ``server, defaults``: the same server sent temperature only (``sampling = "none"``), so its
  own defaults apply (top_k 40, top_p 0.95, min_p 0.05, repeat_penalty 1.1): what distbench
  did before it declared sampling.

It prints each valid rate with a 95% interval and the difference of each server run from the
in-process run with a 95% paired bootstrap interval over games (the trials of a game share its
prompt, so games are the independent units; 2,000 resamples, seeded). "Agree" means that
interval covers 0.

    python benchmarks/bench_server_agreement.py --games 100 --trials 4 --model smollm2-135m
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from distbench.engine.driver import run_config  # noqa: E402
from distbench.games.matrix.plan import MatrixRunConfig  # noqa: E402
from distbench.llm.local import find_model_path  # noqa: E402
from distbench.llm.registry import make_spec  # noqa: E402
from distbench.store.catalog import open_run  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    # The server's log goes to a file: llama.cpp writes much at start-up, and an unread pipe
    # would fill and stop the server.
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
             "127.0.0.1", "--port", str(port)],
            stdout=sink, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=2) as resp:
                if resp.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the server did not start: {log.read_text()[-2000:]}")


def per_game_valid(run_dir: Path) -> np.ndarray:
    rows = open_run(run_dir).execute(
        "select game_index, avg(case when parse_status = 'ok' then 1.0 else 0.0 end) "
        "from trials group by game_index order by game_index").fetchall()
    return np.array([v for _, v in rows])


def wilson(p: float, n: int) -> tuple[float, float]:
    z = 1.959964
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def paired_ci(a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    diffs = b - a
    idx = rng.integers(0, len(diffs), size=(2000, len(diffs)))
    means = diffs[idx].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--model", default="smollm2-135m-instruct",
                        help="bundled model: smollm2-135m-instruct or gemma3-270m")
    args = parser.parse_args()
    gguf = find_model_path(model=args.model)
    base = dict(buckets=("3x3_midVar_any",), seeds=(42,), num_games=args.games,
                num_trials=args.trials, modes=("pure",), shard_trials=10**6)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.time()
        spec = make_spec("local", args.model, "completion", cache=False)
        run_config(MatrixRunConfig(llm=spec, **base), Path(tmp) / "inproc", parallel=False)
        out["in-process"] = (per_game_valid(Path(tmp) / "inproc"), time.time() - t0)
        proc, url = start_server(gguf, Path(tmp) / "server.log")
        try:
            for label, sampling in (("server, declared", "llamacpp"), ("server, defaults", "none")):
                t0 = time.time()
                spec = make_spec("llamacpp", args.model, "completion", base_url=url, cache=False,
                                 sampling=sampling)
                run_config(MatrixRunConfig(llm=spec, **base), Path(tmp) / label.replace(" ", ""),
                           parallel=False)
                out[label] = (per_game_valid(Path(tmp) / label.replace(" ", "")), time.time() - t0)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    n = args.games * args.trials
    ref = out["in-process"][0]
    print(f"model {args.model}, {args.games} games x {args.trials} trials of 3x3_midVar_any, "
          f"pure mode, completion style, temperature 1")
    print(f"{'run':18} {'valid':>7} {'95% CI':>17} {'diff vs in-process [95% paired CI]':>38} "
          f"{'agree':>6} {'time':>7}")
    for label, (valid, secs) in out.items():
        rate = float(valid.mean())
        lo, hi = wilson(rate, n)
        if label == "in-process":
            diff = ""
            agree = ""
        else:
            dlo, dhi = paired_ci(ref, valid)
            diff = f"{rate - ref.mean():+.3f} [{dlo:+.3f}, {dhi:+.3f}]"
            agree = "yes" if dlo <= 0 <= dhi else "no"
        print(f"{label:18} {rate:7.3f} [{lo:.3f}, {hi:.3f}] {diff:>38} {agree:>6} {secs:6.0f}s")


if __name__ == "__main__":
    main()
