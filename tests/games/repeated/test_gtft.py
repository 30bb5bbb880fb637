"""GTFT is axelrod's in every named stage game (issue 33); GTFTPayoff is the payoff-derived
variant, clamped, and the optimum against each uses the same forgiveness."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.games.answers.classes import CLASSES, draw_class
from distbench.games.repeated.optimum import best_total
from distbench.games.repeated.strategies import (
    AXELROD_GTFT_P,
    NAMES,
    STRATEGIES,
    get_machine,
    gtft_probability,
    play,
)

axl = pytest.importorskip("axelrod")


def _streams(seed, names, payoffs):
    """The random streams axelrod's Match(seed=seed) hands its stochastic players, in order."""
    from axelrod.random_ import RandomGenerator

    gen = RandomGenerator(seed=seed)
    out = []
    for name in names:
        stochastic = not get_machine(name, payoffs).deterministic
        out.append(np.random.RandomState(int(gen.random_seed_int())) if stochastic else None)
    return out


def _moves(match):
    return [(0 if x == axl.Action.C else 1, 0 if y == axl.Action.C else 1) for x, y in match]


@pytest.mark.parametrize("stage", CLASSES)
def test_gtft_moves_like_axelrods_in_every_named_stage_game(stage):
    rng = np.random.default_rng(33_0601)  # a seed no other test uses
    for k in range(3):
        a, _ = draw_class(stage, rng)
        payoffs = (a[0, 0], a[0, 1], a[1, 0], a[1, 1])  # (R, S, T, P) of the row seat
        game = axl.Game(r=payoffs[0], s=payoffs[1], t=payoffs[2], p=payoffs[3])
        for other in NAMES:
            for seed in (11 + k, 12 + k):
                rng_a, rng_b = _streams(seed, ("GTFT", other), payoffs)
                ours, theirs = play(get_machine("GTFT", payoffs), get_machine(other, payoffs),
                                    200, rng_a, rng_b)
                match = axl.Match((axl.GTFT(), getattr(axl, other)()), turns=200, game=game,
                                  seed=seed)
                assert list(zip(ours, theirs, strict=True)) == _moves(match.play()), \
                    (stage, payoffs, other, seed)


def test_axelrods_gtft_keeps_its_default_forgiveness_in_another_game():
    """What the test above relies on, said directly: axelrod's p in a stag hunt's match."""
    player = axl.GTFT()
    axl.Match((player, axl.Defector()), turns=1, game=axl.Game(r=9, s=0, t=5, p=1)).play()
    assert float(player._four_vector[(axl.Action.C, axl.Action.D)]) == pytest.approx(1 / 3)
    assert AXELROD_GTFT_P == pytest.approx(1 / 3)


def test_payoff_derived_variant_and_its_clamp():
    assert "GTFTPayoff" in STRATEGIES and "GTFTPayoff" not in NAMES
    pd = (3.0, 0.0, 5.0, 1.0)
    assert gtft_probability(pd) == pytest.approx(1 / 3)
    assert get_machine("GTFTPayoff", (4.0, 0.0, 5.0, 1.0)).coop[1] == pytest.approx(0.75)
    assert get_machine("GTFT", (4.0, 0.0, 5.0, 1.0)).coop[1] == pytest.approx(1 / 3)
    # stag hunt (R > T): the formula exceeds 1, clamped: a cooperator after its first move
    assert gtft_probability((9.0, 0.0, 5.0, 1.0)) == 1.0
    assert get_machine("GTFTPayoff", (9.0, 0.0, 5.0, 1.0)).deterministic
    # chicken (S > P): below 0, clamped: tit for tat
    assert gtft_probability((3.0, 1.0, 5.0, 0.0)) == 0.0
    # not prisoner's-dilemma-shaped: 1/3
    assert gtft_probability((1.0, 2.0, 0.0, 3.0)) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="Did you mean 'GTFTPayoff'"):
        get_machine("GTFTPayof")


def _forgiving(p):
    """Generous tit for tat with forgiveness ``p``, built by hand."""
    from distbench.games.repeated.strategies import Machine

    nxt = np.array([[[0, 1], [0, 1]], [[0, 1], [0, 1]]], dtype=np.int64)
    return Machine("hand", 0, np.array([1.0, p]), nxt)


@pytest.mark.parametrize("stage", CLASSES)
def test_the_optimum_uses_the_same_forgiveness(stage):
    """The regret's optimum against GTFT is the optimum against forgiveness 1/3 in every stage
    game; against GTFTPayoff, against the stage game's own clamped p."""
    rng = np.random.default_rng(33_0602)
    a, b = draw_class(stage, rng)
    own = (b[0, 0], b[1, 0], b[0, 1], b[1, 1])  # the opponent's (R, S, T, P)
    for rounds in (1, 5, 12):
        assert best_total(get_machine("GTFT", own), a, rounds) == \
            pytest.approx(best_total(_forgiving(1 / 3), a, rounds), abs=1e-12)
        assert best_total(get_machine("GTFTPayoff", own), a, rounds) == \
            pytest.approx(best_total(_forgiving(gtft_probability(own)), a, rounds), abs=1e-12)
