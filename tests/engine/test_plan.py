"""Planning: stable shard ids, every game exactly once."""

from __future__ import annotations

import pytest

from distbench.games.matrix.generate import BLOCK
from distbench.games.matrix.plan import MatrixRunConfig, games_per_shard, plan_matrix
from distbench.llm.registry import make_spec


def _config(**kw) -> MatrixRunConfig:
    base = dict(buckets=("3x3_midVar_mixed", "2x2_lowVar_pure"), seeds=(1, 2), num_games=1000,
                num_trials=10, modes=("pure", "mixed"), llm=make_spec("dummy"))
    base.update(kw)
    return MatrixRunConfig(**base)


def test_every_game_is_in_exactly_one_shard():
    shards = plan_matrix(_config())
    for bucket in ("3x3_midVar_mixed", "2x2_lowVar_pure"):
        for seed in (1, 2):
            ranges = sorted((s.start, s.stop) for s in shards if s.bucket == bucket and s.seed == seed)
            covered = [g for lo, hi in ranges for g in range(lo, hi)]
            assert covered == list(range(1000))


def test_shard_ids_are_stable_unique_and_depend_on_the_model():
    a = plan_matrix(_config(), run_id="x")
    b = plan_matrix(_config(), run_id="y")
    assert [s.shard_id for s in a] == [s.shard_id for s in b]
    assert len({s.shard_id for s in a}) == len(a)
    c = plan_matrix(_config(llm=make_spec("dummy", "other")))
    assert not {s.shard_id for s in a} & {s.shard_id for s in c}
    # ... but the games chunks are the same, so both models play identical games.
    assert [s.chunk_id for s in a] == [s.chunk_id for s in c]


def test_shards_hold_about_the_target_number_of_trials():
    cfg = _config(num_games=100_000, num_trials=100, modes=("pure",), shard_trials=50_000)
    assert games_per_shard(cfg) == 256  # 500 games rounded down to whole generation blocks
    assert games_per_shard(_config(num_trials=10_000, shard_trials=100)) == 1
    assert games_per_shard(cfg) % BLOCK == 0


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(num_games=0), "num_games"),
        (dict(num_trials=0), "num_trials"),
        (dict(modes=("both",)), "modes"),
        (dict(buckets=("9x9_lowVar_maybe",)), "equilibrium kind"),
        (dict(seeds=()), "seed"),
    ],
)
def test_bad_configurations_are_rejected(kw, message):
    with pytest.raises(ValueError, match=message):
        _config(**kw)
