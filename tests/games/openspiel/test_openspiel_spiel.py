"""Loading OpenSpiel games: one-line errors, the install hint without the extra."""

from __future__ import annotations

import sys

import pytest

from distbench.games.openspiel import spiel


def test_without_open_spiel_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    with pytest.raises(ValueError) as err:
        spiel.pyspiel()
    message = str(err.value)
    assert "\n" not in message
    assert ".venv/bin/pip install -e '.[openspiel]'" in message


def test_a_game_string_with_parameters_loads_as_openspiel_parses_it():
    pytest.importorskip("pyspiel")
    game = spiel.load_game("liars_dice(dice_sides=4)")
    assert game.get_parameters()["dice_sides"] == 4


def test_a_simultaneous_game_is_played_turn_based():
    pytest.importorskip("pyspiel")
    game = spiel.load_game("goofspiel(num_cards=4)")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() in (0, 1)


@pytest.mark.parametrize("text, needle", [
    ("kuhn_pokr", "Did you mean 'kuhn_poker'?"),
    ("kuhn_poker(foo=1)", "Unknown parameter 'foo'"),
    ("kuhn_poker(players=3)", "two-player"),
])
def test_a_bad_game_is_one_line_naming_it(text, needle):
    pytest.importorskip("pyspiel")
    with pytest.raises(ValueError) as err:
        spiel.load_game(text)
    assert needle in str(err.value) and "\n" not in str(err.value)
