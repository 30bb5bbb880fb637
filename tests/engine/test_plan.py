"""Planning: stable shard ids, every game exactly once."""

from __future__ import annotations

import pytest

from distbench.games.matrix.generate import BLOCK
from distbench.games.matrix.plan import (
    MatrixRunConfig,
    games_per_shard,
    plan_matrix,
    trial_ranges,
)
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
    assert games_per_shard(_config(num_games=10, num_trials=10_000, shard_trials=100)) == 1
    assert games_per_shard(cfg) % BLOCK == 0


def test_a_game_with_more_trials_than_a_shard_holds_is_split_across_shards():
    cfg = _config(buckets=("3x3_midVar_mixed",), seeds=(1,), num_games=3, num_trials=1000,
                  modes=("pure", "mixed", "logprob"), shard_trials=300)
    # 300 rows a shard: the logprob reading and 149 trials of each of the two sampled modes
    assert trial_ranges(cfg) == [(lo, min(lo + 149, 1000)) for lo in range(0, 1000, 149)]
    shards = plan_matrix(cfg)
    assert len(shards) == 3 * 7 and len({s.shard_id for s in shards}) == len(shards)
    assert max(s.num_trials_total for s in shards) <= 300
    for game in range(3):
        parts = [s for s in shards if s.start == game]
        assert {s.chunk_id for s in parts} == {parts[0].chunk_id}  # one games file
        covered = sorted(t for s in parts for t in range(*s.trials))
        assert covered == list(range(1000))  # every trial once
        assert [s for s in parts if "logprob" in s.modes] == [parts[0]]  # one reading a game
        assert sum(s.num_trials_total for s in parts) == 2 * 1000 + 1


def test_a_game_that_fits_in_a_shard_keeps_its_shard_id():
    """Splitting changed nothing for games that fit: their ids (and so resumes of runs made
    before it) are the same as they always were."""
    cfg = _config(buckets=("3x3_midVar_mixed",), seeds=(1,), num_games=20, num_trials=10,
                  modes=("pure",))
    assert trial_ranges(cfg) == [(0, 10)]
    assert [s.shard_id for s in plan_matrix(cfg)] == ["m-b49e5314016c8341"]


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
