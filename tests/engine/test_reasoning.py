"""``--reasoning direct|cot``: the factor threaded through every family, the final line parsed,
the reasoning kept, a provider's own reasoning field kept in ``calls``, and two runs that
differ only in the factor paired by ``distbench compare``."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import httpx
import numpy as np
import pytest

from distbench.games.answers.reasoning import reasoning_mode, split_final
from distbench.games.matrix.prompts import mixed_prompt, pure_prompt
from distbench.games.matrix.runner import _parse_all
from distbench.games.negotiation.instances import generate_instance
from distbench.games.negotiation.players import Ask, ModelPlayer
from distbench.llm.base import Request, Response
from distbench.llm.calls import calls_table
from distbench.llm.dummy import DummyBackend
from distbench.llm.http import OpenAICompatibleBackend, parse_body
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distbench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def test_split_final_keeps_everything_before_the_last_non_blank_line():
    assert split_final("Let me think.\nRow 2 is safe.\n\nAction: 2\n  \n") == (
        "Let me think.\nRow 2 is safe.", "Action: 2")
    assert split_final("Action: 1") == ("", "Action: 1")
    assert split_final("  \n") == ("", "")


def test_cot_prompts_ask_for_reasoning_then_the_answer_line():
    payoff = np.array([[1.0, -1.0], [-2.0, 3.0]])
    for make, cue in ((pure_prompt, "Action: <k>"), (mixed_prompt, "Strategy: [p1, p2]")):
        chat = make(payoff, style="chat", reasoning="cot")
        assert "step by step" in chat and chat.endswith(cue)
        completion = make(payoff, style="completion", reasoning="cot")
        assert completion.endswith("Reasoning:") and cue in completion
        assert make(payoff, style="chat") == make(payoff, style="chat", reasoning="direct")


def test_cot_parses_the_final_line_only():
    answers = [Response(text="Action 1 looks good.\nAction: 2"),
               Response(text="Action: 2\nHope that helps!"),  # the answer is not last
               Response(text=None, status="failed", error="boom")]
    reasons: list = [None] * 3
    statuses, _, actions, _, _ = _parse_all("pure", answers, 3, False, reasons)
    assert statuses == ["ok", "no_answer", "call_failed"]
    assert actions.tolist() == [1, -1, -1]
    assert reasons == ["Action 1 looks good.", "Action: 2", None]
    direct, _, direct_actions, _, _ = _parse_all("pure", answers, 3, False)
    assert direct[:2] == ["ok", "ok"]  # direct reads the whole text, as always


def test_the_provider_reasoning_field_is_read_and_stored_in_calls():
    body = {"choices": [{"message": {"content": "Action: 2",
                                     "reasoning_content": "Row 2 dominates."}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 40,
                      "completion_tokens_details": {"reasoning_tokens": 31}}}
    def reasoning_of(style, data):
        parsed = parse_body(style, data)
        return parsed.reasoning, parsed.reasoning_tokens

    assert reasoning_of("chat", body) == ("Row 2 dominates.", 31)
    assert reasoning_of("chat", {"choices": [{"message": {"content": "x"}}]}) == (None, None)
    bad = {"choices": [{"message": {"content": "x", "reasoning_content": 5}}],
           "usage": {"completion_tokens_details": {"reasoning_tokens": True}}}
    assert reasoning_of("chat", bad) == (None, None)
    assert "reasoning_content" in " ".join(parse_body("chat", bad).notes)
    completion = {"choices": [{"text": "Action: 2"}], "usage": body["usage"]}
    assert reasoning_of("completion", completion) == (None, 31)

    spec = make_spec("vllm", "m1", "chat", base_url="http://testserver", rpm=None,
                     max_retries=0, timeout=5.0, cache=False)
    backend = OpenAICompatibleBackend(
        spec, transport=httpx.MockTransport(lambda request: httpx.Response(200, json=body)))
    request = Request(prompt="Pick.", seed=1, task="matrix.pure:3")
    (response,) = asyncio.run(backend.generate([request]))
    assert (response.text, response.reasoning, response.reasoning_tokens) == (
        "Action: 2", "Row 2 dominates.", 31)
    table = calls_table("r", "s", spec, "pure", [request], [response], ["c"], ["t"])
    assert table["reasoning_content"].to_pylist() == ["Row 2 dominates."]
    assert table["reasoning_tokens"].to_pylist() == [31]


def test_a_cot_negotiator_is_asked_to_reason_and_only_its_final_line_is_relayed():
    spec = make_spec("dummy", "random", reasoning="cot", reasoning_tokens=300)
    assert reasoning_mode(spec) == "cot" and reasoning_mode(make_spec("dummy")) == "direct"

    class Scripted(DummyBackend):
        async def generate(self, requests):
            return [Response(text="I value the hats.\n\nI propose we split evenly.")
                    for _ in requests]

    player = ModelPlayer(spec, Scripted(spec), temperature=0.0, max_tokens=64)
    ask = Ask(episode_id="e", seat="a", turn=0, kind="message",
              messages=(("user", "Let us negotiate."),), seed=1,
              instance=generate_instance(1, 0), lang="en", mode="semi")
    request = player.request(ask)
    assert request.max_tokens == 300
    assert request.messages[-1][1].startswith("Let us negotiate.\n\n")
    assert "final line" in request.messages[-1][1]
    (reply,) = asyncio.run(player.respond([ask]))
    assert reply.text == "I propose we split evenly."
    assert reply.reasoning == "I value the hats."


def test_cli_refuses_reasoning_tokens_without_cot_and_cot_in_logprob_mode(tmp_path):
    out = _cli(tmp_path, "run", "--llm-type", "dummy", "--reasoning-tokens", "64",
               "--num-games", "1", "--num-trials", "1")
    assert out.returncode != 0 and "--reasoning-tokens" in out.stderr
    assert "Traceback" not in out.stderr
    out = _cli(tmp_path, "run", "--llm-type", "dummy", "--reasoning", "cot", "--mode",
               "logprob", "--num-games", "1")
    assert out.returncode != 0 and "logprob" in out.stderr.splitlines()[-1]
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("family", ["matrix", "negotiation", "fog"])
def test_every_family_records_the_factor(tmp_path, family):
    extra = {"matrix": ["--num-trials", "2"], "negotiation": ["--opponent", "scripted:fair"],
             "fog": ["--opponent", "tier1"]}[family]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with start_server(ServerConfig(port=port, seed=1)) as server:
        out = _cli(tmp_path, "run", "--family", family, "--llm-type", "llamacpp",
                   "--llm-model", "mock", "--base-url", server.url, "--reasoning", "cot",
                   "--reasoning-tokens", "200", "--num-games", "1", "--run-id", "cot",
                   "--no-parallel", *extra)
    assert out.returncode == 0, out.stderr
    table = {"matrix": "trials", "negotiation": "episodes", "fog": "fog_games"}[family]
    con = open_run(tmp_path / "results" / "cot")
    assert con.execute(f"select distinct reasoning from {table}").fetchall() == [("cot",)]
    prompts = [r[0] for r in con.execute("select prompt_text from calls").fetchall()]
    con.close()
    assert prompts and all("step by step" in p for p in prompts)


def test_compare_pairs_a_direct_and_a_cot_run_over_the_same_games(tmp_path):
    for name, flags in (("direct", []), ("cot", ["--reasoning", "cot"])):
        out = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "5",
                   "--num-trials", "2", "--run-id", name, "--no-parallel", *flags)
        assert out.returncode == 0, out.stderr
        assert "quality" in out.stdout  # the summary's headline
    out = _cli(tmp_path, "compare", "results/direct", "results/cot", "--format", "csv")
    assert out.returncode == 0, out.stderr
    paired = [line for line in out.stdout.splitlines()
              if line.startswith("matrix,pure,quality,all trials,cot/dummy:random,"
                                 "direct/dummy:random,5,")]
    assert len(paired) == 1


def test_the_response_cache_keeps_the_provider_reasoning(tmp_path):
    import sqlite3

    from distbench.llm.cache import ResponseCache

    old = tmp_path / "old.sqlite"  # a cache written before the columns existed
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
                "prompt_tokens INTEGER, completion_tokens INTEGER, logprobs TEXT, texts TEXT)")
    con.execute("INSERT INTO responses (key, text) VALUES ('k0', 'Action: 1')")
    con.commit()
    con.close()
    cache = ResponseCache(old)
    cache.put_many([("k1", Response(text="Action: 2", reasoning="Row 2.", reasoning_tokens=9))])
    got = cache.get_many(["k0", "k1"])
    cache.close()
    assert (got["k0"].text, got["k0"].reasoning, got["k0"].reasoning_tokens) == (
        "Action: 1", None, None)
    assert (got["k1"].reasoning, got["k1"].reasoning_tokens, got["k1"].cache_hit) == (
        "Row 2.", 9, True)
