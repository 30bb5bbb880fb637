"""``distbench sweep plan|run|report``: seeds x buckets x models x modes, resumable."""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from distbench.cli import options as opts
from distbench.cli.errors import UserError, interrupted
from distbench.cli.progress import run_with_progress
from distbench.report.suite import write_suite_tables

LIST_FLAGS = ("--providers", "--bucket-ids", "--seeds")
"""The seed tool's list flags: values separated by spaces (as its argparse ``nargs="+"``
took them) or by commas, or the flag repeated."""


def join_list_flags(args: list[str]) -> list[str]:
    """``--seeds 42 43`` as ``--seeds 42,43``: the words after a list flag, up to the next
    flag, are its values. A word ending in ``.toml`` ends the list (it is the SPEC file), and
    ``--seeds`` takes only integers, so ``--seeds 42 my-spec`` still reads ``my-spec`` as
    SPEC."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        out.append(arg)
        i += 1
        if arg == "--":
            out.extend(args[i:])
            break
        if arg not in LIST_FLAGS:
            continue
        values: list[str] = []
        while i < len(args) and not args[i].startswith("-"):
            word = args[i]
            if values and (word.endswith(".toml") or (
                    arg == "--seeds" and not all(p.strip().isdigit()
                                                 for p in word.split(",") if p.strip()))):
                break
            values.append(word)
            i += 1
        if values:
            out.append(",".join(values))
    return out


class ListFlagsCommand(click.Command):
    """A command whose :data:`LIST_FLAGS` take space-separated values too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, join_list_flags(list(args)))


def _split(flag: str, value: str | Sequence[str]) -> list[str]:
    text = value if isinstance(value, str) else ",".join(value)
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items:
        raise UserError(f"{flag} needs a list (space- or comma-separated), got {text!r}")
    return items


def _tiers_json(flag: str, value: str) -> dict[str, list[str]]:
    try:
        tiers = json.loads(value)
    except json.JSONDecodeError as exc:
        raise UserError(f"{flag}: not valid JSON ({exc.msg}); example: "
                        '\'{"A": ["gpt-4o"], "B": ["gpt-4o-mini"]}\'') from None
    if not isinstance(tiers, dict) or not all(
        isinstance(v, list) and all(isinstance(m, str) for m in v) for v in tiers.values()
    ):
        raise UserError(f'{flag}: expected an object of tier -> list of models, e.g. {{"A": ["m"]}}')
    return tiers


