"""The bundled model's thread count follows the CPUs other processes keep busy: two
llama.cpp threads waiting at a barrier for a descheduled partner were 5-10x slower than one on
this project's loaded 2-core VM (see ``distbench.llm.local._default_threads``)."""

from __future__ import annotations

import pytest

from distbench.llm import local


@pytest.mark.parametrize("cpus, load, threads", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 9.0, 1), (8, 2.2, 6), (8, 0.0, 8), (1, 0.0, 1)])
def test_threads_are_the_cpus_less_the_load_of_others(monkeypatch, cpus, load, threads):
    monkeypatch.setattr(local, "_cpu_count", lambda: cpus)
    monkeypatch.setattr(local.os, "getloadavg", lambda: (load, load, load))
    assert local._default_threads() == threads


def test_without_a_load_average_every_cpu_is_used(monkeypatch):
    def unavailable():
        raise OSError("no load average here")

    monkeypatch.setattr(local, "_cpu_count", lambda: 4)
    monkeypatch.setattr(local.os, "getloadavg", unavailable)
    assert local._default_threads() == 4


@pytest.mark.parametrize("load, own, threads", [(2.0, 2.0, 2), (1.0, 1.0, 2), (3.0, 1.0, 1),
                                                 (2.4, 0.0, 1)])
