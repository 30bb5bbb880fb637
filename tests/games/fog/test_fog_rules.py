"""Property tests of the fog-of-war rules engine (quick set)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from distbench.games.fog.play import play_scripted
from distbench.games.fog.rules import (
    BANDS,
    HOLD,
    Deployment,
    Fight,
    Game,
    Rules,
    band_of,
    check_deployment,
    random_deployment,
    valid_power_vectors,
)

SEEDS = range(6)


def _game(rules=None, powers=((1, 2, 3, 4, 5), (5, 4, 3, 2, 1)), cols=((0, 1, 2, 3, 4),) * 2,
          sov=(0, 0), seed=0) -> Game:
    rules = rules or Rules()
    deps = tuple(Deployment(tuple(cols[p]), tuple(powers[p]), sov[p]) for p in (0, 1))
    return Game(rules, deps, np.random.default_rng(seed))


def _place(game: Game, player: int, force: int, cell) -> None:
    game.pos[player][force] = cell


def test_quick_valid_power_vectors_obey_the_at_most_twice_rule():
    v = valid_power_vectors(5)
    counts = np.stack([(v == p).sum(axis=1) for p in range(1, 6)], axis=1)
    assert counts.max() <= 2 and len(np.unique(v, axis=0)) == len(v)
    assert len(v) == 5**5 - 5 * (10 * 16 + 5 * 4 + 1)  # minus vectors with a value 3+ times


def test_quick_deployment_rule_rejects_a_third_copy_and_bad_cells():
    with pytest.raises(ValueError, match="at most 2"):
        check_deployment(Deployment((0, 1, 2, 3, 4), (3, 3, 3, 1, 2), 0), 7, 5)
    with pytest.raises(ValueError, match="distinct"):
        check_deployment(Deployment((0, 0, 2, 3, 4), (1, 2, 3, 4, 5), 0), 7, 5)
    with pytest.raises(ValueError, match="sovereign"):
        check_deployment(Deployment((0, 1, 2, 3, 4), (1, 2, 3, 4, 5), 5), 7, 5)


@pytest.mark.parametrize("seed", SEEDS)
def test_quick_random_deployment_is_valid(seed):
    dep = random_deployment(7, 5, np.random.default_rng(seed))
    check_deployment(dep, 7, 5)


@pytest.mark.parametrize("power", [1, 2, 3, 4, 5])
def test_quick_bands_contain_the_power(power):
    lo, hi = BANDS[band_of(power)]
    assert lo <= power <= hi


@pytest.mark.parametrize("accuracy", [0.0, 0.3, 0.7, 1.0])
def test_quick_scouting_never_lies(accuracy):
    rules = Rules(scout_accuracy=accuracy, scout_range=9)
    for seed in range(20):
        g = _game(rules, seed=seed)
        g.step(([("scout", seed % 5)] + [HOLD] * 4, [HOLD] * 5))
        (rev,) = g.reveals[0]
        true = g.power[1][rev.enemy]
        assert rev.low <= true <= rev.high
        if rev.kind == "exact":
            assert rev.low == rev.high == true
        else:
            assert (rev.low, rev.high) == BANDS[rev.kind]
        if accuracy == 1.0:
            assert rev.kind == "exact"
        if accuracy == 0.0:
            assert rev.kind != "exact"


def test_quick_scout_out_of_range_reveals_nothing():
    g = _game(Rules(scout_range=3))  # rows 0 and 6: distance 6
    events = g.step(([("scout", 0)] + [HOLD] * 4, [HOLD] * 5))
    assert g.reveals[0] == [] and [e.kind for e in events] == ["scout_miss"]


def test_quick_scouting_off_makes_scout_a_hold():
    g = _game(Rules(scouting=False, scout_range=9))
    events = g.step(([("scout", 0)] + [HOLD] * 4, [HOLD] * 5))
    assert g.reveals[0] == [] and events[0].kind == "invalid_order"


@pytest.mark.parametrize("seed", SEEDS)
def test_quick_hidden_powers_stay_hidden_unless_revealed(seed):
    s = play_scripted(Rules(), "tier3", "tier2", seed, 0)
    game = s.game
    obs = game.observation(0)
    other = dataclasses.replace(obs)
    # Changing the enemy's powers changes nothing the player observes, except via reveals/fights.
    saved = list(game.power[1])
    game.power[1] = [6 - p for p in saved]
    assert game.observation(0) == other
    game.power[1] = saved
    assert not any(f.name in ("enemy_power", "enemy_sovereign") for f in dataclasses.fields(obs))
    text = repr(obs)
    assert "power" not in text.split("enemy_pos")[1].split("reveals")[0]


def _mirror(game: Game) -> Game:
    """The same position with the players' roles swapped."""
    m = _game(game.rules, powers=(tuple(game.power[1]), tuple(game.power[0])),
              sov=(game.sovereign[1], game.sovereign[0]))
    m.pos = [list(game.pos[1]), list(game.pos[0])]
    return m


