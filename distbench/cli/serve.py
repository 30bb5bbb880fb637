"""``distbench serve``: run an OpenAI-compatible server on this machine.

``distbench serve mock`` answers matrix prompts like the ``dummy`` backend and injects faults
on demand (for testing clients and retry logic); ``distbench serve local`` serves the bundled
small model. Both print ``serving <kind> on http://HOST:PORT`` to stderr once listening and
run until SIGINT or SIGTERM (exit code 0).

The mock's API key, when wanted, comes from ``DISTBENCH_MOCK_API_KEY`` only: a flag would
land in shell history and process listings.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from typing import Any

import click

from distbench.cli.errors import UserError

API_KEY_ENV = "DISTBENCH_MOCK_API_KEY"

_FRACTION = click.FloatRange(0.0, 1.0)


def _share_option(flag: str, help_text: str) -> Any:
    """A fault's ``flag``: the share of calls (or lines) it strikes, in [0, 1], 0 by default."""
    return click.option(flag, type=_FRACTION, default=0.0, show_default=True, help=help_text)


def _listen_options(func: Any) -> Any:
    func = click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
                        help="TCP port (0: any free one; the serving line shows it).")(func)
    func = click.option("--host", default="127.0.0.1", show_default=True,
                        help="Address to listen on (IPv4).")(func)
    return func


@click.group()
def serve() -> None:
    """Run an OpenAI-compatible server (mock with faults, or the bundled local model)."""


@serve.command()
@_listen_options
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the fault draws and of answers to calls without a seed.")
@click.option("--latency-ms", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Delay added to every /v1 response.")
@click.option("--rate-limit-rps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Token bucket: calls per second (burst R/10, at least 1); over it: 429.")
@_share_option("--fail-429", "Fraction of calls answered 429 with Retry-After.")
@click.option("--retry-after", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Seconds announced by injected 429s.")
@_share_option("--fail-500", "Fraction answered 500.")
@_share_option("--fail-503", "Fraction answered 503.")
@_share_option("--hang", "Fraction never answered (held, then the connection is dropped).")
@click.option("--hang-seconds", type=click.FloatRange(min=0), default=3600.0,
              show_default=True, help="How long a hung call is held.")
@_share_option("--truncate", "Fraction answered 200 with a cut-off JSON body.")
@_share_option("--non-json", "Fraction answered 200 with an HTML page.")
@_share_option("--garbage", "Fraction answered 200 with a nonsense answer text.")
@_share_option("--hostile", "Fraction answered with the hostile body --hostile-body.")
@click.option("--hostile-body", metavar="NAME", default="usage_1e30", show_default=True,
              help="The hostile body: odd usage (usage_1e30, usage_nan, usage_inf, "
                   "usage_int64_max, usage_negative, usage_string_count, usage_list_count, "
                   "usage_list, usage_string), surrogate, html, a bad choice index (index_string, "
                   "index_duplicate, index_range), drip (a byte a second), huge (1 GB), or a "
                   "429 with an unbounded Retry-After (retry_after_huge, retry_after_inf, "
                   "retry_after_2099).")
@click.option("--n-mode", type=click.Choice(["serve", "ignore", "reject"]), default="serve",
              show_default=True,
              help="A request's n (several choices): answer n choices, answer one "
                   "(llama-cpp-python's server) or answer 400 (llama-server).")
@click.option("--batch-dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the Batch API's files and batches (/v1/files, /v1/batches), "
                   "kept over restarts.  [default: a new temporary folder]")
@click.option("--batch-delay", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds from a batch's creation to its completion.")
@_share_option("--batch-fail", "Fraction of a faulty batch's requests sent to its error file.")
@click.option("--batch-expire", is_flag=True,
              help="Faulty batches expire with half their requests done.")
@click.option("--batch-faulty", type=click.IntRange(min=0), default=None,
              help="How many of the first batches --batch-fail and --batch-expire apply to.  "
                   "[default: all]")
def mock(host: str, port: int, **faults: Any) -> None:
    """Serve seeded dummy answers to matrix prompts, with injected faults.

    Set DISTBENCH_MOCK_API_KEY to require "Authorization: Bearer <key>" (or "x-api-key:
    <key>", as the anthropic provider sends it to /v1/messages).
    """
    from distbench.mockserver import MockAnswerer, ServerConfig
    from distbench.mockserver.http import SWITCH_INTERVAL

    api_key = os.environ.get(API_KEY_ENV) or None
    try:
        config = ServerConfig(host=host, port=port, api_key=api_key, **faults)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _serve("mock", config, MockAnswerer(config.seed), switch_interval=SWITCH_INTERVAL)


@serve.command()
@_listen_options
@click.option("--model-path", type=click.Path(dir_okay=False), default=None,
              help="GGUF file (default: $DISTBENCH_LOCAL_MODEL, else the bundled SmolLM2).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of answers to calls without a seed.")
def local(host: str, port: int, model_path: str | None, seed: int) -> None:
    """Serve the bundled small model (SmolLM2-135M-Instruct via llama.cpp)."""
    from distbench.llm.local import LocalModel, LocalModelUnavailable
    from distbench.mockserver import LocalAnswerer, ServerConfig

    config = ServerConfig(host=host, port=port, seed=seed)
    try:
        model = LocalModel(model_path, seed=seed)
    except LocalModelUnavailable as exc:
        raise UserError(str(exc)) from None
    model.warm_up()
    _serve("local", config, LocalAnswerer(model, seed=seed))


def _serve(kind: str, config: Any, answerer: Any, switch_interval: float | None = None) -> None:
    """Serves until SIGINT or SIGTERM (with the GIL's ``switch_interval`` meanwhile, if given)."""
    from distbench.mockserver import start_server

    try:
        server = start_server(config, answerer)
    except OSError as exc:
        where = f"{config.host}:{config.port}"
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"port {config.port} is already in use on {config.host}; choose another "
                "--port (0 picks a free one)"
            ) from None
        raise UserError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    interval = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval or interval)
    try:
        click.echo(f"serving {kind} on {server.url}", err=True)
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        sys.setswitchinterval(interval)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo(f"stopped serving {kind}", err=True)
