"""GAMA-Bench's templates rendered from a checkout: templates and game code the test writes in
GAMA's formats (comment block, ``!<INPUT i>!`` slots, ``<part>///</part>``), never GAMA's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from distbench.games.gama import rules, templates
from distbench.games.gama.rules import GuessingParams, PirateParams

HEADER = "made-up header\n!<INPUT 0>! -- a slot\n\n<commentblockmarker>###</commentblockmarker>\n"


def _template(root: Path, rel: str, body: str) -> None:
    path = root / "prompt_template" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + body)


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "checkout"
    _template(root, "guessing_game/description_v1.txt",
              "!<INPUT 5>!\n\nT: !<INPUT 0>! seats, !<INPUT 1>! rounds, !<INPUT 2>!..!<INPUT 3>!, aim !<INPUT 4>!.\n")
    _template(root, "guessing_game/request_v1.txt", "Round !<INPUT 0>!: aim at !<INPUT 1>!.\n\n!<INPUT 4>!")
    _template(root, "guessing_game/report_v1.txt",
              "R!<INPUT 0>! mean !<INPUT 1>! (!<INPUT 2>!) -> !<INPUT 3>!, best !<INPUT 4>!\n"
              "<part>///</part>\n{\"n\": \"!<INPUT 5>!\"}\n<part>///</part>\n!<INPUT 6>!.")
    _template(root, "guessing_game/request_v2.txt", "V2 round !<INPUT 0>!. !<INPUT 4>!")
    _template(root, "cot_prompts/cot1.txt", "Think slowly.")
    _template(root, "role_prompts/role2.txt", "You are careful.")
    _template(root, "pirate_game/request2_v1.txt", "Rank !<INPUT 0>! splits !<INPUT 1>!. !<INPUT 2>!")
    _template(root, "pirate_game/request1_v1.txt", "Plan of round !<INPUT 0>!: !<INPUT 1>!; yours !<INPUT 2>!. !<INPUT 3>!")
    games = root / "games"
    games.mkdir()
    (games / "guessing_game.py").write_text(
        "class G:\n"
        "    def report(self, won):\n"
        "        won_msg = 'Yay' if won else 'Nay'\n"
        "    def start(self, cot_msg):\n"
        "        if self.cot:\n"
        "            output_format = f'{cot_msg} Answer {{\"n\": \"{self.min}_to_{self.max}\"}} with why'\n"
        "        else:\n"
        "            output_format = f'Answer {{\"n\": \"{self.min}_to_{self.max}\"}}'\n")
    (games / "pirate_game.py").write_text(
        "def start():\n"
        "    output_format = 'cot {g_input_0}'.format(g_input_0=g_input_0)\n"
        "    output_format = f'Split from {g_input_0} to {g_input_2}'\n"
        "    output_format = f'{cot_msg} vote, with why'\n"
        "    output_format = f'Vote'\n")
    return root


def test_description_request_report(checkout):
    t = templates.open_templates(checkout)
    state = rules.new_game("guessing", GuessingParams(players=3, rounds=2))
    assert templates.description(t, state) == "\n\nT: 3 seats, 2 rounds, 0..100, aim 2/3."
    assert templates.description(t, state, role=2).startswith(" You are careful.\n\nT: 3")
    assert templates.request(t, state, 0) == 'Round 1: aim at 2/3.\n\nAnswer {"n": "0_to_100"}'
    assert templates.request(t, state, 0, cot=1).endswith(' Think slowly. Answer {"n": "0_to_100"} with why')
    after, outcome = rules.resolve_round(state, {0: 30, 1: 30, 2: 60})
    assert templates.report(t, state, outcome, 2) == [
        "R1 mean 40 (2/3) -> 26.67, best 30", '{"n": "60"}', "Nay."]
    assert templates.report(t, state, outcome, 0)[2] == "Yay."
    v2 = templates.open_templates(checkout / "prompt_template", version="v2")
    assert templates.request(v2, after, 1) == 'V2 round 2. Answer {"n": "0_to_100"}'


def test_pirate_requests(checkout):
    t = templates.open_templates(checkout)
    state = rules.new_game("pirate", PirateParams(players=3))
    assert templates.request(t, state, 0) == "Rank 1 splits 100. Split from 1 to 3"
    assert templates.request(t, state, 2, plan=[99, 0, 1]) == (
        "Plan of round 1: {'1-th': 99, '2-th': 0, '3-th': 1}; yours 1. Vote")
    # the proposal as the proposer wrote it (GAMA prints the parsed JSON object)
    written = {"1-th": "99", "2-th": "0", "3-th": "1"}
    assert templates.request(t, state, 1, plan=written) == (
        "Plan of round 1: {'1-th': '99', '2-th': '0', '3-th': '1'}; yours 0. Vote")


def test_missing_checkout_or_template_is_one_line(tmp_path, checkout):
    with pytest.raises(templates.TemplateError, match="--option templates="):
        templates.open_templates(tmp_path / "nowhere")
    t = templates.open_templates(checkout)
    state = rules.new_game("dollar")
    with pytest.raises(templates.TemplateError, match="description_v1.txt: no such template"):
        templates.description(t, state)