@pytest.mark.parametrize("seed", range(10))
def test_quick_combat_is_symmetric_under_swapping_players(seed):
    rng = np.random.default_rng(seed)
    rules = Rules(board_size=5, scouting=False)
    powers = tuple(tuple(int(x) for x in valid_power_vectors(5)[rng.integers(1000)]) for _ in (0, 1))
    g = _game(rules, powers=powers)
    cells = rng.choice(25, size=10, replace=False)
    g.pos = [[divmod(int(c), 5) for c in cells[:5]], [divmod(int(c), 5) for c in cells[5:]]]
    m = _mirror(g)
    kinds = [("move", "N"), ("move", "S"), ("charge", "E"), ("charge", "W"), ("fortify", None),
             ("ambush", None), HOLD]
    orders = [[kinds[int(rng.integers(len(kinds)))] for _ in range(5)] for _ in (0, 1)]
    g.step((orders[0], orders[1]))
    m.step((orders[1], orders[0]))
    assert g.alive == [m.alive[1], m.alive[0]]
    assert g.pos == [m.pos[1], m.pos[0]]


def test_quick_higher_power_wins_and_a_tie_removes_both():
    g = _game(Rules(board_size=5), powers=((3, 1, 1, 2, 2), (3, 1, 2, 2, 4)))
    g.pos = [[(2, 1), (0, 0), (0, 1), (0, 2), (0, 3)], [(2, 2), (4, 0), (4, 1), (4, 2), (4, 4)]]
    g.step(([("move", "E")] + [HOLD] * 4, [HOLD] * 5))  # 3 vs 3
    assert not g.alive[0][0] and not g.alive[1][0]
    g2 = _game(Rules(board_size=5), powers=((4, 1, 1, 2, 2), (3, 1, 2, 2, 4)))
    g2.pos = [list(g.pos[0]), list(g.pos[1])]
    g2.pos[0][0], g2.pos[1][0] = (2, 1), (2, 2)
    g2.step(([("move", "E")] + [HOLD] * 4, [HOLD] * 5))
    assert g2.alive[0][0] and not g2.alive[1][0]


def test_quick_charge_and_fortify_bonuses():
    # 3 charging (+1 = 4) into a fortified 3 (+1 = 4): tie. Fortify alone (4) beats a move (3).
    for attacker, defender, alive_a, alive_b in [(("charge", "E"), ("fortify", None), False, False),
                                                 (("move", "E"), ("fortify", None), False, True),
                                                 (("charge", "E"), HOLD, True, False)]:
        g = _game(Rules(board_size=5), powers=((3, 1, 1, 2, 2), (3, 1, 2, 2, 4)))
        g.pos = [[(2, 0) if attacker[0] == "charge" else (2, 1), (0, 0), (0, 1), (0, 2), (0, 3)],
                 [(2, 2), (4, 0), (4, 1), (4, 2), (4, 4)]]
        g.step(([attacker] + [HOLD] * 4, [defender] + [HOLD] * 4))
        assert (g.alive[0][0], g.alive[1][0]) == (alive_a, alive_b)


def test_quick_ambusher_strikes_first_and_wins_ties():
    g = _game(Rules(board_size=5), powers=((3, 1, 1, 2, 2), (3, 1, 2, 2, 4)))
    g.pos = [[(2, 3), (0, 0), (0, 1), (0, 2), (0, 3)], [(2, 1), (4, 0), (4, 1), (4, 2), (4, 4)]]
    events = g.step(([("ambush", None)] + [HOLD] * 4, [("move", "E")] + [HOLD] * 4))
    assert g.alive[0][0] and not g.alive[1][0] and events[0].kind == "ambush"


