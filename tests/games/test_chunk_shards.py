"""The chunk plumbing the families share (``games.base.game_chunks``, ``chunk_id``,
``config_plan``): shard ids and plans as they were before it was shared (old run folders stay
resumable: a resumed run finds its committed shards by these ids)."""

from __future__ import annotations

import hashlib

import pytest

from distbench.games.base import game_chunks
from distbench.games.bimatrix.plan import BimatrixRunConfig
from distbench.games.bimatrix.tournament import BimatrixPairConfig
from distbench.games.repeated.plan import RepeatedRunConfig
from distbench.games.repeated.tournament import RepeatedPairConfig
from distbench.llm.base import BackendSpec

DUMMY = BackendSpec("dummy", "dummy")


def _digest(ids: list[str]) -> str:
    return hashlib.sha256(",".join(ids).encode()).hexdigest()[:16]


def test_game_chunks_cover_the_games_in_order() -> None:
    assert game_chunks(7, 3) == [(0, 3), (3, 6), (6, 7)]
    assert game_chunks(6, 3) == [(0, 3), (3, 6)]
    assert game_chunks(0, 3) == []


PLANS = {
    "bimatrix": lambda: BimatrixRunConfig(
        sets=("class:prisoners_dilemma", "3x3_midVar"), llm=DUMMY, seeds=(0, 1), num_games=7,
        shard_games=3),
    "repeated": lambda: RepeatedRunConfig(
        llm=DUMMY, opponents=("TitForTat", "self", BackendSpec("openai", "gpt-x")),
        seeds=(0, 2), num_games=5, shard_games=2),
    "bimatrix pairing": lambda: BimatrixPairConfig(
        player_a=DUMMY, player_b="eq", num_games=5, shard_games=2),
    "repeated pairing": lambda: RepeatedPairConfig(
        player_a=DUMMY, player_b="TitForTat", seeds=(3, 4), num_games=5, shard_games=2),
}


@pytest.mark.parametrize(("name", "first", "count", "seeds"), [
    ("bimatrix", "bm-bba60d4687679683", 12, [0, 1]),
    ("repeated", "rp-627ed2f6064a0bd7", 18, [0, 2]),
    ("bimatrix pairing", "bmp-24c9c3f4af9467cd", 3, [0]),
    ("repeated pairing", "rpp-6e88bbaab958dc3b", 6, [3, 4]),
])
def test_shard_ids_and_plans_unchanged(name: str, first: str, count: int,
                                       seeds: list[int]) -> None:
    config = PLANS[name]()
    plan = config.plan("r")
    ids = [s.shard_id for s in plan.shards]
    assert (ids[0], len(ids), len(set(ids))) == (first, count, count)
    assert _digest(ids) == DIGESTS[name]
    assert plan.seeds == {"game_seeds": seeds, "llm_seed": 0}
    assert plan.config == plan.identity == config.identity()


DIGESTS = {"bimatrix": "6d262f244c74257a", "repeated": "51ad5164697542a5",
           "bimatrix pairing": "b981677394304c50", "repeated pairing": "65ced9e5a9fed383"}
"""A digest of every shard id of each plan, as main made them before the sharing."""


@pytest.mark.parametrize(("game", "first", "digest"), [
    ("guessing", "gm-0d8dd6c66eec3c00", "3c4c5a49e04e3be5"),
    ("pirate", "gm-dd0297232015015b", "2f8ac47274987747"),
])
def test_gama_shard_ids_unchanged_by_the_shared_chunk(game: str, first: str, digest: str) -> None:
    """The gama shards share ``GameChunk`` and ``chunk_id`` now: their ids are the ids main
    made before (digests taken from it)."""
    from distbench.games.gama.plan import GamaRunConfig

    config = GamaRunConfig(game=game, seats=(DUMMY,) * 10, seeds=(0, 3), num_games=5,
                           shard_games=2)
    ids = [s.shard_id for s in config.plan("r").shards]
    assert (ids[0], len(ids), _digest(ids)) == (first, 6, digest)


def test_a_chunk_shards_commit_record_rebuilds_the_shard() -> None:
    """Rescore rebuilds a shard from its commit record by field name (the fields' order moved
    when the shards began to share ``GameChunk``)."""
    from distbench.engine.driver import _jsonable
    from distbench.games.bimatrix.rescore import shard_of as bimatrix_shard
    from distbench.games.repeated.rescore import shard_of as repeated_shard

    for name, rebuild in (("bimatrix", bimatrix_shard), ("repeated", repeated_shard)):
        shards = PLANS[name]().plan("r").shards
        for shard in (shards[0], shards[-1]):
            assert rebuild(_jsonable(shard), "r") == shard
