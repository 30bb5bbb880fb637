"""The dummy backend and the provider registry."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from distbench.games.answers.parse import ParseStatus, parse_mixed, parse_pure
from distbench.llm.base import Request
from distbench.llm.dummy import uniforms
from distbench.llm.registry import UnknownProviderError, build_backend, get_provider, make_spec


def _ask(requests, style="chat"):
    backend = build_backend(make_spec("dummy", style=style))
    return asyncio.run(backend.generate(requests))


def test_dummy_answers_parse_as_valid_pure_actions_and_mixed_strategies():
    pure = _ask([Request("p", seed=s, task="matrix.pure:4") for s in range(400)])
    actions = [parse_pure(r.text, 4).action for r in pure]
    assert all(r.status == "ok" for r in pure)
    assert set(actions) == {0, 1, 2, 3}
    mixed = _ask([Request("p", seed=s, task="matrix.mixed:3") for s in range(200)])
    parsed = [parse_mixed(r.text, 3) for r in mixed]
    assert all(p.status is ParseStatus.OK for p in parsed)
    assert all(abs(sum(p.strategy) - 1) < 1e-9 for p in parsed)


def test_dummy_completion_style_answers_parse_as_continuations():
    pure = _ask([Request("p", seed=s, task="matrix.pure:3") for s in range(50)], "completion")
    assert all(parse_pure(r.text, 3, continuation=True).status is ParseStatus.OK for r in pure)
    mixed = _ask([Request("p", seed=s, task="matrix.mixed:3") for s in range(50)], "completion")
    assert all(parse_mixed(r.text, 3, continuation=True).status is ParseStatus.OK for r in mixed)


def test_dummy_answers_depend_only_on_the_request_seed():
    reqs = [Request("p", seed=s, task="matrix.pure:5") for s in range(100)]
    whole = [r.text for r in _ask(reqs)]
    halves = [r.text for r in _ask(reqs[:37])] + [r.text for r in _ask(reqs[37:])]
    mixed_order = _ask([reqs[5], Request("p", seed=1, task="matrix.mixed:2"), reqs[6]])
    assert whole == halves
    assert [mixed_order[0].text, mixed_order[2].text] == whole[5:7]


def test_uniform_stream_is_in_the_open_unit_interval_and_roughly_flat():
    u = uniforms(np.arange(20_000, dtype=np.uint64), 3)
    assert u.min() > 0 and u.max() < 1
    np.testing.assert_allclose(u.mean(axis=0), 0.5, atol=0.01)


def test_unknown_provider_error_suggests_a_close_name():
    with pytest.raises(UnknownProviderError, match="Did you mean 'dummy'"):
        get_provider("dumy")


def test_spec_fills_the_provider_defaults():
    spec = make_spec("dummy")
    assert (spec.provider, spec.model, spec.style) == ("dummy", "random", "chat")
