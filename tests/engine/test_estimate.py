"""The expected bill (``distbench.engine.estimate``, the matrix family's estimates): prompts
counted as rendered, completion by the answer format or by earlier runs' median answer per
(model, mode), the ceiling at every answer's whole budget (the cot budget for cot)."""

from __future__ import annotations

import math

from distbench.engine.estimate import expected_of, observed_completion
from distbench.games.matrix.generate import generate_games
from distbench.games.matrix.plan import MatrixRunConfig, call_estimate
from distbench.games.matrix.prompts import mixed_prompt, pure_prompt
from distbench.llm.base import BackendSpec, Request, Response
from distbench.llm.calls import calls_table
from distbench.store.writer import RunWriter

URL = "http://127.0.0.1:9"


def _spec(**options) -> BackendSpec:
    from distbench.llm.registry import make_spec

    return make_spec("llamacpp", "mock", "chat", base_url=URL, max_n=1, price_in=10.0,
                     price_out=40.0, **options)


def _config(**kwargs) -> MatrixRunConfig:
    base = dict(buckets=("3x3_midVar_any",), seeds=(7,), num_games=12, num_trials=2,
                modes=("pure", "mixed"), llm=_spec())
    return MatrixRunConfig(**{**base, **kwargs})


def test_prompt_tokens_are_those_of_the_rendered_prompts():
    plan = _config().plan("e")
    payoffs = generate_games("3x3_midVar_any", 7, 0, 12)
    exact = sum(math.ceil(len(render(p, style="chat")) / 4) * 2
                for p in payoffs for render in (pure_prompt, mixed_prompt))
    # the estimate's sample is the first 32 games of the seed: these 12 and 20 more
    assert abs(plan.expected_tokens[0] - exact) <= 0.02 * exact


def test_expected_completion_is_the_answer_format_and_the_ceiling_the_budget():
    plan = _config(max_tokens=256).plan("e")
    one = call_estimate(plan.shards)
    # 12 games x 2 trials: "Action: 3" is 3 tokens, "Strategy: [0.1234, 0.5678, 0.2088]" 9
    assert one.completion_expected == 24 * 3 + 24 * 9 and one.sources == ("format",)
    assert one.completion_tokens == 48 * 256
    expected = expected_of(plan)
    assert expected.completion_tokens == one.completion_expected
    assert expected.cost == (expected.prompt_tokens * 10 + expected.completion_tokens * 40) / 1e6


def test_cot_is_bounded_by_its_reasoning_budget_and_expected_at_it():
    plan = _config(modes=("pure",), llm=_spec(reasoning="cot", reasoning_tokens=700)).plan("e")
    one = call_estimate(plan.shards)
    assert one.completion_tokens == one.completion_expected == 24 * 700
    assert one.sources == ("budget",)


def test_earlier_runs_give_the_median_answer_per_model_and_mode(tmp_path):
    spec = _spec()
    answers = [("pure", 5, 1, "ok"), ("pure", 7, 1, "ok"), ("pure", 900, 1, "failed"),
               ("mixed", 60, 3, "ok")]  # a request of 3 samples: 20 tokens an answer
    requests = [Request(prompt="p", seed=i, samples=tuple(range(n)) if n > 1 else None)
                for i, (_, _, n, _) in enumerate(answers)]
    responses = [Response(text="x", status=status, completion_tokens=tokens)
                 for _, tokens, _, status in answers]
    tables = [calls_table("old", "s1", spec, mode, [req], [resp], [f"c{i}"], [f"t{i}"])
              for i, ((mode, _, _, _), req, resp) in enumerate(zip(answers, requests,
                                                                   responses, strict=True))]
    import pyarrow as pa

    RunWriter(tmp_path / "old").commit_shard("s1", {"calls": ("s1", pa.concat_tables(tables))})
    observed = observed_completion(tmp_path, [spec])
    assert observed[("llamacpp", "mock", "mixed")] == 20
    assert 5 <= observed[("llamacpp", "mock", "pure")] <= 7  # the failed call left out
    assert observed_completion(tmp_path, [BackendSpec("llamacpp", "other", "chat")]) == {}
    plan = _config(max_tokens=256).plan("e")
    one = call_estimate(plan.shards, observed)
    assert one.sources == ("calls",)
    assert one.completion_expected == round(24 * observed[("llamacpp", "mock", "pure")]
                                            + 24 * 20)
    assert observed_completion(tmp_path / "none") == {}