def test_the_process_own_load_is_not_taken_for_others(monkeypatch, load, own, threads):
    """A process decoding with two threads on an idle 2-core machine reads a load of 2: its
    own, so it keeps both threads; others' load still takes them away."""
    monkeypatch.setattr(local, "_cpu_count", lambda: 2)
    monkeypatch.setattr(local.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(local._OWN_LOAD, "update", lambda: own)
    monkeypatch.setattr(local._OTHERS_NOW, "update", lambda: None)  # no /proc/stat here
    assert local._choose_threads() == threads


@pytest.mark.parametrize("cpus, others, threads", [
    (2, 0.0, 2), (2, 0.3, 2), (2, 0.8, 1), (2, 2.0, 1), (8, 2.2, 6), (1, 0.0, 1)])
def test_threads_are_the_cpus_less_those_others_keep_busy_now(monkeypatch, cpus, others,
                                                               threads):
    monkeypatch.setattr(local, "_cpu_count", lambda: cpus)
    monkeypatch.setattr(local._OTHERS_NOW, "update", lambda: others)
    monkeypatch.setattr(local.os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # not read
    assert local._choose_threads() == threads


def test_others_busy_cpus_are_the_cpus_busy_time_less_this_process_over_half_a_second(
        monkeypatch):
    clock = {"wall": 100.0, "busy": 1000.0, "own": 5.0}
    monkeypatch.setattr(local.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(local.time, "process_time", lambda: clock["own"])
    monkeypatch.setattr(local, "_busy_seconds", lambda: clock["busy"])

    def sleep(seconds: float) -> None:  # the first reading's wait: this process idle, one
        clock["wall"] += seconds         # busy loop elsewhere
        clock["busy"] += seconds

    monkeypatch.setattr(local.time, "sleep", sleep)
    others = local._OthersNow()
    assert others.update() == pytest.approx(1.0)
    clock["wall"] += 1.0  # this process decodes on both CPUs, nothing else runs
    clock["busy"] += 2.0
    clock["own"] += 2.0
    assert others.update() == pytest.approx(0.0)
    clock["wall"] += 0.1  # too short a window: the last reading stands
    clock["busy"] += 0.2
    assert others.update() == pytest.approx(0.0)
    clock["wall"] += 1.0  # two busy loops beside its two threads: each of the four gets half
    clock["busy"] += 2.0
    clock["own"] += 1.0
    assert others.update() == pytest.approx(1.2 / 1.1, rel=1e-6)


def test_off_linux_the_load_average_decides(monkeypatch):
    monkeypatch.setattr(local, "_busy_seconds", lambda: None)
    monkeypatch.setattr(local, "_OTHERS_NOW", local._OthersNow())
    monkeypatch.setattr(local, "_cpu_count", lambda: 2)
    monkeypatch.setattr(local.os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    monkeypatch.setattr(local._OWN_LOAD, "update", lambda: 0.0)
    assert local._choose_threads() == 1


def test_own_load_follows_this_process_cpu_time(monkeypatch):
    """Busy on two CPUs for a minute, the estimate is near 2 x (1 - 1/e); idle, it decays."""
    clock = {"wall": 100.0, "cpu": 5.0}
    monkeypatch.setattr(local.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(local.time, "process_time", lambda: clock["cpu"])
    own = local._OwnLoad()
    for _ in range(12):  # 5-second steps, both CPUs busy
        clock["wall"] += 5.0
        clock["cpu"] += 10.0
        busy = own.update()
    assert busy == pytest.approx(2 * (1 - 2.718281828 ** -1), rel=1e-3)
    clock["wall"] += 60.0  # a minute idle
    assert own.update() == pytest.approx(busy / 2.718281828, rel=1e-3)


def test_a_one_request_call_follows_the_choice_in_prompt_evaluation_too(monkeypatch):
    """The one-request path picks its threads per call, for decoding and prompt evaluation
    alike (llama-cpp-python's default for prompt evaluation is every CPU, which under load
    spins at the barrier: 4x the CPU time at a load of 2 on the 2-core VM)."""
    if not local.local_available():
        pytest.skip("bundled model not installed")
    from llama_cpp import llama_cpp as low

    model = local.shared_model()
    texts = []
    for threads in (2, 1):
        monkeypatch.setattr(model, "_choose_threads", lambda threads=threads: threads)
        texts.append(model.complete("The capital of France is", max_tokens=4, seed=1)
                     ["choices"][0]["text"])
        ctx = model._plain._ctx.ctx
        assert (low.llama_n_threads(ctx), low.llama_n_threads_batch(ctx)) == (threads, threads)
    assert texts[0] == texts[1]


def test_retune_picks_the_threads_again_at_most_every_half_second_and_never_stops(monkeypatch):
    from distbench.llm import local_round

    clock = {"now": 10.0}
    monkeypatch.setattr(local_round.time, "monotonic", lambda: clock["now"])
    calls = []
    retune = local_round.Retune(lambda: calls.append(clock["now"]))
    for _ in range(10):  # 0.2 s steps
        clock["now"] += 0.2
        assert retune(None, None) is False
    assert calls == pytest.approx([10.6, 11.2, 11.8])


def test_threads_picked_again_during_a_call_change_no_answer(monkeypatch):
    """A long call follows the load as it changes: the threads are picked again between the
    steps of a round, of a game's samples and of one request, with the same answers."""
    if not local.local_available():
        pytest.skip("bundled model not installed")
    from llama_cpp import llama_cpp as low

    from distbench.llm import local_round

    model = local.shared_model()
    calls = [{"style": "completion", "prompt": f"Split {n} coins. I propose", "seed": n,
              "max_tokens": 12, "temperature": 1.0} for n in (10, 20, 30)]

    def answers() -> list:
        one = model.complete("The capital of France is", max_tokens=12, seed=1)
        many = model.complete_many("Two plus two is", [1, 2, 3], max_tokens=12)
        return [one["choices"][0]["text"], [c["text"] for c in many["choices"]],
                [a["text"] for a in model.answer_round(calls)]]

    monkeypatch.setattr(model, "_choose_threads", lambda: 2)
    fixed = answers()
    picks = []

    def alternate() -> int:
        picks.append(1 + len(picks) % 2)
        return picks[-1]

    seen = set()
    set_threads = low.llama_set_n_threads
    monkeypatch.setattr(low, "llama_set_n_threads",
                        lambda ctx, n, b: seen.add(n) or set_threads(ctx, n, b))
    monkeypatch.setattr(local_round.Retune, "every", 0.0)  # before every step
    monkeypatch.setattr(model, "_choose_threads", alternate)
    assert answers() == fixed
    assert len(picks) > 3 * 12 and seen == {1, 2}
