"""Logprob mode's reading of a strategy from next-token probabilities, on scripted tokenizers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distbench.games.answers.logprob import classify_token, read_strategies
from distbench.llm.base import Request, Response


def _lp(pairs: dict[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple((token, math.log(p) if p > 0 else -math.inf) for token, p in pairs.items())


class Tokenizer:
    """A scripted model: the next-token distribution after each continuation of the cue."""

    def __init__(self, table: dict[str, dict[str, float]], prompt: str = "P") -> None:
        self.table = table
        self.prompt = prompt
        self.asked: list[str] = []

    def __call__(self, requests: list[Request]) -> list[Response]:
        out = []
        for req in requests:
            assert req.style == "completion" and req.max_tokens == 1 and req.logprobs == 20
            suffix = req.prompt[len(self.prompt):]
            self.asked.append(suffix)
            dist = self.table[suffix]
            out.append(Response(text=max(dist, key=dist.get), logprobs=_lp(dist)))
        return out


@pytest.mark.parametrize(("text", "m", "expected"), [
    (" 2", 3, ("label", 2)), ("2", 3, ("label", 2)), ("2.", 3, ("label", 2)),
    ("\n3", 3, ("label", 3)), (" ", 3, ("space", None)), ("\n\n", 3, ("space", None)),
    (" 4", 3, ("other", None)), (" 0", 3, ("other", None)), (" One", 3, ("other", None)),
    ("1", 10, ("prefix", "1")), (" 1", 10, ("prefix", "1")), ("10", 10, ("label", 10)),
    ("1 ", 10, ("label", 1)), ("1\n", 10, ("label", 1)), ("11", 10, ("other", None)),
    ("01", 3, ("other", None)), ("", 3, ("other", None)),
])
def test_classify_token(text, m, expected):
    assert classify_token(text, m) == expected


def test_labels_with_their_space_are_read_in_one_call():
    model = Tokenizer({"": {" 1": 0.6, " 2": 0.3, " The": 0.1}})
    (reading,), calls = read_strategies(["P"], [7], 3, model, temperature=1.0)
    assert model.asked == [""] and len(calls) == 1
    assert reading.status == "ok" and reading.label_mass == pytest.approx(0.9)
    np.testing.assert_allclose(reading.strategy, [2 / 3, 1 / 3, 0.0])


def test_a_dominant_space_is_followed_and_weighted():
    # SmolLM2-like: no " 1" token; the digit comes after a bare space.
    model = Tokenizer({
        "": {" ": 0.7, " One": 0.2, "\n": 0.1},
        " ": {"1": 0.5, "3": 0.3, "x": 0.2},
    })
    (reading,), _ = read_strategies(["P"], [7], 3, model, temperature=1.0)
    assert model.asked == ["", " "]  # only the most likely white space is followed
    assert reading.status == "ok"
    assert reading.label_mass == pytest.approx(0.7 * 0.8)
    np.testing.assert_allclose(reading.strategy, [0.5 / 0.8, 0.0, 0.3 / 0.8])


def test_a_space_is_not_followed_when_labels_dominate():
    model = Tokenizer({"": {" 2": 0.9, " ": 0.05, "\n": 0.05}})
    (reading,), calls = read_strategies(["P"], [7], 3, model, temperature=1.0)
    assert len(calls) == 1 and reading.label_mass == pytest.approx(0.9)


def test_two_digit_labels_are_told_apart_from_their_first_digit():
    # Ten actions on a digit-by-digit tokenizer: "1" starts both "1" and "10".
    model = Tokenizer({
        "": {" ": 1.0},
        " ": {"1": 0.6, "2": 0.4},
        " 1": {"0": 0.25, "\n": 0.75},
    })
    (reading,), calls = read_strategies(["P"], [7], 10, model, temperature=1.0)
    assert model.asked == ["", " ", " 1"] and len(calls) == 3
    expected = np.zeros(10)
    expected[0], expected[1], expected[9] = 0.6 * 0.75, 0.4, 0.6 * 0.25
    np.testing.assert_allclose(reading.strategy, expected)
    assert reading.label_mass == pytest.approx(1.0)


def test_low_label_mass_is_its_own_status_not_a_strategy():
    model = Tokenizer({"": {" 1": 0.01, " The": 0.99}})
    (reading,), _ = read_strategies(["P"], [7], 3, model, temperature=1.0, min_label_mass=0.5)
    assert reading.status == "low_label_mass" and reading.strategy is None
    assert reading.label_mass == pytest.approx(0.01)
    assert "0.010 of the probability" in reading.detail
    (lenient,), _ = read_strategies(["P"], [7], 3, model, temperature=1.0, min_label_mass=0.0)
    assert lenient.status == "ok"


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_logprobs_are_their_own_status_with_null_mass(bad):
    def model(requests):
        return [Response(text=" 1", logprobs=((" 1", bad), (" 2", -1.0))) for _ in requests]

    (reading,), _ = read_strategies(["P"], [7], 3, model, temperature=1.0)
    assert reading.status == "non_finite" and reading.strategy is None
    assert math.isnan(reading.label_mass) and "non-finite" in reading.detail


def test_a_failed_call_anywhere_in_the_walk_fails_the_game():
    def model(requests):
        out = []
        for req in requests:
            if req.prompt.endswith(" "):
                out.append(Response(text=None, status="failed", error="HTTP 500"))
            else:
                out.append(Response(text=" ", logprobs=_lp({" ": 0.9, " 1": 0.1})))
        return out

    (reading,), calls = read_strategies(["P"], [7], 3, model, temperature=1.0)
    assert reading.status == "call_failed" and reading.detail == "HTTP 500" and len(calls) == 2


def test_no_logprobs_is_no_answer():
    (reading,), _ = read_strategies(["P"], [7], 3, lambda rs: [Response(text="1") for _ in rs],
                                    temperature=1.0)
    assert reading.status == "no_answer" and "no logprobs" in reading.detail


def test_games_are_batched_per_depth_and_keep_their_seeds():
    batches = []
    model = Tokenizer({"": {" ": 1.0}, " ": {"1": 1.0}})

    def ask(requests):
        batches.append([(r.prompt, r.seed) for r in requests])
        return model(requests)

    readings, _ = read_strategies(["P", "P"], [5, 6], 3, ask, temperature=0.7)
    assert batches == [[("P", 5), ("P", 6)], [("P ", 5), ("P ", 6)]]
    assert [r.status for r in readings] == ["ok", "ok"]
