"""Different prompts of one generate call (a round of a multi-turn shard) decoded together."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading

import pytest

from distbench.llm.base import Request
from distbench.llm.local import LocalBackend, local_available, shared_model
from distbench.llm.registry import make_spec

pytestmark = pytest.mark.skipif(not local_available(), reason="bundled model not installed")

ROUND = [
    Request(prompt="Alice and Bob split 100 coins. Alice proposes 60 for her. Bob answers:",
            seed=3, max_tokens=8, style="completion"),
    Request(prompt="Split 100 coins with me. Your offer?", seed=4, max_tokens=8,
            messages=(("system", "You negotiate."), ("user", "Split 100 coins. Your offer?"))),
    Request(prompt="The capital of France is", seed=5, max_tokens=8, style="completion",
            stop=("\n",)),
]


def _round_sizes(monkeypatch) -> list[int]:
    """The number of prompts of each batched call of the shared model, from now on."""
    sizes: list[int] = []
    model_type = type(shared_model())
    original = model_type.answer_round
    monkeypatch.setattr(model_type, "answer_round",
                        lambda self, c: sizes.append(len(c)) or original(self, c))
    return sizes


def test_a_round_is_answered_in_one_call_and_identically_whatever_ran_before(monkeypatch):
    backend = LocalBackend(make_spec("local"))
    calls = _round_sizes(monkeypatch)
    first = asyncio.run(backend.generate(ROUND))
    asyncio.run(backend.generate(ROUND[1:]))  # other cells in the cache in between
    again = asyncio.run(backend.generate(ROUND))
    assert calls == [3, 2, 3]  # one batched call per round
    assert all(a.status == "ok" and a.completion_tokens for a in first)
    assert [a.text for a in first] == [a.text for a in again]
    assert len({a.text for a in first}) == 3


def test_a_prompt_too_long_for_the_context_fails_alone():
    backend = LocalBackend(make_spec("local"))
    long = Request(prompt="coins " * 9000, seed=1, max_tokens=4, style="completion")
    answers = asyncio.run(backend.generate([ROUND[0], long]))
    assert answers[0].status == "ok"
    assert answers[1].status == "failed" and "exceed context window" in answers[1].error


def test_the_sequential_path_stays_available(monkeypatch):
    monkeypatch.setenv("DISTBENCH_LOCAL_ROUNDS", "0")
    model = shared_model()
    monkeypatch.setattr(type(model), "answer_round", lambda self, c: pytest.fail("batched"))
    answers = asyncio.run(LocalBackend(make_spec("local")).generate(ROUND[:2]))
    assert all(a.status == "ok" for a in answers)


def _answers(monkeypatch, rounds: str, requests) -> list:
    monkeypatch.setenv("DISTBENCH_LOCAL_ROUNDS", rounds)
    answers = asyncio.run(LocalBackend(make_spec("local")).generate(requests))
    assert all(a.status == "ok" for a in answers)
    return answers


def _texts(monkeypatch, rounds: str, requests) -> list[str | None]:
    return [a.text for a in _answers(monkeypatch, rounds, requests)]


def test_a_round_gives_the_one_request_paths_answers_and_reuses_each_conversations_prefix(
        monkeypatch):
    # One KV stream per sequence: batching and prefix reuse change no floating-point result.
    rules = "Each of you names a split; if the two splits add up to 100, both get theirs. " * 2
    opening = [Request(prompt=rules + ROUND[0].prompt, seed=3, max_tokens=8, style="completion"),
               Request(prompt="", seed=4, max_tokens=8,
                       messages=(("system", rules), *ROUND[1].messages[1:])),
               Request(prompt=rules + ROUND[2].prompt, seed=5, max_tokens=8, style="completion",
                       stop=("\n",))]
    copied = getattr(shared_model()._round, "copied", 0)
    first = _texts(monkeypatch, "1", opening)
    assert shared_model()._round.copied > copied  # the shared rules evaluated once, copied
    assert first == _texts(monkeypatch, "0", opening)
    # The next turn of each conversation: its old prompt, its answer and a new message.
    turn = [
        Request(prompt=f"{opening[0].prompt}{first[0]}\nAlice: No, 70 for me. Bob answers:",
                seed=6, max_tokens=8, style="completion"),
        Request(prompt="", seed=7, max_tokens=8, messages=(
            *opening[1].messages, ("assistant", first[1]), ("user", "Too little. Again?"))),
        Request(prompt=f"{opening[2].prompt}{first[2]}. The capital of Italy is", seed=8,
                max_tokens=8, style="completion", stop=("\n",)),
    ]
    decoder = shared_model()._round
    before = decoder.evaluated
    second = _answers(monkeypatch, "1", turn)
    evaluated = decoder.evaluated - before
    assert evaluated < sum(a.prompt_tokens for a in second) / 2  # only the new tokens
    assert [a.text for a in second] == _texts(monkeypatch, "0", turn)


def test_the_thread_count_is_chosen_again_for_each_round_and_changes_no_answer(monkeypatch):
    model = shared_model()
    texts = []
    short = [dataclasses.replace(r, max_tokens=4) for r in ROUND]  # two threads crawl under load
    for threads in (2, 1):
        monkeypatch.setattr(model, "_choose_threads", lambda threads=threads: threads)
        texts.append(_texts(monkeypatch, "1", short))
        assert model._round.n_threads == threads
    assert texts[0] == texts[1]


def test_a_negotiation_shards_rows_are_identical_run_to_run_and_to_the_sequential_path(
        monkeypatch):
    from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards
    from distbench.games.negotiation.runner import run_shard

    spec = make_spec("local", cache=False)
    sizes = _round_sizes(monkeypatch)
    config = NegotiationRunConfig(seeds=(0,), num_games=2, modes=("semi",), langs=("en",),
                                  player_a=spec, player_b="scripted:fair", max_messages=1,
                                  max_tokens=8)

    def rows(rounds: str) -> list:
        monkeypatch.setenv("DISTBENCH_LOCAL_ROUNDS", rounds)
        result = run_shard(plan_shards(config, "r")[0], {spec: LocalBackend(spec)})
        turns = result.tables["turns"][1]
        return turns.drop_columns(["latency_ms"]).to_pylist()  # the timing column aside

    first = rows("1")
    assert max(sizes) >= 2  # the model's asks of a round decoded together
    assert first == rows("1") == rows("0")


def test_a_conversation_keeps_its_stream_while_other_episodes_ask_in_between(monkeypatch):
    # A negotiation round holds only the episodes whose turn it is: the episodes of the round
    # in between must not take the streams of the conversations that ask again after them.
    rules = "Each of you names a split; if the two splits add up to 100, both get theirs. "
    values = ["; ".join(f"item {i} is worth {(7 * g + i) % 10}" for i in range(10))
              for g in range(2)]  # each conversation's own part, longer than the slack below
    mine = [Request(prompt=f"{rules}Game {g}: {values[g]}. Alice proposes {50 + g}. Bob:",
                    seed=g, max_tokens=6, style="completion") for g in range(2)]
    others = [Request(prompt=f"{rules}Game {g}. Bob opens. Alice answers:", seed=g,
                      max_tokens=6, style="completion") for g in range(2, 4)]
    first = _texts(monkeypatch, "1", mine)
    _texts(monkeypatch, "1", others)
    again = [dataclasses.replace(r, prompt=f"{r.prompt}{text}\nAlice: 70. Bob answers:",
                                 seed=r.seed + 10) for r, text in zip(mine, first, strict=True)]
    decoder = shared_model()._round
    before = decoder.evaluated
    answers = _answers(monkeypatch, "1", again)
    new_tokens = [a.prompt_tokens - len(decoder.llm.tokenize(r.prompt.encode()))
                  for a, r in zip(answers, mine, strict=True)]
    assert decoder.evaluated - before <= sum(new_tokens) + 2 * 16  # a turn's new tokens only
    assert [a.text for a in answers] == _texts(monkeypatch, "0", again)


def test_every_call_runs_on_the_models_own_thread_whichever_thread_asks(monkeypatch):
    # llama.cpp's OpenMP team belongs to the thread that starts a graph; two teams side by side
    # doubled a decoding step's time on two cores (the LocalModelCore docstring).
    model = shared_model()
    seen: set[int] = set()
    generate = model._plain.generate
    monkeypatch.setattr(model._plain, "generate",
                        lambda *a, **k: seen.add(threading.get_ident()) or generate(*a, **k))
    monkeypatch.setenv("DISTBENCH_LOCAL_ROUNDS", "0")

    async def ask() -> None:
        backend = LocalBackend(make_spec("local"))
        await asyncio.gather(*(backend.generate([dataclasses.replace(r, max_tokens=2)])
                               for r in ROUND))

    asyncio.run(ask())
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda r: model.complete(r.prompt, max_tokens=2, seed=r.seed), ROUND))
    assert seen == {model._thread_ident}
