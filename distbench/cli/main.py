"""The ``distbench`` command: a click group, one module per subcommand.

Errors: a :class:`UserError`, a click usage error or a known input error is printed as one
line ``error: ...`` with a non-zero exit code; anything unexpected is one line too, unless
``--debug`` (or ``DISTBENCH_DEBUG=1``) asks for the traceback.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from distbench import __version__
from distbench.cli.errors import Interrupted, UserError


class _Distbench(click.Group):
    """The ``distbench`` group: its own commands, and each family's (``Play.commands``, e.g.
    ``distbench fog ...``), found in the registry when asked for."""

    def _family_groups(self) -> dict[str, click.Command]:
        from distbench.cli.services import CliServices
        from distbench.games.registry import families

        out = {}
        for name, family in families().items():
            if family.play.commands and name not in self.commands:
                out[name] = family.command_group(CliServices())
        return out

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._family_groups()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            command = self._family_groups().get(cmd_name)
            if command is not None:
                from distbench.cli.options import bound_all_numbers

                bound_all_numbers(command)
        return command


@click.group(cls=_Distbench, context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "DISTBENCH"})
@click.version_option(__version__, prog_name="distbench")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Measure how well language models play strategic games, at any scale."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_RedactingFormatter(handler.formatter))
    from distbench.games.registry import load_families

    load_families()  # built-in families and installed plugins: their tables, their runners


class _RedactingFormatter(logging.Formatter):
    """Formats as ``inner`` does, then redacts the secrets of every URL in the line (a
    library's debug log, httpx's among them, prints request URLs with their query)."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self._inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        from distbench.llm.base import redact_url

        return redact_url(self._inner.format(record))


def _register() -> None:
    from distbench.cli import (
        check,
        compare,
        export,
        listing,
        publish,
        query,
        report,
        rescore,
        run,
        serve,
        shared,
        sweep,
        tournament,
        view,
    )

    for command in (run.run, query.query, check.check, compare.compare, export.export,
                    publish.publish, serve.serve, sweep.sweep, report.report, view.view,
                    rescore.rescore, tournament.tournament, listing.list_command,
                    *shared.shared_groups()):
        cli.add_command(command)
    from distbench.cli.options import bound_all_numbers

    bound_all_numbers(cli)


_register()


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("DISTBENCH_DEBUG", "") not in ("", "0")


def _error(message: str) -> None:
    """Prints ``error: <message>`` as one line: its first line, credentials of URLs
    redacted."""
    from distbench.llm.base import redact_url

    lines = str(message).strip().splitlines() or [""]
    click.echo(f"error: {redact_url(lines[0])}", err=True)


def _quiet_after_interrupt() -> None:
    """After the one line of a Ctrl-C: Ray's shutdown, and its workers' last log lines
    relayed to this process, go to /dev/null instead of the terminal."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.dup2(devnull, 1)


def _interrupted_query(exc: BaseException) -> bool:
    """DuckDB turns a Ctrl-C during a query into an exception of its own
    (``duckdb.InterruptException``, or a ``RuntimeError: Query interrupted`` while fetching):
    the user's interrupt, not a failure."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(exc, duckdb.InterruptException):
        return True
    return isinstance(exc, RuntimeError) and str(exc).strip() == "Query interrupted"


class _PipeSafeStdout:
    """Standard output that a closed reader cannot break (``distbench run ... | head -3``):
    the first write or flush that meets a closed pipe points file descriptor 1 at
    ``/dev/null``, and from then on the output is dropped while the command goes on (a run
    completes, its files are written). Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _dropped(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._dropped()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._dropped()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _guard_stdout() -> None:
    """Wraps ``sys.stdout`` in :class:`_PipeSafeStdout` (once; not when it has no file
    descriptor, as under a test runner's capture)."""
    stream = sys.stdout
    if stream is None or isinstance(stream, _PipeSafeStdout):
        return
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    sys.stdout = _PipeSafeStdout(stream)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    _guard_stdout()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(argv)
    try:
        rv = cli.main(args=argv, prog_name="distbench", standalone_mode=False)
    except click.exceptions.Abort:
        _error("interrupted")
        _quiet_after_interrupt()
        sys.exit(130)
    except click.ClickException as exc:
        if isinstance(exc, click.UsageError) and debug:
            raise
        _error(exc.format_message())
        sys.exit(exc.exit_code)
    except UserError as exc:
        if debug:  # the traceback, then the same line and exit status (3: failed calls)
            import traceback

            traceback.print_exc()
        _error(str(exc))
        if isinstance(exc, Interrupted):
            _quiet_after_interrupt()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("error: interrupted; committed shards are kept, re-run with the same --run-id to resume", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - last line of defence, one line unless --debug
        if debug:
            raise
        if _interrupted_query(exc):  # Ctrl-C while DuckDB ran a query (view, report, ...)
            _error("interrupted")
            sys.exit(130)
        text = (str(exc).strip().splitlines() or [""])[0]
        _error(f"{type(exc).__name__}: {text} (run with --debug for the traceback)")
        sys.exit(1)
    if isinstance(rv, int) and rv:
        sys.exit(rv)
