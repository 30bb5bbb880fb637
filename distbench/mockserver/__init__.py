"""The mock server: an OpenAI-compatible HTTP server on loopback with deterministic faults.

A tool for testing clients, retry logic and whole runs without a hosted model (``distbench
serve mock``), and the way to put the bundled small model behind HTTP (``distbench serve
local``). It speaks ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models``
(Anthropic's ``/v1/messages`` too), the OpenAI Batch API and Anthropic Message Batches, and
counts what it served at ``/stats``.

- :mod:`~distbench.mockserver.faults`: :class:`ServerConfig` (address, latency, rate limit,
  fault fractions, API key) and the seeded, stratified fault draws (:func:`fault_plan`).
- :mod:`~distbench.mockserver.answerers`: who answers: :class:`MockAnswerer` (reads matrix
  prompts, answers what the ``dummy`` backend answers, with log-probabilities when asked) and
  :class:`LocalAnswerer` (the bundled llama.cpp model).
- :mod:`~distbench.mockserver.wire`: OpenAI request checks and response bodies.
- :mod:`~distbench.mockserver.http`: the stdlib server, its counters, :func:`start_server`.

Same seed, same calls in the same order: same faults and same answers. The mock may know the
games' prompts (it sits above ``games``); nothing but the CLI and tests imports it.

Example:
    >>> with start_server(ServerConfig(seed=1, fail_500=0.1)) as server:
    ...     url = server.url  # http://127.0.0.1:<port>, give it to the openai backend
"""

from __future__ import annotations

from distbench.mockserver.answerers import Answerer, LocalAnswerer, MockAnswerer, detect_task
from distbench.mockserver.faults import FAULT_KINDS, ServerConfig, fault_plan
from distbench.mockserver.http import RunningServer, start_server
from distbench.mockserver.wire import BadRequest, chat_response, completion_response

__all__ = [
    "FAULT_KINDS",
    "Answerer",
    "BadRequest",
    "LocalAnswerer",
    "MockAnswerer",
    "RunningServer",
    "ServerConfig",
    "chat_response",
    "completion_response",
    "detect_task",
    "fault_plan",
    "start_server",
]
