"""The red team's small items: ``"index": null`` is a position, ``Retry-After: nan`` is no
announcement, a priced run answered from the cache costs $0, and Ctrl-C while the command line
loads is one line and exit 130."""

from __future__ import annotations

import asyncio
import importlib.abc
import logging
import sys

import httpx
import pytest
from cli_server import distbench

from distbench.llm.base import Request
from distbench.llm.http import OpenAICompatibleBackend, parse_body
from distbench.llm.limits import RETRY_AFTER_CAP_S, retry_after_seconds
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server


def test_a_null_index_stands_at_its_position():
    body = {"choices": [{"index": None, "message": {"content": "Action: 2"}}]}
    assert parse_body("chat", body).text == "Action: 2"


@pytest.mark.parametrize("headers, expected", [
    ({"Retry-After": "nan"}, None), ({"Retry-After": "NaN"}, None),
    ({"retry-after-ms": "nan"}, None), ({"retry-after-ms": "nan", "Retry-After": "2"}, 2.0),
])
def test_a_nan_retry_after_is_no_announcement(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_a_429_with_retry_after_nan_backs_off_as_without_the_header():
    replies = iter([httpx.Response(429, headers={"Retry-After": "nan"}),
                    httpx.Response(200, json={"choices": [{"message": {"content": "1"}}]})])
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    spec = make_spec("vllm", "m", "chat", base_url="http://testserver", rpm=None,
                     max_retries=2, timeout=5.0)
    backend = OpenAICompatibleBackend(spec, transport=httpx.MockTransport(lambda r: next(replies)),
                                      sleep=fake_sleep)
    [answer] = asyncio.run(backend.generate([Request(prompt="Pick.", seed=1, max_tokens=8)]))
    assert answer.status == "ok" and answer.attempts == 2
    assert len(sleeps) == 1 and sleeps[0] < 0.5 * RETRY_AFTER_CAP_S


def test_a_priced_run_answered_from_the_cache_costs_nothing(tmp_path):
    with start_server(ServerConfig()) as server:
        base = ["run", "--llm-type", "llamacpp", "--base-url", server.url, "--num-games", "2",
                "--num-trials", "2", "--no-parallel", "--price", "2.5,10"]
        first = distbench(*base, "--run-id", "a", cwd=tmp_path)
        cached = distbench(*base, "--run-id", "b", cwd=tmp_path)
    assert first.returncode == 0 and cached.returncode == 0, cached.stderr
    assert "no call billed" not in first.stderr
    assert ("cost: $0.0000 (no call billed: every answer came from the response cache)"
            in cached.stderr), cached.stderr
    assert "unknown" not in cached.stderr


class _Interrupting(importlib.abc.MetaPathFinder):
    """Raises KeyboardInterrupt when ``distbench.cli.main`` is imported (a Ctrl-C then)."""

    def find_spec(self, name, path=None, target=None):
        if name == "distbench.cli.main":
            raise KeyboardInterrupt
        return None


def test_ctrl_c_while_the_command_line_loads_is_one_line(monkeypatch, capsys):
    from distbench.cli.entry import main

    for name in [m for m in sys.modules if m == "distbench.cli.main"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_Interrupting(), *sys.meta_path])
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def _one_line(args: list[str], capsys, caplog) -> str:
    from distbench.cli.main import main

    caplog.set_level(logging.WARNING)
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code not in (0, None)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    lines += [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_a_refused_game_without_rules_text_is_one_line(tmp_path, monkeypatch, capsys, caplog):
    pytest.importorskip("pyspiel")
    monkeypatch.chdir(tmp_path)
    line = _one_line(["run", "--family", "openspiel", "--game", "chess", "--opponent",
                      "equilibrium", "--llm-type", "dummy", "--no-parallel"], capsys, caplog)
    assert "--opponent equilibrium" in line


def test_a_multi_turn_batch_run_is_refused_before_its_header(tmp_path, monkeypatch, capsys,
                                                             caplog):
    pytest.importorskip("pyspiel")
    monkeypatch.chdir(tmp_path)
    with start_server(ServerConfig()) as server:
        line = _one_line(["run", "--family", "openspiel", "--execution", "batch", "--llm-type",
                          "llamacpp", "--base-url", server.url, "--no-parallel"], capsys, caplog)
    assert line.startswith("error: --execution batch: openspiel shards")
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
