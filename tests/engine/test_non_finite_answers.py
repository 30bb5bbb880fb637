"""NaN and infinite logprobs from a real HTTP server (held-out case of the watch-and-trust
issue): such a body is not a usable answer, so each call failed with a message naming the
field (the server's fault, not the model's: left out of every figure, README "Response bodies
are untrusted"), the summary completes with no headline, and summary.json is strict JSON."""

from __future__ import annotations

import json
import math

import pytest

from distbench.engine.driver import run_config
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.wire import completion_response
from distbench.store.catalog import open_run


class NonFiniteAnswerer:
    """Answers every completion with ``" 1"`` and top logprobs holding ``value``."""

    model_name = "broken"

    def __init__(self, value: float) -> None:
        self.value = value

    def complete(self, prompt, *, max_tokens, temperature, seed, logprobs, stop):
        body = completion_response(self.model_name, " 1", 10)
        if logprobs is not None:
            top = {" 1": self.value, " 2": -1.0, " 3": -2.0}
            body["choices"][0]["logprobs"] = {"tokens": [" 1"], "token_logprobs": [self.value],
                                              "top_logprobs": [top], "text_offset": [0]}
        return body

    def chat(self, messages, **kw):  # pragma: no cover - logprob mode sends completions
        raise AssertionError("chat not expected")


def _strict(text: str) -> object:
    def refuse(token: str) -> float:
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_logprobs_are_invalid_and_the_summary_is_strict_json(tmp_path, value):
    with start_server(ServerConfig(), NonFiniteAnswerer(value)) as server:
        spec = make_spec("llamacpp", "broken", base_url=server.url, cache=False)
        config = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(1,), num_games=4,
                                 num_trials=1, modes=("logprob",), llm=spec)
        out = run_config(config, tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    rows = con.execute("select parse_status, count(*), count(label_mass), count(strategy) "
                       "from trials group by 1").fetchall()
    assert rows == [("call_failed", 4, 0, 0)]
    errors = [r[0] for r in con.execute("select error from calls").fetchall()]
    assert errors and all("logprobs" in e for e in errors), errors
    summary = _strict((out.run_dir / "summary.json").read_text())
    (group,) = summary["groups"]
    assert group["valid_trials"] == 0 and group["mean_nash_gap"] is None
    assert group["quality"] is None and group["missing_trials"] == 4
