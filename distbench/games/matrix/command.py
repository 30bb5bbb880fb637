"""How the matrix family is configured from ``distbench run``: its own flags, and the options
to a :class:`MatrixRunConfig` (its sweep-spec keys are the spec's top level)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from distbench.games.answers.options import bucket_option, logprob_options, trials_option
from distbench.games.answers.presentation import parse_perturb
from distbench.games.base import CommandRun
from distbench.games.matrix.buckets import (
    PAYOFFS,
    UnknownBucketError,
    default_bucket_id,
    with_payoffs,
)
from distbench.games.matrix.plan import MODES, MatrixRunConfig, matrix_plan
from distbench.games.matrix.summary import format_summary
from distbench.llm.base import BackendSpec

OPTIONS = [
    trials_option(),
    click.Option(["--num-rows"], type=click.IntRange(1, 10), default=3, show_default=True,
                 help="Row (model) actions, when no --bucket is given."),
    click.Option(["--num-cols"], type=click.IntRange(1, 10), default=3, show_default=True,
                 help="Column (opponent) actions, when no --bucket is given."),
    bucket_option(),
    click.Option(["--payoffs"], type=click.Choice(PAYOFFS), default="int", show_default=True,
                 help="Payoff distribution. int: integers uniform in the bucket's range; seed: "
                      "the seed tool's, floats uniform in the bucket's range (each bucket "
                      "becomes its ...Float twin; without --bucket, <rows>x<cols>_highVarFloat_any:"
                      " floats in [-100, 100], as the seed's main.py). Use seed to compare with "
                      "the seed tool's results."),
    click.Option(["--combined"], is_flag=True, help="Play pure and mixed mode on the same games."),
    *logprob_options(),
    click.Option(["--output-format"], type=click.Choice(["distbench", "seed"]),
                 default="distbench", show_default=True,
                 help="seed: also write the seed tool's games.json, trials.json, summary.json "
                      "(with --combined: trials_/summary_pure_actions.json and "
                      "_mixed_strategy.json) into results/run_YYYYMMDD_HHMMSS/ (with "
                      "--combined: pure_and_mixed_...), distbench's own run in the folder of "
                      "the same name inside it."),
    click.Option(["--perturb"], default="", metavar="LIST",
                 help="Also play every game in other presentations and measure invariance "
                      "(consistency, position bias): a comma list of labels (actions "
                      "reordered), seat (the other seat of the same game), affine (payoffs "
                      "scaled and shifted), framing (a story instead of a table)."),
    click.Option(["--shard-trials"], type=click.IntRange(min=1), default=None,
                 help="Target trials per shard.  [default: 20000 for the dummy, 500 for a "
                      "model behind an endpoint: a stop loses little, progress moves often]"),
]
"""The family's own flags of ``distbench run`` (``Family.options``)."""


def command(options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
    """The matrix run of ``distbench run``'s options (ValueError: one line on bad input)."""
    if spec.provider.startswith("scripted:"):
        raise ValueError("scripted players (--llm-type scripted:NAME) play negotiation only; "
                         "fog tiers are chosen with --agent tier1..tier4")
    mode_names = options["mode_names"]
    if options["combined"] and mode_names:
        raise ValueError("--combined plays both modes; drop --mode or --combined")
    bad = [m for m in mode_names if m not in MODES]
    if bad or len(mode_names) > 1:
        raise ValueError(f"--mode for matrix games is one of pure, mixed, logprob (got "
                         f"{', '.join(mode_names)}); use --combined for pure and mixed")
    modes = ("pure", "mixed") if options["combined"] else (mode_names[0] if mode_names else "pure",)
    payoffs = options.get("payoffs") or "int"
    if options["buckets"]:
        buckets = tuple(options["buckets"])
        if payoffs == "seed":
            try:
                buckets = tuple(with_payoffs(b, "seed") for b in buckets)
            except UnknownBucketError as exc:
                raise ValueError(str(exc)) from None
    else:
        spread = "highVarFloat" if payoffs == "seed" else "midVar"
        buckets = (default_bucket_id(options["num_rows"], options["num_cols"], spread=spread),)
    config = MatrixRunConfig(
        buckets=tuple(dict.fromkeys(buckets)),
        seeds=tuple(dict.fromkeys(options["seeds"])),
        num_games=options["num_games"],
        num_trials=options["num_trials"],
        modes=modes,
        llm=spec,
        llm_seed=options["llm_seed"],
        temperature=options["temperature"],
        max_tokens=options["max_tokens"],
        shard_trials=options["shard_trials"],
        logprob_cue=options["logprob_cue"],
        min_label_mass=options["min_label_mass"],
        perturb=parse_perturb(options.get("perturb")),
    )
    label = (f"{', '.join(config.buckets)} | {spec.provider}:{spec.model} | {'+'.join(modes)} | "
             f"{config.num_games} games x {config.num_trials} trials"
             + (f" | perturb {','.join(config.perturb)}" if config.perturb else ""))
    folder = "pure_and_mixed" if len(modes) > 1 else modes[0]
    if options.get("output_format") == "seed":
        return CommandRun(plan=lambda run_id: matrix_plan(config, run_id), label=label,
                          folder="pure_and_mixed" if len(modes) > 1 else "run",
                          format_summary=format_summary, stamp="%Y%m%d_%H%M%S", nested=True,
                          finish=_seed_files)
    return CommandRun(plan=lambda run_id: matrix_plan(config, run_id), label=label,
                      folder=folder, format_summary=format_summary)


def _seed_files(run_dir: Path, top: Path) -> list[Path]:
    """``--output-format seed``: the seed tool's files at the top of the named folder."""
    from distbench.report.seed_format import write_seed_files

    return write_seed_files(run_dir, top)


def catalog() -> dict[str, list[dict[str, Any]]]:
    """What ``distbench list`` shows of the matrix family (``Family.catalog``): its buckets."""
    from distbench.games.base import catalog_rows
    from distbench.games.matrix.buckets import (
        DEFAULT_BUCKETS,
        KINDS,
        MAX_ACTIONS,
        SPREADS,
        get_bucket,
    )

    def describe(bucket_id: str) -> str:
        b = get_bucket(bucket_id)
        kind = {"pure": "with a pure saddle point", "mixed": "with mixed equilibria only",
                "any": "unconditioned"}[b.kind]
        return f"{b.rows}x{b.cols} integer payoffs in [{b.low}, {b.high}], {kind} (seed suite)"

    pattern = ("MxN_SPREAD_KIND", f"any size 1..{MAX_ACTIONS} x 1..{MAX_ACTIONS}; spreads "
               f"{'|'.join(SPREADS)} (integers) or with Float (reals); kinds {'|'.join(KINDS)}")
    return {"buckets": catalog_rows([*((b, describe(b)) for b in DEFAULT_BUCKETS), pattern])}
