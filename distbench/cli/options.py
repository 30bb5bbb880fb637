"""Option groups shared by several commands (one definition, one help text), and the
``distbench run`` command class that adds each game family's own flags."""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from distbench.cli.errors import UserError
from distbench.engine.executors import DEFAULT_KEEP_WARM_S

CONFIRM_CALLS = 5_000
"""Model requests above which a run asks first (``--yes`` skips the question)."""


INT64_MAX = 2**63 - 1
"""The largest integer any flag takes (a seed or a count beyond it cannot be stored)."""


class _Bounded:
    """Mixin for click's number types: refuses ``nan`` and ``inf`` and integers beyond 64
    bits, in the usage error of the flag (one line)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        rv = super().convert(value, param, ctx)  # type: ignore[misc]
        if isinstance(rv, float) and not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)  # type: ignore[attr-defined]
        if isinstance(rv, int) and not isinstance(rv, bool) and abs(rv) > INT64_MAX:
            self.fail(f"{value!r} is too large (at most {INT64_MAX}).", param, ctx)  # type: ignore[attr-defined]
        return rv


class _BoundedFloat(_Bounded, click.types.FloatParamType):
    pass


class _BoundedInt(_Bounded, click.types.IntParamType):
    pass


class _BoundedFloatRange(_Bounded, click.FloatRange):
    pass


class _BoundedIntRange(_Bounded, click.IntRange):
    pass


def _bounded(kind: click.ParamType) -> click.ParamType:
    if isinstance(kind, _Bounded):
        return kind
    if isinstance(kind, (click.FloatRange, click.IntRange)):
        cls = _BoundedFloatRange if isinstance(kind, click.FloatRange) else _BoundedIntRange
        return cls(kind.min, kind.max, min_open=kind.min_open, max_open=kind.max_open,
                   clamp=kind.clamp)
    if type(kind) is click.types.FloatParamType:
        return _BoundedFloat()
    if type(kind) is click.types.IntParamType:
        return _BoundedInt()
    return kind


def bounded_numbers(params: list[click.Parameter]) -> None:
    """Makes every number flag of ``params`` refuse non-finite floats and integers beyond 64
    bits (``--temperature nan``, ``--seed 2**80``): click's own types let them through."""
    for param in params:
        param.type = _bounded(param.type)


def bound_all_numbers(command: click.Command) -> None:
    """:func:`bounded_numbers` over ``command`` and all its subcommands."""
    bounded_numbers(command.params)
    for sub in getattr(command, "commands", {}).values():
        bound_all_numbers(sub)


