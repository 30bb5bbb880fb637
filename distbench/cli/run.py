"""``distbench run``: play one model on a game family's games and print its summary."""

from __future__ import annotations

import math
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click

from distbench.cli.errors import UserError, interrupted
from distbench.cli.options import (
    FamilyCommand,
    check_run_id,
    confirm_size,
    execution_options,
    make_output_dir,
    output_dir_option,
    plan_left,
    size_options,
)
from distbench.cli.progress import run_with_progress


def _resolve_run_dir(
    output_dir: Path, run_id: str | None, label: str, overwrite: bool,
    check_only: bool = False, stamp: str = "%Y%m%d-%H%M%S", nested: bool = False,
) -> Path:
    """The run folder: ``--run-id`` exactly, ``<modes>_latest`` with ``--overwrite``, else a
    timestamped name ``<label>_<stamp>`` (``<label>_YYYYmmdd-HHMMSS``); with ``nested``, the
    folder of the same name inside that one. With ``--overwrite`` an existing run folder is
    removed (unless ``check_only``: then it is only checked)."""
    if run_id is not None:
        name = check_run_id(run_id)
    elif overwrite:
        name = f"{label}_latest"
    else:
        name = f"{label}_{time.strftime(stamp)}"
    top = output_dir / name
    run_dir = top / name if nested else top
    if overwrite and top.exists():
        # The run in it: the folder itself, or the one inside it (--output-format seed).
        found = [d for d in (top, top / name)
                 if (d / "manifest.json").exists() or (d / "_commits").is_dir()]
        if not found:
            raise UserError(
                f"refusing to overwrite {top}: it is not a distbench run directory"
            )
        if not check_only:
            from distbench.store.writer import RunDirBusy, exclusive

            try:
                with exclusive(found[0]):  # never delete a run another driver is writing
                    shutil.rmtree(top)
            except RunDirBusy as exc:
                raise UserError(str(exc)) from None
    return run_dir


@click.command(cls=FamilyCommand)
@click.option("--family", default=None, metavar="NAME",
              help="Game family, a built-in one or one an installed plugin adds (its own "
                   "flags are listed below under its name).")
@click.option("--num-games", type=click.IntRange(min=1), default=100, show_default=True,
              help="Games per seed and condition (the family's unit: instances, games per "
                   "seat order...).")
@click.option("--mode", "mode_names", multiple=True, metavar="MODE",
              help="How the model plays; each family has its own modes, the first being the "
                   "default.")
@click.option("--opponent", default=None,
              help="The other seat, in the families that have one: one of the family's "
                   "scripted players, or a model as PROVIDER[:MODEL].  [default: the "
                   "family's]")
@click.option("--seed", "seeds", type=click.IntRange(min=0), multiple=True, default=(42,),
              show_default=True, help="Seed of the games (repeatable).")
@click.option("--llm-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the model's sampling.")
@click.option("--llm-type", default=None,
              help="Model provider (see the README's providers).  [default: local when the "
                   "bundled model is installed, else dummy]")
