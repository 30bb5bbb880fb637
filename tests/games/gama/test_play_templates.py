"""Playing with GAMA's own words (``--option templates=PATH``): the conversation is built from
the checkout's templates (written here by the test in GAMA's format, never GAMA's text), the
answers are read in GAMA's JSON format, and a missing checkout is one line."""

from __future__ import annotations

import pytest

from distbench.games.gama.plan import GamaRunConfig, plan_shards
from distbench.games.gama.runner import run_shard
from distbench.llm.base import Backend, Response
from distbench.llm.registry import make_spec

MARK = "<commentblockmarker>###</commentblockmarker>"


def _checkout(root):
    folder = root / "prompt_template" / "guessing_game"
    folder.mkdir(parents=True)
    (folder / "description_v1.txt").write_text(f"hdr\n{MARK}\nSYS n=!<INPUT 0>! r=!<INPUT 1>!")
    (folder / "request_v1.txt").write_text(f"hdr\n{MARK}\nASK !<INPUT 0>! | !<INPUT 4>!")
    (folder / "report_v1.txt").write_text(
        f"hdr\n{MARK}\nREP !<INPUT 0>! avg !<INPUT 1>!\n<part>///</part>\n"
        "{\"chosen_number\": \"!<INPUT 5>!\"}\n<part>///</part>\n!<INPUT 6>!")
    (root / "games").mkdir()
    (root / "games" / "guessing_game.py").write_text(
        "def f(won):\n"
        "    won_msg = 'WIN' if won else 'LOSE'\n"
        "    if cot:\n"
        "        output_format = f'{cot_msg} json {{\"chosen_number\": \"x\"}}'\n"
        "    else:\n"
        "        output_format = f'json {{\"chosen_number\": \"x\"}}'\n")
    return root


class _Json(Backend):
    in_process = True

    def __init__(self, spec):
        super().__init__(spec)
        self.seen = []

    async def generate(self, requests):
        self.seen.append(list(requests))
        return [Response(text='{"chosen_number": "40"}') for _ in requests]


def test_gamas_templates_build_the_conversation_and_json_answers_parse(tmp_path):
    root = _checkout(tmp_path / "checkout")
    spec = make_spec("dummy")
    backend = _Json(spec)
    config = GamaRunConfig(game="guessing", seats=(spec,) * 2, num_games=1,
                           options=(("players", "2"), ("rounds", "2")), templates=str(root))
    assert config.version == "v1"
    result = run_shard(plan_shards(config, "r")[0], {spec: backend})
    games = result.tables["gama_games"][1].to_pylist()
    assert games[0]["status"] == "ok" and games[0]["version"] == "v1"
    messages = backend.seen[-1][0].messages
    assert messages[0] == ("system", "SYS n=2 r=2")
    assert [r for r, _ in messages] == ["system", "user", "assistant", "user", "user"]
    assert messages[2] == ("assistant", '{"chosen_number": "40"}')
    assert messages[-1][1].startswith("ASK 2 | json")


def test_a_folder_without_templates_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="templates=") as info:
        GamaRunConfig(game="guessing", seats=(make_spec("dummy"),) * 10,
                      templates=str(tmp_path))
    assert "\n" not in str(info.value)