def spec_data(
    spec_path: Path | None,
    *,
    providers: str | Sequence[str] | None = None,
    bucket_ids: str | Sequence[str] | None = None,
    num_games_per_bucket: int | None = None,
    num_trials: int | None = None,
    seeds: str | Sequence[str] | None = None,
    openai_tiers: str | None = None,
    together_tiers: str | None = None,
    use_dummy: bool = False,
    payoffs: str | None = None,
) -> tuple[dict[str, Any], str]:
    """The spec as a dict with the seed tool's override flags applied, and its source name.

    A provider named by ``--providers`` that the spec does not configure gets the seed tool's
    built-in tiers (``distbench.spec.BUILTIN_TIERS``: Together's A/B/C, OpenAI's A/B), or
    those of its ``--*-model-tiers-json``."""
    from distbench.spec import BUILTIN_TIERS, DEFAULT_SUITE, load_spec

    if spec_path is None:
        data, source = copy.deepcopy(DEFAULT_SUITE), "built-in default suite"
    else:
        data, source = load_spec(spec_path), str(spec_path)
    provs = data.setdefault("providers", {})
    if openai_tiers:
        provs.setdefault("openai", {})["tiers"] = _tiers_json("--openai-model-tiers-json", openai_tiers)
    if together_tiers:
        provs.setdefault("together", {})["tiers"] = _tiers_json("--together-model-tiers-json",
                                                                together_tiers)
    if providers:
        keep = list(dict.fromkeys(_split("--providers", providers)))
        for name in keep:
            if name not in provs and name in BUILTIN_TIERS:
                provs[name] = {"tiers": copy.deepcopy(BUILTIN_TIERS[name])}
        unknown = [p for p in keep if p not in provs]
        if unknown:
            raise UserError(f"--providers: {', '.join(unknown)} not in the spec (it has "
                            f"{', '.join(provs) or 'none'}) and without built-in tiers "
                            f"(those of {', '.join(BUILTIN_TIERS)})")
        data["providers"] = {p: provs[p] for p in keep}
    if use_dummy:
        # Every model becomes the dummy, tiers kept: the whole pipeline with no key and no cost.
        tiers: dict[str, list[str]] = {}
        for name, table in data["providers"].items():
            for tier, models in (table.get("tiers") or {}).items():
                tiers.setdefault(tier, []).extend(f"{name}/{m}" for m in models)
        data["providers"] = {"dummy": {"tiers": tiers or {"A": ["random"]}}}
    if bucket_ids:
        data["buckets"] = _split("--bucket-ids", bucket_ids)
    if payoffs is not None:
        data["payoffs"] = payoffs
    if num_games_per_bucket is not None:
        data["games_per_bucket"] = num_games_per_bucket
    if num_trials is not None:
        data["trials_per_game"] = num_trials
    if seeds:
        try:
            data["seeds"] = [int(s) for s in _split("--seeds", seeds)]
        except ValueError:
            raise UserError(f"--seeds: expected integers such as 42 43 or 42,43, got "
                            f"{seeds if isinstance(seeds, str) else ' '.join(seeds)!r}") from None
    return data, source


def seed_context() -> dict[str, Any]:
    """What the seed tool's files of a sweep need from above the report layer: the seed's
    bucket objects and its default tiers (``write_seed_files``'s keywords)."""
    from distbench.games.registry import default_family, get_family
    from distbench.spec import BUILTIN_TIERS

    return {"bucket_info": get_family(default_family()).bucket_info(),
            "default_tiers": BUILTIN_TIERS}


def limit_games(data: dict[str, Any], limit: int) -> dict[str, Any]:
    """The spec with at most ``limit`` games per cell: ``games_per_bucket`` and every family
    table's ``games``."""
    out = copy.deepcopy(data)
    games = out.get("games_per_bucket", 10)
    if isinstance(games, int) and not isinstance(games, bool):
        out["games_per_bucket"] = min(games, limit)
    for value in out.values():
        if isinstance(value, dict) and isinstance(value.get("games"), int):
            value["games"] = min(value["games"], limit)
    return out


def _parse(data: dict[str, Any], source: str):
    from distbench.spec import SpecError, parse_spec

    try:
        return parse_spec(data, source)
    except SpecError as exc:
        raise UserError(str(exc)) from None


def _override_options(func):
    options = [
        click.option("--providers", multiple=True,
                     help="Keep only these providers (space- or comma-separated); together "
                          "and openai have the seed tool's built-in tiers when the spec has "
                          "no table for them."),
        click.option("--bucket-ids", multiple=True,
                     help="Buckets to play (space- or comma-separated)."),
        click.option("--num-games-per-bucket", type=click.IntRange(min=1), default=None),
        click.option("--num-trials", type=click.IntRange(min=1), default=None,
                     help="Trials per game."),
        click.option("--seeds", multiple=True,
                     help="Game seeds (space- or comma-separated), e.g. 42 43 44."),
        click.option("--openai-model-tiers-json", "openai_tiers", default=None,
                     help='OpenAI tiers, e.g. \'{"A": ["gpt-4o"], "B": ["gpt-4o-mini"]}\'.'),
        click.option("--together-model-tiers-json", "together_tiers", default=None,
                     help="Together tiers, same form."),
        click.option("--use-dummy", is_flag=True,
                     help="Replace every model by the seeded dummy (tiers kept): no key, no cost."),
        click.option("--payoffs", type=click.Choice(["int", "seed"]), default=None,
                     help="Payoff distribution of every bucket (the spec's payoffs key). seed: "
                          "the seed tool's floats uniform in the bucket's range (each bucket "
                          "becomes its ...Float twin), to compare with the seed's results.  "
                          "[default: int]"),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group()
def sweep() -> None:
    """Controlled sweeps: seeds x buckets x models (tiers) x modes."""


@sweep.command("plan", cls=ListFlagsCommand)
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True,
              help="Folder of earlier runs: the expected cost takes each model's median "
                   "answer length per mode from their calls (else the answer format's).")