def _apply(options: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def decorate(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func
    return decorate


keep_warm_option = click.option(
    "--keep-warm", type=click.FloatRange(min=0), default=DEFAULT_KEEP_WARM_S,
    show_default=True, metavar="SECONDS",
    help="With --address: run shards on warm executors that stay on the cluster this long "
         "after the run, so the next run skips Ray's worker start-up (0: plain Ray tasks, "
         "nothing stays).")

def _check_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--address``: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT`` (with Ray's client
    installed), refused in one line before any work otherwise."""
    if value is None or value == "auto":
        return value
    import importlib.util
    from urllib.parse import urlsplit

    text = value if "://" in value else f"ray://{value}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        port, parts = None, None
    if parts is None or parts.scheme != "ray" or not parts.hostname or not port:
        raise click.BadParameter(f"expected auto, HOST:PORT or ray://HOST:PORT, got {value!r}")
    if value.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        python = sys.executable or "python3"
        raise click.BadParameter(f"a ray:// address needs Ray's client: {python} -m pip install "
                                 "'ray[client]' (or run on a cluster node with --address auto)")
    import socket

    try:  # nothing listening there: say so now, not after the run has started
        socket.create_connection((parts.hostname, port), timeout=ADDRESS_TIMEOUT).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise click.BadParameter(f"no Ray cluster answers at {parts.hostname}:{port} "
                                 f"({reason})") from None
    return value


ADDRESS_TIMEOUT = 3.0
"""Seconds ``--address`` waits for a TCP connection to the cluster before refusing it."""


execution_options = _apply([
    click.option("--parallel/--no-parallel", default=None,
                 help="Run shards as Ray tasks, or one by one in this process.  [default: "
                      "auto: here for a small run (one shard, or a small run of the dummy), "
                      "on Ray otherwise or with --address; it never changes a result]"),
    click.option("--num-workers", type=click.IntRange(min=1), default=None,
                 help="CPUs of the local Ray instance.  [default: all]"),
    click.option("--address", default=None, callback=_check_address,
                 help="Existing Ray cluster to use ('auto', HOST:PORT or ray://HOST:PORT)."),
    keep_warm_option,
    click.option("--retry-failed", is_flag=True,
                 help="Resuming a run: also play again the shards whose model calls failed "
                      "(call_failed rows), replacing their rows; with the response cache on, "
                      "only the failed calls reach the model again."),
    click.option("--allow-failed-calls", is_flag=True,
                 help="Exit 0 even when some model calls failed at the server (their trials "
                      "are left out of every figure either way).  [default: such a run exits "
                      "with status 3 and says how to resume it with --retry-failed]"),
    click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
                 help="Stop sending work before the run's spend (the endpoints' token counts "
                      "at --price, committed shards of earlier attempts included) could cross "
                      "USD: shards in flight finish and are committed, the run ends with state "
                      "budget_reached and exit status 4; the same command with a larger budget "
                      "finishes it."),
    click.option("--max-tokens-total", type=click.IntRange(min=1), default=None, metavar="N",
                 help="As --max-cost, in tokens (prompt + completion) as the endpoints reported "
                      "them."),
    click.option("--execution", type=click.Choice(["live", "batch"]), default="live",
                 show_default=True,
                 help="batch: send the requests through the provider's batch API (OpenAI "
                      "Batch: half price, answers within 24 h), single-turn families only; "
                      "a killed run resumes by polling the batches it submitted. The rows are "
                      "those of a live run."),
    click.option("--batch-max-requests", type=click.IntRange(min=1), default=50_000,
                 show_default=True, metavar="N", help="Requests per batch at most."),
    click.option("--batch-price", type=click.FloatRange(min=0), default=0.5,
                 show_default=True, metavar="SHARE",
                 help="Share of --price a batch answer costs."),
])
"""``--parallel/--no-parallel``, ``--num-workers``, ``--address``, ``--keep-warm``,
``--retry-failed``, ``--allow-failed-calls``, ``--max-cost``, ``--max-tokens-total``,
``--execution``, ``--batch-max-requests``, ``--batch-price``."""

size_options = _apply([
    click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
                 help="At most N games per cell (bucket and seed; per seed for the other "
                      "families), for a quick look, as lm-eval's --limit."),
    click.option("--yes", "-y", is_flag=True,
                 help=f"Start without asking, whatever the number of model requests (a run "
                      f"of more than {CONFIRM_CALLS:,} asks first, or refuses off a terminal)."),
])
"""``--limit N`` and ``--yes``."""


def plan_left(plan: Any, run_dir: Path) -> Any:
    """``plan`` with its estimates (requests, samples, tokens, cost) for the shards not
    committed in ``run_dir`` yet: what a resumed run will still send. The share left is
    counted in the units of the shards that call a model (a free in-process model's shards,
    such as the dummy's, cost nothing either way)."""
    import dataclasses

    from distbench.engine.worker import in_process, shard_specs
    from distbench.store.writer import committed_ids

    done = committed_ids(run_dir)
    if not done or not plan.expected_calls:
        return plan
    paid = [s for s in plan.shards if not all(in_process(m) for m in shard_specs(s))]
    total = sum(s.num_units for s in paid)
    left = sum(s.num_units for s in paid if s.shard_id not in done)
    if not total or left == total:
        return plan

    def share(value: Any) -> Any:
        return None if value is None else type(value)(value * left / total)

    return dataclasses.replace(
        plan, expected_calls=round(plan.expected_calls * left / total) or None,
        expected_requests=None if plan.expected_requests is None
        else round(plan.expected_requests * left / total),
        expected_tokens=None if plan.expected_tokens is None
        else tuple(round(t * left / total) for t in plan.expected_tokens),
        expected_cost=share(plan.expected_cost))


def confirm_size(plan: Any, run_dir: Path, yes: bool) -> None:
    """Asks before a run that will send more than :data:`CONFIRM_CALLS` model requests (those
    of its shards not committed yet, see :func:`plan_left`; a request of several samples
    counts once, as it is sent); off a terminal it refuses in one line instead. Runs of the
    dummy and other free models never ask."""
    left = plan_left(plan, run_dir)
    requests = left.expected_requests or left.expected_calls
    if yes or not requests or requests <= CONFIRM_CALLS:
        return
    what = f"this run sends about {requests:,} model requests"
    if sys.stdin.isatty() and sys.stderr.isatty():
        if not click.confirm(f"{what}; start it?", default=False, err=True):
            raise UserError("not started")
        return
    raise UserError(f"{what} (more than {CONFIRM_CALLS:,}): add --yes to start it, or "
                    "--limit N to play at most N games per cell")


RUN_ID_CHARS = "letters, digits and the characters . _ - + = @ ,"
_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+=@,-]{0,127}")


def check_run_id(run_id: str, flag: str = "--run-id") -> str:
    """``run_id`` when it is a safe folder name: at most 128 of :data:`RUN_ID_CHARS`,
    starting with a letter, a digit or ``_`` (no path separator, no glob or shell character,
    no white space or control character); else a one-line :class:`UserError`."""
    if not _RUN_ID.fullmatch(run_id):
        raise UserError(f"{flag} must be a folder name of 1 to 128 {RUN_ID_CHARS} (the "
                        f"first a letter, digit or _), got {run_id[:60]!r}"
                        + ("..." if len(run_id) > 60 else ""))
    return run_id


def make_output_dir(path: Path, flag: str = "--output-dir") -> Path:
    """Creates the folder of run folders (and its parents) before a command prints anything,
    so a place where no folder can be made is one line naming it (:class:`UserError`): a
    dangling symbolic link, a file, or a file system that refuses (``/proc/x``)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if path.is_symlink() and not path.exists():
            why = f"a symbolic link to {os.readlink(path)}, which does not exist"
        elif path.exists() and not path.is_dir():
            why = "a file, not a folder"
        else:
            why = f"cannot create it ({exc.strerror or type(exc).__name__})"
        raise UserError(f"{flag} {path}: {why}; choose another folder") from None
    return path


output_dir_option = click.option(
    "--output-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"),
    show_default=True, help="Folder of run folders.")


def _own_default(ctx: click.Context, option: click.Option) -> Any:
    """The value a family's own declaration of ``option`` gives when the flag is not given
    (click's "no default" becomes what click passes then: None, or () for a repeated flag)."""
    value = option.get_default(ctx)
    if value is None or type(value).__name__ == "Sentinel":
        return () if option.multiple else (False if option.is_flag else None)
    return option.type_cast_value(ctx, value)


class FamilyCommand(click.Command):
    """A command whose parameters grow, on first use, by every registered game family's own
    flags (``Family.options``): built-in and plugin families alike. ``--help`` lists each
    family's flags under its name; a family's flag given with another ``--family`` is
    refused in one line (:meth:`check_family_options`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._owners: dict[str, list[str]] | None = None
        self._defaults: dict[tuple[str, str], click.Option] = {}
        """(flag name, family) -> that family's own declaration of a flag (for its default)."""

    def _add_family_options(self) -> dict[str, list[str]]:
        if self._owners is None:
            from distbench.games.registry import families

            owners: dict[str, list[str]] = {}
            taken = {p.name: p for p in self.params}
            for name, family in families().items():
                for option in family.cli_options():
                    self._defaults[(option.name, name)] = option
                    known = taken.get(option.name)
                    if known is None:
                        self.params.append(option)
                        taken[option.name] = option
                        owners[option.name] = [name]
                    elif option.name in owners:  # two families share a flag
                        owners[option.name].append(name)
            bounded_numbers(self.params)
            modes = "; ".join(f"{name}: {' | '.join(f.identity.modes)}"
                              for name, f in families().items() if f.identity.modes)
            mode = taken.get("mode_names")
            if mode is not None and modes and mode.help and "Modes:" not in mode.help:
                mode.help += f" Modes: {modes}."
            family = taken.get("family")
            if family is not None and family.help and "Families:" not in family.help:
                from distbench.games.registry import default_family

                family.help += (f" Families: {', '.join(families())}.  [default: "
                                f"{default_family()}]")
            self._owners = owners
        return self._owners

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        self._add_family_options()
        return super().get_params(ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        owners = self._add_family_options()
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                owner = owners.get(param.name or "")
                title = f"{' and '.join(owner)} options" if owner else "Options"
                groups.setdefault(title, []).append(record)
        for title, records in groups.items():
            with formatter.section(title):
                formatter.write_dl(records)

    def own_defaults(self, ctx: click.Context, family: str,
                     options: dict[str, Any]) -> dict[str, Any]:
        """``options`` with every flag ``family`` shares with another family, when not given,
        at ``family``'s own default (the flag's one click parameter carries the first
        family's)."""
        out = dict(options)
        for name, owner in self._add_family_options().items():
            given = ctx.get_parameter_source(name) in (click.core.ParameterSource.COMMANDLINE,
                                                       click.core.ParameterSource.ENVIRONMENT)
            if len(owner) > 1 and family in owner and not given:
                out[name] = _own_default(ctx, self._defaults[(name, family)])
        return out

    def check_family_options(self, ctx: click.Context, family: str) -> None:
        """Refuses a flag of another family given on the command line (it would be ignored)."""
        for name, owner in self._add_family_options().items():
            source = ctx.get_parameter_source(name)
            if family not in owner and source is click.core.ParameterSource.COMMANDLINE:
                param = next(p for p in self.params if p.name == name)
                flag = max(param.opts, key=len)
                raise click.UsageError(f"{flag} is a flag of the {' and '.join(owner)} "
                                       f"family, not of {family}")