def test_quick_head_on_forces_fight_instead_of_passing():
    g = _game(Rules(board_size=5), powers=((4, 1, 1, 2, 2), (3, 1, 2, 2, 4)))
    g.pos = [[(2, 1), (0, 0), (0, 1), (0, 2), (0, 3)], [(2, 2), (4, 0), (4, 1), (4, 2), (4, 4)]]
    g.step(([("move", "E")] + [HOLD] * 4, [("move", "W")] + [HOLD] * 4))
    assert g.alive[0][0] and not g.alive[1][0] and g.pos[0][0] == (2, 2)


def test_quick_friendly_forces_never_share_a_cell():
    for seed in SEEDS:
        s = play_scripted(Rules(), "tier1", "tier1", seed, 1)
        assert s.done
    g = _game(Rules(board_size=5))
    g.pos[0][:2] = [(2, 1), (2, 3)]
    g.step(([("move", "E"), ("move", "W")] + [HOLD] * 3, [HOLD] * 5))
    assert g.pos[0][0] == (2, 2) and g.pos[0][1] == (2, 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_quick_noose_never_kills_inside_the_safe_zone(seed):
    s = play_scripted(Rules(noose_start=2, noose_every=1), "tier1", "tier1", seed, 0)
    n = s.rules.board_size
    kills = [e for e in s.events if e.kind == "noose_kill"]
    for e in kills:
        r, c = e.details["cell"]
        assert r in (0, n - 1) or c in (0, n - 1)
        assert s.rules.noose_turn(e.turn)


def test_quick_noose_kills_on_the_ring_at_its_turns():
    g = _game(Rules(noose_start=1, noose_every=1))
    g.step(([HOLD] * 5, [HOLD] * 5))  # everyone still on the home rows: all die
    assert not any(g.alive[0]) and not any(g.alive[1])
    assert g.done and g.winner == "draw" and g.end_reason == "mutual_sovereign_kill"


@pytest.mark.parametrize("max_turns", [1, 3, 7])
def test_quick_games_end_by_the_turn_limit(max_turns):
    for seed in SEEDS:
        s = play_scripted(Rules(max_turns=max_turns, noose_start=50), "tier1", "tier2", seed, 0)
        assert s.done and s.game.turn <= max_turns
        if s.game.end_reason == "turn_limit":
            t = [s.game.total_power(p) for p in (0, 1)]
            expected = "a" if t[0] > t[1] else "b" if t[1] > t[0] else "draw"
            assert s.game.winner == expected


def test_quick_killing_the_sovereign_wins():
    g = _game(Rules(board_size=5), powers=((4, 1, 1, 2, 2), (3, 1, 2, 2, 4)), sov=(1, 0))
    g.pos = [[(2, 1), (0, 0), (0, 1), (0, 2), (0, 3)], [(2, 2), (4, 0), (4, 1), (4, 2), (4, 4)]]
    g.step(([("move", "E")] + [HOLD] * 4, [HOLD] * 5))
    assert g.done and g.winner == "a" and g.end_reason == "sovereign_killed"


@pytest.mark.parametrize("seed", SEEDS)
def test_quick_games_are_deterministic_by_seed(seed):
    a = play_scripted(Rules(), "tier4", "tier3", seed, 2)
    b = play_scripted(Rules(), "tier4", "tier3", seed, 2)
    assert [(e.turn, e.kind, e.details) for e in a.events] == [(e.turn, e.kind, e.details) for e in b.events]
    assert a.game.winner == b.game.winner


@pytest.mark.parametrize("outcome,ambush", [("win", ""), ("loss", ""), ("tie", ""), ("win", "own"),
                                            ("loss", "own"), ("win", "enemy"), ("loss", "enemy")])
def test_quick_fight_bounds_hold_the_true_power(outcome, ambush):
    """Every (own power, enemy power, bonus) consistent with the outcome is inside bounds()."""
    for own in range(1, 7):
        for enemy in range(1, 6):
            for bonus in (0, 1):
                e = enemy + bonus
                if ambush == "own":
                    happened = "win" if own >= e else "loss"
                elif ambush == "enemy":
                    happened = "win" if own > e else "loss"
                else:
                    happened = "win" if own > e else "loss" if own < e else "tie"
                lo, hi = Fight(1, 0, 0, own, bonus, outcome, ambush).bounds()
                assert (lo <= enemy <= hi) == (happened == outcome)