@_override_options
def plan_cmd(spec: Path | None, output_dir: Path, **overrides: Any) -> None:
    """Print the cells, shards, model requests and samples, and a token and cost estimate of
    SPEC (default: built-in suite): expected, and at most."""
    from distbench.engine.estimate import observed_completion
    from distbench.engine.sweep import describe_plan

    data, source = spec_data(spec, **overrides)
    parsed = _parse(data, source)
    try:
        info = describe_plan(parsed, observed=observed_completion(
            output_dir, [m.spec for m in parsed.models]))
    except ValueError as exc:  # a plan over the size bounds
        raise UserError(str(exc)) from None
    from distbench.games.registry import default_family, families

    first = default_family()  # its cells are the sweep's cells above
    batched = [name for name, f in families().items() if f.play.batch]
    click.echo(f"sweep {parsed.name} ({source})")
    click.echo(f"  seeds {list(parsed.seeds)} | {len(parsed.buckets)} buckets | "
               f"{len(parsed.models)} models | modes {', '.join(parsed.modes)}")
    free = (f" | free answers {info['free_answers']:,} (in process: no call, no "
            "calls row)" if info["free_answers"] else "")
    click.echo(f"  cells {info['cells']:,} | shards {info['shards']:,} | model requests "
               f"{info['requests']:,} ({info['samples']:,} samples){free}")
    if info["requests"]:
        click.echo(f"  tokens: about {info['prompt_tokens_est']:,} prompt (a request of several "
                   f"samples bills its prompt once), at most {info['completion_tokens_max']:,} "
                   f"completion ({first} cells)")
    cost, unpriced = info["cost_usd_max"], info["unpriced_models"]
    expected = info["expected"]
    if info["requests"] and expected is not None and expected.cost is not None:
        click.echo(f"  cost expected: about ${expected.cost:,.2f} live, "
                   f"${info['cost_usd_expected_batch']:,.2f} at the batch price "
                   f"(~{expected.prompt_tokens:,} prompt and ~{expected.completion_tokens:,} "
                   f"completion tokens; completion by {expected.source_text()})")
    click.echo("  cost: " + (f"at most ${cost:,.2f} live, ${info['cost_usd_max_batch']:,.2f} "
                             "at the batch price (the ceiling: every answer at its whole "
                             "max_tokens; --execution batch is half price; "
                             f"{' and '.join(batched)} cells of the models with a price)"
                             if cost is not None else "unknown" if unpriced
                             else "none (in-process models only)")
               + (f"; no price for {', '.join(unpriced)} (price_in, price_out in its "
                  "provider or model table)" if unpriced else ""))
    for name, figures in info["families"].items():
        if name != first and any(figures.values()):
            click.echo(f"  {name}: " + " | ".join(f"{k.replace('_', ' ')} {v:,}"
                                                   for k, v in figures.items()))
    from distbench.spec import BUILTIN_TIERS

    for name, tiers in sorted(parsed.tiers().items()):
        table = data["providers"].get(name, {})
        builtin = " (built-in)" if table.get("tiers") == BUILTIN_TIERS.get(name) else ""
        for t, models in sorted(tiers.items()):
            click.echo(f"  {name} tier {t}{builtin}: {', '.join(models)}")
    for key, figures in info["by_model"].items():
        click.echo(f"    {key}: " + (f"{figures['samples']:,} free answers" if figures["free"]
                                      else f"{figures['requests']:,} requests "
                                           f"({figures['samples']:,} samples)"))