@click.option("--llm-model", default=None, help="Model name (default: the provider's).")
@click.option("--base-url", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Requests per minute allowed (default: the provider's).")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Tokens per minute allowed (default: the provider's).")
@click.option("--max-concurrency", type=click.IntRange(min=1), default=None,
              help="Requests in flight at once (default: the provider's).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds one attempt may take, whole: connecting, sending, reading the "
                   "last byte.  [default: 60]")
@click.option("--max-retries", type=click.IntRange(min=0), default=None,
              help="Retries after the first attempt.  [default: 5]")
@click.option("--max-n", type=click.IntRange(min=1), default=None,
              help="Most answers one request may ask for (OpenAI's n) when the trials of a game "
                   "share their prompt; 1 sends one request per trial (default: the "
                   "provider's).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--price", default=None, metavar="IN,OUT",
              help="The model's price in USD per million prompt and completion tokens, e.g. "
                   "2.5,10, for the cost estimate and the cost of the run (no price is assumed).")
@click.option("--style", type=click.Choice(["chat", "completion"]), default=None,
              help="Prompt style: chat (instruction models) or completion (raw base models).")
@click.option("--temperature", type=click.FloatRange(min=0), default=1.0, show_default=True)
@click.option("--reasoning", type=click.Choice(["direct", "cot"]), default="direct",
              show_default=True,
              help="direct: answer at once; cot: reason first, then the answer alone on the "
                   "final line (only that line is parsed; the reasoning is kept). Every family.")
@click.option("--reasoning-tokens", type=click.IntRange(min=1), default=None,
              help="Completion budget of a cot answer.  [default: 512]")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Completion budget per answer.  [default: 256 in chat style; in completion "
                   "style 16 (pure) or 64 (mixed)]")
@output_dir_option
@click.option("--run-id", default=None, help="Exact run folder name (re-running it resumes).")
@click.option("--overwrite", is_flag=True,
              help="Replace the run folder (<mode>_latest, or pure_and_mixed_latest with "
                   "--combined, unless --run-id names it).")
@click.option("--wide", is_flag=True,
              help="Print the summary as one wide table.  [default: fit the terminal, at "
                   "most 100 columns: the headline, its interval, the valid rate and the "
                   "counts first, the other figures in blocks below]")
@execution_options
@size_options
def run(family: str | None, llm_type: str | None, llm_model: str | None, style: str | None,
        base_url: str | None, rpm: float | None, tpm: float | None,
        max_concurrency: int | None, timeout: float | None, max_retries: int | None,
        max_n: int | None, no_cache: bool, price: str | None, reasoning: str,
        reasoning_tokens: int | None, output_dir: Path, run_id: str | None,
        overwrite: bool, wide: bool, parallel: bool | None,
        num_workers: int | None, address: str | None, keep_warm: float,
        retry_failed: bool, allow_failed_calls: bool, max_cost: float | None,
        max_tokens_total: int | None, execution: str, batch_max_requests: int,
        batch_price: float, limit: int | None, yes: bool,
        **options: object) -> None:
    """Play a model on a game family (``--family``; every registered family is listed below
    with its own flags and modes)."""
    from distbench.engine.driver import RunDirectoryError, preflight
    from distbench.games.registry import UnknownFamilyError, default_family, get_family
    from distbench.llm.base import BackendSpec, BackendUnavailable, check_url
    from distbench.llm.batch import BatchError
    from distbench.llm.local import LocalModelUnavailable, local_available
    from distbench.llm.registry import UnknownProviderError, make_spec, resolve_spec

    ctx = click.get_current_context()
    options = dict(ctx.params)
    try:
        chosen = get_family(default_family() if family is None else family)
    except UnknownFamilyError as exc:
        raise UserError(str(exc)) from None
    assert isinstance(ctx.command, FamilyCommand)
    ctx.command.check_family_options(ctx, chosen.name)
    options = ctx.command.own_defaults(ctx, chosen.name, options)
    modes = chosen.identity.modes
    bad_modes = [m for m in options.get("mode_names") or () if m not in modes]
    if bad_modes:
        raise click.BadParameter(
            f"{chosen.name} has no mode {bad_modes[0]!r}"
            + (f"; use {', '.join(modes)}" if modes else " (it has no modes)"),
            param_hint="'--mode'")
    if base_url is not None and check_url(base_url):
        raise click.BadParameter(check_url(base_url), param_hint="'--base-url'")
    if limit is not None:
        options["num_games"] = min(options["num_games"], limit)
    defaulted = False  # the dummy stands in for the bundled model, which is not installed
    try:
        if llm_type is None:
            llm_type = "local" if local_available() else "dummy"
            defaulted = llm_type == "dummy"
        if llm_type.startswith("scripted:"):
            spec = BackendSpec(provider=llm_type, model=llm_type.partition(":")[2])
        else:
            spec = resolve_spec(make_spec(
                llm_type, llm_model, style, base_url=base_url, rpm=rpm, tpm=tpm,
                max_concurrency=max_concurrency, timeout=timeout, max_retries=max_retries,
                max_n=max_n, cache=False if no_cache else None, **_price(price),
                **_reasoning(reasoning, reasoning_tokens),
            ))
        command = chosen.command_run(options, spec)
    except (UnknownProviderError, BackendUnavailable,
            LocalModelUnavailable, ValueError) as exc:
        raise UserError(str(exc)) from None
    layout = {"stamp": command.stamp, "nested": command.nested}
    run_dir = _resolve_run_dir(output_dir, run_id, command.folder, overwrite, check_only=True,
                               **layout)
    plan = command.plan(run_dir.name)
    if defaulted and any(m.provider == "dummy" for m in plan.specs()):
        # said only when a model plays: scripted players alone need none
        from distbench.llm.local import INSTALL_HINT

        click.echo(f"note: the bundled model is not installed ({INSTALL_HINT}); "
                   "playing the dummy model", err=True)
    try:
        for model in plan.specs():  # a missing key or an unreachable server: before any work
            preflight(model, plan.extra_styles)
    except (BackendUnavailable, LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    if execution == "batch":  # refused before the run's header: the refusal is its one line
        from distbench.engine.batching import check_batchable

        check_batchable(plan)
    if not overwrite:
        confirm_size(plan, run_dir, yes)
        plan = plan_left(plan, run_dir)  # a resume announces what it still sends
    make_output_dir(output_dir)
    _resolve_run_dir(output_dir, run_dir.name, command.folder, overwrite, **layout)
    click.echo(f"run {run_dir.name}: {command.label}", err=True)
    try:
        outcome = run_with_progress(
            plan,
            run_dir,
            parallel=parallel,
            num_workers=num_workers or os.cpu_count(),
            address=address,
            keep_warm=keep_warm,
            command=["distbench", *sys.argv[1:]],
            retry_failed=retry_failed,
            max_cost=max_cost,
            max_tokens_total=max_tokens_total,
            **execution_kwargs(execution, batch_max_requests, batch_price),
        )
    except (RunDirectoryError, BackendUnavailable, LocalModelUnavailable) as exc:
        raise UserError(str(exc)) from None
    except BatchError as exc:
        raise UserError(f"--execution batch: {exc}; the same command resumes (submitted "
                        "batches are polled, not sent again)") from None
    except KeyboardInterrupt:
        raise interrupted(resume_command(sys.argv[1:], run_dir.name)) from None
    if outcome.budget_reached is not None:
        raise budget_stop(outcome, resume_command(sys.argv[1:], run_dir.name))
    click.echo(format_run_summary(command.format_summary, outcome.summary,
                                  None if wide else summary_width()))
    if command.finish is not None:
        top = run_dir.parent if command.nested else run_dir
        for path in command.finish(outcome.run_dir, top):
            click.echo(str(path), err=True)
    click.echo(
        f"\n{outcome.executed} shard(s) run, {outcome.skipped} already committed, "
        f"{outcome.elapsed_s:.1f} s. Results: {outcome.run_dir}", err=True
    )
    click.echo(f'Query them: distbench query {outcome.run_dir} "select * from '
               f'{chosen.main_table} limit 5"', err=True)
    retry = resume_command(sys.argv[1:], run_dir.name)
    check_calls(outcome.calls, allow_failed=allow_failed_calls,
                retry=retry if "--retry-failed" in retry else [*retry, "--retry-failed"])


def summary_width() -> int:
    """Columns a console summary may use: the terminal's (``COLUMNS`` when set), at most 100."""
    return min(100, shutil.get_terminal_size((100, 24)).columns)


def format_run_summary(formatter: Any, records: list[dict[str, Any]], width: int | None) -> str:
    """A run's summary for the console: the family's ``format_summary`` (given ``width`` when
    it takes one: every line fits it; None: its wide table), else a plain table of the
    records."""
    import inspect

    from distbench.report.document import fit_lines

    if formatter is not None:
        if "width" in inspect.signature(formatter).parameters:
            return formatter(records, width=width)
        return formatter(records)
    if not records:
        return ""
    columns = list(records[0])
    cells = [["-" if r.get(c) is None else str(r.get(c)) for c in columns] for r in records]
    return "\n".join(fit_lines(columns, cells, width))


def resume_command(args: list[str], run_id: str) -> list[str]:
    """The ``distbench run`` command line that resumes run ``run_id`` started with ``args``:
    the same flags without ``--overwrite``, with ``--run-id`` naming the folder."""
    out: list[str] = ["distbench"]
    has_id = False
    for arg in args:
        if arg == "--overwrite":
            continue
        has_id = has_id or arg == "--run-id" or arg.startswith("--run-id=")
        out.append(arg)
    return out if has_id else [*out, "--run-id", run_id]


def _reasoning(reasoning: str, tokens: int | None) -> dict[str, object]:
    """The model options of ``--reasoning``: none for ``direct`` (so a direct run keeps the
    identity it had before the factor existed), ``reasoning`` and its budget for ``cot``."""
    if reasoning == "direct":
        if tokens is not None:
            raise click.BadParameter("applies to --reasoning cot only",
                                     param_hint="'--reasoning-tokens'")
        return {}
    from distbench.llm.base import DEFAULT_REASONING_TOKENS

    return {"reasoning": reasoning, "reasoning_tokens": tokens or DEFAULT_REASONING_TOKENS}


def _price(text: str | None) -> dict[str, float]:
    """``--price IN,OUT`` as backend options (ValueError: one line)."""
    if text is None:
        return {}
    try:
        pin, pout = (float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--price: expected IN,OUT in USD per million tokens such as 2.5,10, "
                         f"got {text!r}") from None
    if pin < 0 or pout < 0:
        raise ValueError(f"--price: prices cannot be negative, got {text!r}")
    return {"price_in": pin, "price_out": pout}


def execution_kwargs(execution: str, max_requests: int, price: float) -> dict[str, object]:
    """``run_plan``'s execution arguments from ``--execution``, ``--batch-max-requests`` and
    ``--batch-price``."""
    if execution != "batch":
        return {}
    from distbench.engine.batching import BatchLimits

    return {"execution": "batch", "batch_limits": BatchLimits(max_requests=max_requests),
            "batch_price": price}


class BudgetReached(UserError):
    """The run's budget (``--max-cost``, ``--max-tokens-total``) stopped it; its committed
    rows are kept: exit status 4 (:data:`distbench.engine.budget.BUDGET_EXIT`)."""

    exit_code = 4


def budget_stop(outcome: object, command: list[str]) -> BudgetReached:
    """The one line of a run its budget stopped: the spend, the shards left, and ``command``
    (the run's own) with a budget that covers what is left (at most, by the estimates)."""
    figures = outcome.budget_reached  # type: ignore[attr-defined]
    new = _without(command, ("--max-cost", "--max-tokens-total"))
    spent = []
    if figures.get("max_cost_usd") is not None:
        spent.append(f"${figures['spent_usd'] or 0:,.4f} of ${figures['max_cost_usd']:,.2f}")
        need = (figures["spent_usd"] or 0) + figures["rest_usd"]
        new += ["--max-cost", f"{math.ceil(need * 100) / 100:.2f}"]
    if figures.get("max_tokens_total") is not None:
        spent.append(f"{figures['spent_tokens']:,} of {figures['max_tokens_total']:,} tokens")
        new += ["--max-tokens-total", str(figures["spent_tokens"] + figures["rest_tokens"])]
    return BudgetReached(
        f"budget reached: spent {' and '.join(spent)} (the endpoints' token counts"
        + (f"; partly estimated: {figures['estimated_calls']:,} answer(s) without usable "
           "counts at their request's ceiling" if figures.get("estimated_calls") else "")
        + "); "
        f"{outcome.executed} shard(s) committed now, {figures['shards_left']} left; "  # type: ignore[attr-defined]
        f"continue with a new budget: {shlex.join(new)}")


def _without(command: list[str], flags: tuple[str, ...]) -> list[str]:
    """``command`` without ``flags`` and their values (``--flag V`` or ``--flag=V``)."""
    out: list[str] = []
    skip = False
    for arg in command:
        if skip:
            skip = False
            continue
        if arg in flags:
            skip = True
            continue
        if arg.partition("=")[0] in flags:
            continue
        out.append(arg)
    return out


FAILED_CALLS_EXIT = 3
"""Exit status of a run that ends with model calls that failed at the server (unless
``--allow-failed-calls``): its rows are written, the failed trials are left out of every
figure, and ``--retry-failed`` plays them again. Bad input is 2, an interrupt 130."""


class RunFailed(UserError):
    """The run finished, its rows are written, and some of its model calls failed at the
    server: exit status 3 (:data:`FAILED_CALLS_EXIT`)."""

    exit_code = FAILED_CALLS_EXIT


def check_calls(health: dict | None, *, allow_failed: bool = False,
                retry: list[str] | None = None) -> None:
    """Says how a run's model calls went. Failed calls are not the model's: their trials are
    left out of every figure, and the run exits with status 3, its last line (one
    ``error:`` line) naming the cause and the command that resumes it with
    ``--retry-failed`` (``retry``); with ``allow_failed`` a warning or note instead, exit 0."""
    if health and health.get("prompt_tokens") is not None:
        cost = health.get("cost_usd")
        shown = ("unknown (no --price given)" if cost is None else f"${cost:,.4f}"
                 + (" (no call billed: every answer came from the response cache)"
                    if health.get("billed_calls") == 0 else ""))
        click.echo(f"tokens (as the endpoints reported them, cache hits not counted): "
                   f"{health['prompt_tokens']:,} prompt, {health['completion_tokens']:,} "
                   f"completion; cost: {shown}"
                   + (f" (partly estimated: {health['usage_estimated_calls']:,} answer(s) "
                      "without usable token counts counted at their request's ceiling)"
                      if health.get("usage_estimated_calls") else ""),
                   err=True)
    if not health or not health.get("failed"):
        return
    top = health.get("top_failure") or {}
    cause = top.get("explained") or top.get("error") or "unknown"
    what = (f"all {health['calls']} model calls failed" if health["failed"] == health["calls"]
            else f"{health['failed']} of {health['calls']} model calls failed "
                 f"({100 * health['failed_share']:.0f}%)")
    if not allow_failed:
        resume = f"; resume with --retry-failed: {shlex.join(retry)}" if retry else \
            "; resume with --retry-failed"
        raise RunFailed(f"{what} at the server, most often: {cause}; their trials are left "
                        f"out of every figure (not the model's){resume}")
    level = "warning" if health["failed_share"] > 0.5 else "note"
    click.echo(f"{level}: {what} (call_failed rows, left out of every figure), most often: "
               f"{cause}; --retry-failed plays them again", err=True)
