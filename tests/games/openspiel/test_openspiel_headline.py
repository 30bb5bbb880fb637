"""The openspiel headline never rises when a valid answer turns invalid (replayed for real: the
same model with some answers replaced by text that names no action), and a match with a
failed call is left out (missing), not scored 0."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspiel")

from distbench.games.openspiel.plan import OpenSpielShard, move_seed  # noqa: E402
from distbench.games.openspiel.runner import run_shard  # noqa: E402
from distbench.games.openspiel.summary import openspiel_summary  # noqa: E402
from distbench.llm.base import Backend, BackendSpec, Request, Response  # noqa: E402
from distbench.llm.dummy import DummyBackend  # noqa: E402

SPEC = BackendSpec("spoiled", "dummy")
EPS = 1e-12


class _Spoiled(Backend):
    """The dummy's answers, except for the requests whose seed is in ``spoil`` (junk text) or
    ``fail`` (a failed call)."""

    in_process = True

    def __init__(self, spoil: set[int], fail: set[int] = frozenset()) -> None:
        super().__init__(SPEC)
        self.dummy = DummyBackend(BackendSpec("dummy", "random"))
        self.spoil, self.fail = spoil, fail

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = self.dummy.answer(requests)
        for i, r in enumerate(requests):
            if r.seed in self.spoil:
                out[i] = Response(text="I would rather not say.")
            elif r.seed in self.fail:
                out[i] = Response(text=None, status="failed", error="HTTP 500")
        return out


def _run(case: int, spoil: set[int], fail: set[int] = frozenset()) -> tuple[pa.Table, pa.Table]:
    game = ("kuhn_poker", "tic_tac_toe", "liars_dice(numdice=1,dice_sides=3)")[case % 3]
    shard = OpenSpielShard(
        shard_id="h", game=game, mode="play", seed=case, start=0, stop=6, player=SPEC,
        opponent=("random", "equilibrium")[case % 2], seat_orders=(0, 1), llm_seed=case,
        temperature=1.0, max_tokens=None, mcts_simulations=10, specs=(SPEC,), run_id="r")
    result = run_shard(shard, {SPEC: _Spoiled(spoil, fail)})
    return result.tables["matches"][1], result.tables["moves"][1]


def _summary(matches: pa.Table, moves: pa.Table) -> dict:
    con = duckdb.connect()
    con.register("matches", matches)
    con.register("moves", moves)
    (rec,) = openspiel_summary(con)
    con.close()
    return rec


@pytest.mark.parametrize("case", range(6))
def test_the_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    rng = np.random.default_rng(100 + case)
    spoil: set[int] = set()
    matches, moves = _run(case, spoil)
    before = _summary(matches, moves)
    for _ in range(3):
        valid = [move_seed(case, m["match_id"], m["ply"]) for m in moves.to_pylist()
                 if m["is_a"] and m["parse_status"] == "ok"]
        if not valid:
            break
        spoil.add(int(rng.choice(valid)))
        matches, moves = _run(case, spoil)
        after = _summary(matches, moves)
        assert after["quality"] <= before["quality"] + EPS
        assert after["forfeit_rate"] >= before["forfeit_rate"] - EPS
        assert after["matches"] == before["matches"]
        before = after


def test_a_match_with_a_failed_call_is_missing_not_zero():
    matches, moves = _run(0, set())
    first = next(m for m in moves.to_pylist() if m["is_a"])
    failed_matches, failed_moves = _run(0, set(), {move_seed(0, first["match_id"], first["ply"])})
    rec = _summary(failed_matches, failed_moves)
    row = next(m for m in failed_matches.to_pylist() if m["match_id"] == first["match_id"])
    assert row["outcome_a"] == "call_failed" and row["quality_a"] is None
    assert rec["missing_matches"] == 1 and rec["matches"] == 12
    answered = [m["quality_a"] for m in failed_matches.to_pylist() if m["quality_a"] is not None]
    assert rec["quality"] == pytest.approx(sum(answered) / len(answered))