@sweep.command("run", cls=ListFlagsCommand)
@click.argument("spec", required=False, type=click.Path(path_type=Path))
@click.option("--run-id", default=None, help="Run folder name (re-running it resumes).")
@opts.output_dir_option
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Resume this run folder (its spec is reused when SPEC is not given).")
@click.option("--output-format", type=click.Choice(["distbench", "seed"]), default="distbench",
              show_default=True,
              help="seed: the seed tool's layout: results/tiered_suite_YYYYMMDD_HHMMSS/ with "
                   "the suite tables in it, games/seed_S/BUCKET.json and model_runs/..., "
                   "distbench's own run in the folder of the same name inside it.")
@opts.execution_options
@opts.size_options
@_override_options
def run_cmd(spec: Path | None, run_id: str | None, output_dir: Path, resume_dir: Path | None,
            output_format: str, parallel: bool | None, num_workers: int | None,
            address: str | None, keep_warm: float, retry_failed: bool,
            allow_failed_calls: bool, max_cost: float | None, max_tokens_total: int | None,
            execution: str, batch_max_requests: int, batch_price: float,
            limit: int | None, yes: bool, **overrides: Any) -> None:
    """Run SPEC (default: the built-in six-bucket suite) and write the suite tables."""
    from distbench.cli.run import check_calls, execution_kwargs
    from distbench.engine.driver import RunDirectoryError, preflight
    from distbench.engine.sweep import plan_sweep
    from distbench.llm.base import BackendUnavailable
    from distbench.llm.local import LocalModelUnavailable
    from distbench.report.seed_format import resolve_run, write_seed_files
    from distbench.store.writer import read_json

    seed = output_format == "seed"
    if resume_dir is not None:
        if resolve_run(resume_dir) != resume_dir:  # a folder written with --output-format seed
            resume_dir, seed = resolve_run(resume_dir), True
        manifest_path = resume_dir / "manifest.json"
        if not manifest_path.exists():
            raise UserError(f"--resume: {resume_dir} holds no manifest.json; not a run folder")
        run_dir = resume_dir
        if spec is None:
            saved = read_json(manifest_path).get("config", {}).get("spec_data")
            if saved is None:
                raise UserError(f"--resume: {resume_dir} is not a sweep run; give its SPEC")
            data, source = saved, f"{resume_dir}/manifest.json"
        else:
            data, source = spec_data(spec, **overrides)
    else:
        data, source = spec_data(spec, **overrides)
        name = run_id or (f"tiered_suite_{time.strftime('%Y%m%d_%H%M%S')}" if seed
                          else f"sweep_{time.strftime('%Y%m%d-%H%M%S')}")
        opts.check_run_id(name)
        run_dir = output_dir / name / name if seed else output_dir / name
    if limit is not None:
        data = limit_games(data, limit)
    parsed = _parse(data, source)
    try:
        plan = plan_sweep(parsed, run_dir.name)
    except ValueError as exc:  # a plan over the size bounds
        raise UserError(str(exc)) from None
    plan.config["spec_data"] = data
    # The seed's names of --use-dummy models (seed format) and its suite_metadata.json.
    use_dummy = bool(overrides.get("use_dummy"))
    if resume_dir is not None and spec is None:
        use_dummy = use_dummy or bool(read_json(resume_dir / "manifest.json")
                                      .get("config", {}).get("use_dummy"))
    plan.config["use_dummy"] = use_dummy
    plan.config["num_workers"] = num_workers or os.cpu_count()
    try:
        for model in plan.specs():  # a missing key or an unreachable server: before any work
            preflight(model, plan.extra_styles)
    except (BackendUnavailable, LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    opts.confirm_size(plan, run_dir, yes)
    plan = opts.plan_left(plan, run_dir)  # a resume announces what it still sends
    opts.make_output_dir(run_dir.parent if resume_dir is None else run_dir, "--output-dir"
                    if resume_dir is None else "--resume")
    total = sum(s.num_units for s in plan.shards)
    click.echo(f"sweep {parsed.name}: {len(plan.shards)} shards, {total:,} units (trials, episodes, games) -> {run_dir}",
               err=True)

    try:
        outcome = run_with_progress(plan, run_dir, parallel=parallel,
                                    num_workers=num_workers or os.cpu_count(), address=address,
                                    keep_warm=keep_warm, command=["distbench", *sys.argv[1:]],
                                    retry_failed=retry_failed,
                                    max_cost=parsed.max_cost if max_cost is None else max_cost,
                                    max_tokens_total=parsed.max_tokens_total
                                    if max_tokens_total is None else max_tokens_total,
                                    **execution_kwargs(execution, batch_max_requests,
                                                       batch_price))
    except (RunDirectoryError, BackendUnavailable, LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(["distbench", "sweep", "run", "--resume", str(run_dir)]) from None
    if outcome.budget_reached is not None:
        from distbench.cli.run import budget_stop

        raise budget_stop(outcome, ["distbench", "sweep", "run", "--resume", str(run_dir)])
    # The seed tool's layout: its own suite tables in the named folder itself (distbench's
    # in the run's report/ folder, as without it).
    written = write_suite_tables(run_dir, run_dir / "report")
    tables = run_dir.parent if seed else run_dir / "report"
    if seed:
        written += write_seed_files(run_dir, run_dir.parent, **seed_context())
    click.echo(f"{outcome.executed} shard(s) run, {outcome.skipped} skipped, "
               f"{outcome.elapsed_s:.1f} s", err=True)
    board = leaderboard_text(run_dir)
    if board:
        click.echo(board)
    click.echo(f"full tables (every bucket, every column): {tables}/", err=True)
    for path in written:
        click.echo(f"  {path}", err=True)
    check_calls(outcome.calls, allow_failed=allow_failed_calls,
                retry=["distbench", "sweep", "run", "--resume", str(run_dir), "--retry-failed"])


def _g(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def leaderboard_text(run_dir: Path) -> str | None:
    """The essential columns of the suite's leaderboard (``queries/leaderboard.sql``) for the
    terminal: per answer mode each model's rank by the headline quality with its 95% interval
    (models whose intervals overlap share a rank), valid-answer rate, honest exploitability and
    whom it ties with; None when the sweep played no matrix game. The files hold the rest."""
    from distbench.report.sql import render, resolve_query_file, run_sql

    columns, rows = run_sql(run_dir, resolve_query_file("leaderboard").read_text("utf-8"))
    records = [dict(zip(columns, row, strict=True)) for row in rows]
    if not records:
        return None
    head = ["mode", "rank", "tier", "model", "quality [95% CI]", "valid", "exploitability",
            "tied with"]
    body = [(r.get("mode"), r.get("rank"), r.get("tier"), f"{r.get('provider')}:{r.get('model')}",
             f"{_g(r.get('quality'))} [{_g(r.get('quality_ci95_low'))}"
             f", {_g(r.get('quality_ci95_high'))}]",
             _g(r.get("valid_rate")), _g(r.get("honest_exploitability")),
             r.get("tied_with") or "")
            for r in records]
    return ("leaderboard (headline quality in [0, 1], higher is better; an invalid answer "
            "scores 0)\n" + render(head, body, "table"))


@sweep.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder.  [default: RUN_DIR/report]")
def report_cmd(run_dir: Path, out_dir: Path | None) -> None:
    """Write the suite tables of RUN_DIR: big_table_all_runs.csv, big_table_aggregated.csv/.md,
    leaderboard.csv, tier_gradient.csv and suite_metadata.json."""
    if not run_dir.is_dir():
        raise UserError(f"no such run directory: {run_dir}")
    for path in write_suite_tables(run_dir, out_dir or run_dir / "report"):
        click.echo(str(path))
