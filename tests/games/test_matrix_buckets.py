"""Bucket catalog and seeded game generation."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.games.matrix.buckets import (
    DEFAULT_BUCKETS,
    UnknownBucketError,
    default_bucket_id,
    get_bucket,
    seed_bucket,
    with_payoffs,
)
from distbench.games.matrix.generate import (
    BLOCK,
    game_ids,
    generate_games,
    has_saddle_point,
    saddle_point_rate,
)
from distbench.kernels import solve_zero_sum


def test_bucket_id_is_parsed_into_size_spread_and_kind():
    b = get_bucket("4x3_highVar_mixed")
    assert (b.rows, b.cols, b.spread, b.kind, b.low, b.high) == (4, 3, "highVar", "mixed", -100, 100)
    assert get_bucket("2x2_lowVar_pure").high == 10
    assert get_bucket("10x10_midVar_any").low == -50


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("3x3_medVar_mixed", "Did you mean 'midVar'"),
        ("3x3_midVar_mixd", "unknown equilibrium kind"),
        ("11x3_lowVar_pure", "from 1 to 10"),
        ("0x3_lowVar_pure", "from 1 to 10"),
        ("1x4_lowVar_mixed", "at least 2x2"),
        ("3by3", "expected ROWSxCOLS_SPREAD_KIND"),
        ("", "expected ROWSxCOLS_SPREAD_KIND"),
    ],
)
def test_bad_bucket_ids_are_rejected_with_a_useful_message(bad, fragment):
    with pytest.raises(UnknownBucketError, match=fragment):
        get_bucket(bad)


def test_default_buckets_are_valid_and_the_size_default_has_no_condition():
    for bucket in DEFAULT_BUCKETS:
        get_bucket(bucket)
    assert default_bucket_id(3, 4) == "3x4_midVar_any"


@pytest.mark.parametrize("size", range(2, 11))
@pytest.mark.parametrize("spread", ["lowVar", "highVar"])
def test_pure_buckets_have_saddle_points_and_mixed_ones_do_not(size, spread):
    pure = generate_games(f"{size}x{size}_{spread}_pure", 7, 0, 300)
    mixed = generate_games(f"{size}x{size}_{spread}_mixed", 7, 0, 300)
    assert has_saddle_point(pure).all()
    assert not has_saddle_point(mixed).any()
    # The solver agrees: the value is the saddle entry in pure games, and lies between the
    # pure maximin and minimax (which differ) in mixed ones.
    maximin = pure.min(axis=2).max(axis=1)
    np.testing.assert_allclose(solve_zero_sum(pure).value, maximin, rtol=0, atol=1e-9)
    lo, hi = mixed.min(axis=2).max(axis=1), mixed.max(axis=1).min(axis=1)
    value = solve_zero_sum(mixed).value
    assert (lo < hi).all() and (lo - 1e-9 <= value).all() and (value <= hi + 1e-9).all()


def test_saddle_point_check_matches_a_direct_search():
    rng = np.random.default_rng(3)
    games = rng.integers(-3, 4, size=(500, 3, 4)).astype(float)
    direct = np.array([
        any(g[i, j] == g[i].min() and g[i, j] == g[:, j].max()
            for i in range(g.shape[0]) for j in range(g.shape[1]))
        for g in games
    ])
    np.testing.assert_array_equal(has_saddle_point(games), direct)


def test_payoffs_are_integers_within_the_spread():
    for bucket in ("3x3_lowVar_mixed", "6x6_midVar_pure", "2x5_highVar_any"):
        b = get_bucket(bucket)
        g = generate_games(bucket, 1, 0, 500)
        assert g.shape == (500, b.rows, b.cols)
        assert g.min() >= b.low and g.max() <= b.high
        np.testing.assert_array_equal(g, np.round(g))


def test_same_seed_same_games_and_other_seed_other_games():
    a = generate_games("3x3_midVar_mixed", 42, 0, 100)
    b = generate_games("3x3_midVar_mixed", 42, 0, 100)
    c = generate_games("3x3_midVar_mixed", 43, 0, 100)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_games_do_not_depend_on_how_the_range_is_cut():
    whole = generate_games("5x5_lowVar_pure", 9, 0, 3 * BLOCK + 10)
    parts = [generate_games("5x5_lowVar_pure", 9, lo, hi)
             for lo, hi in [(0, 5), (5, BLOCK + 1), (BLOCK + 1, 3 * BLOCK + 10)]]
    np.testing.assert_array_equal(whole, np.concatenate(parts))


def test_buckets_draw_independent_streams():
    a = generate_games("3x3_lowVar_any", 1, 0, 50)
    b = generate_games("3x3_lowVar_mixed", 1, 0, 50)
    assert not np.array_equal(a, b)


def test_bad_generation_arguments_raise():
    with pytest.raises(ValueError, match="seed"):
        generate_games("3x3_lowVar_any", -1, 0, 5)
    with pytest.raises(ValueError, match="start <= stop"):
        generate_games("3x3_lowVar_any", 1, 5, 2)
    assert generate_games("3x3_lowVar_any", 1, 4, 4).shape == (0, 3, 3)


def test_game_ids_are_stable_and_unique():
    ids = game_ids("2x2_lowVar_pure", 5, 10, 13)
    assert ids == ["2x2_lowVar_pure/s5/g10", "2x2_lowVar_pure/s5/g11", "2x2_lowVar_pure/s5/g12"]


def test_saddle_point_rate_matches_the_closed_form():
    assert saddle_point_rate(2, 2) == pytest.approx(2 / 3)
    assert saddle_point_rate(3, 3) == pytest.approx(0.3)


@pytest.mark.parametrize("spread, half", [("lowVar", 10), ("midVar", 50), ("highVar", 100)])
@pytest.mark.parametrize("kind", ["pure", "mixed", "any"])
def test_float_spreads_draw_the_seed_tools_real_payoffs_in_the_same_range(spread, half, kind):
    bucket = f"4x4_{spread}Float_{kind}"
    b = get_bucket(bucket)
    assert (b.floats, b.low, b.high, b.kind) == (True, -half, half, kind)
    g = generate_games(bucket, 5, 0, 400)
    assert g.min() >= -half and g.max() <= half
    assert (g != np.round(g)).mean() > 0.99  # reals, not integers
    if kind == "any":  # uniform: mean near 0, spread of the uniform law (sd = half / sqrt 3)
        assert abs(g.mean()) < 0.05 * half and abs(g.std() - half / 3**0.5) < 0.05 * half
    else:
        assert has_saddle_point(g).all() == (kind == "pure")
        assert (~has_saddle_point(g)).all() == (kind == "mixed")
    np.testing.assert_array_equal(g, generate_games(bucket, 5, 0, 400))  # seeded
    assert not np.array_equal(g, generate_games(f"4x4_{spread}_{kind}", 5, 0, 400))


def test_planted_saddle_points_of_float_buckets_are_saddle_points():
    g = generate_games("8x8_highVarFloat_pure", 3, 0, 300)  # rate < PLANT_BELOW: planted
    assert has_saddle_point(g).all() and (g != np.round(g)).any()
    assert g.min() >= -100 and g.max() <= 100


def test_the_seed_payoffs_name_a_buckets_float_twin_and_back():
    assert with_payoffs("3x3_midVar_mixed", "seed") == "3x3_midVarFloat_mixed"
    assert with_payoffs("3x3_midVarFloat_mixed", "seed") == "3x3_midVarFloat_mixed"
    assert with_payoffs("3x3_midVarFloat_mixed", "int") == "3x3_midVar_mixed"
    assert seed_bucket("4x4_highVarFloat_pure") == {
        "bucket_id": "4x4_highVar_pure", "num_rows": 4, "num_cols": 4,
        "payoff_range": [-100, 100], "nash_type": "pure"}
    with pytest.raises(ValueError, match="int, seed"):
        with_payoffs("3x3_midVar_mixed", "normal")
    with pytest.raises(UnknownBucketError, match="Float"):
        get_bucket("3x3_midFloat_mixed")
