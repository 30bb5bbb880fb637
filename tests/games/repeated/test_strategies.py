"""The finite-state strategies against axelrod's, and the dynamic-programming optimum against
brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from distbench.games.repeated.optimum import best_total
from distbench.games.repeated.strategies import DETERMINISTIC, NAMES, get_machine, play

axl = pytest.importorskip("axelrod")


def _axelrod(name):
    return getattr(axl, name)()


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_each_deterministic_machine_moves_like_axelrod_against_every_other(name):
    for other in DETERMINISTIC:
        ours, theirs = play(get_machine(name), get_machine(other), 200)
        match = axl.Match((_axelrod(name), _axelrod(other)), turns=200).play()
        expected = [(0 if x == axl.Action.C else 1, 0 if y == axl.Action.C else 1)
                    for x, y in match]
        assert list(zip(ours, theirs, strict=True)) == expected, (name, other)


def test_deterministic_machines_follow_axelrod_against_a_random_opponent():
    """Against a seeded random sequence (axelrod's Random with a seed), move for move."""
    rng = np.random.default_rng(4)
    for name in DETERMINISTIC:
        mine = get_machine(name)
        player = _axelrod(name)
        for seed in range(3):
            moves = rng.integers(0, 2, 200)
            opponent = axl.MockPlayer(actions=[axl.Action.C if m == 0 else axl.Action.D
                                               for m in moves])
            match = axl.Match((player, opponent), turns=200, seed=seed).play()
            state = mine.start
            for (x, _), o in zip(match, moves, strict=True):
                own = mine.move(state)
                assert (0 if x == axl.Action.C else 1) == own, name
                state = int(mine.next[state, own, o])


def test_stochastic_machines_have_axelrods_probabilities():
    gtft = get_machine("GTFT")
    vector = axl.GTFT()._four_vector
    C, D = axl.Action.C, axl.Action.D
    assert gtft.coop[0] == pytest.approx(float(vector[(C, C)]))
    assert gtft.coop[1] == pytest.approx(float(vector[(C, D)]))
    assert get_machine("Random").coop[0] == 0.5 and axl.Random().p == 0.5
    assert not gtft.deterministic and get_machine("TitForTat").deterministic


def test_unknown_names_get_a_hint():
    with pytest.raises(ValueError, match="Did you mean 'TitForTat'"):
        get_machine("TitForTatt")
    assert len(NAMES) == len(set(NAMES)) == 11


@pytest.mark.parametrize("rounds", [1, 2, 5, 10])
def test_dynamic_programming_equals_brute_force_over_every_action_sequence(rounds):
    rng = np.random.default_rng(rounds)
    for _ in range(3):
        payoff = rng.integers(0, 10, (2, 2)).astype(float)
        for name in DETERMINISTIC:
            m = get_machine(name)
            best = -np.inf
            for seq in itertools.product((0, 1), repeat=rounds):
                state, total = m.start, 0.0
                for a in seq:
                    o = m.move(state)
                    total += payoff[a, o]
                    state = int(m.next[state, o, a])
                best = max(best, total)
            assert best_total(m, payoff, rounds) == best, (name, rounds)


def test_expected_optimum_against_a_stochastic_opponent():
    payoff = np.array([[3.0, 0.0], [5.0, 1.0]])
    # Random: the opponent ignores the model, so always defecting is best: 0.5*5 + 0.5*1
    assert best_total(get_machine("Random"), payoff, 10) == pytest.approx(30.0)
    # against tit for tat over 10 rounds: cooperate then defect in the last round: 9*3 + 5
    assert best_total(get_machine("TitForTat"), payoff, 10) == 32.0


def _streams(seed, names):
    """The random streams axelrod's Match(seed=seed) gives its stochastic players, in order."""
    from axelrod.random_ import RandomGenerator

    gen = RandomGenerator(seed=seed)
    out = []
    for name in names:
        stochastic = not get_machine(name).deterministic
        out.append(np.random.RandomState(int(gen.random_seed_int())) if stochastic else None)
    return out


@pytest.mark.parametrize("name", ["GTFT", "Random"])
def test_stochastic_machines_move_like_axelrod_given_its_random_streams(name):
    for other in NAMES:
        for seed in (1, 2):
            rng_a, rng_b = _streams(seed, (name, other))
            ours, theirs = play(get_machine(name), get_machine(other), 200, rng_a, rng_b)
            match = axl.Match((_axelrod(name), _axelrod(other)), turns=200, seed=seed).play()
            expected = [(0 if x == axl.Action.C else 1, 0 if y == axl.Action.C else 1)
                        for x, y in match]
            assert list(zip(ours, theirs, strict=True)) == expected, (name, other, seed)
