"""Replays: pages that draw a game step by step (``distbench.engine.replays.write_replays``),
opened in headless Chromium: no console error, no request to another host, stepping (keys and
buttons) changes what is drawn, and a ``#r=..&s=..`` link opens at that moment."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from distbench.engine.driver import run_config, run_plan
from distbench.engine.replays import write_replays
from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.games.openspiel.plan import OpenSpielRunConfig, plan_openspiel
from distbench.games.repeated.plan import RepeatedRunConfig, plan_repeated
from distbench.llm.registry import make_spec

CHROMIUM = Path("/usr/bin/chromium")
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Small runs of the families that draw replays."""
    root = tmp_path_factory.mktemp("replay-runs")
    matrix = MatrixRunConfig(buckets=("3x3_midVar_any", "2x4_lowVar_pure"), seeds=(7,),
                             num_games=6, num_trials=3, modes=("pure", "mixed"),
                             llm=make_spec("dummy"))
    run_config(matrix, root / "matrix", parallel=False)
    run_plan(plan_negotiation(NegotiationRunConfig(
        seeds=(1,), num_games=2, modes=("semi",), langs=("en",), player_a="scripted:fair",
        player_b="scripted:greedy"), "neg"), root / "negotiation", parallel=False)
    run_plan(plan_fog(FogRunConfig(pairings=(("tier3", "tier2"),), num_games=2), "fog"),
             root / "fog", parallel=False)
    for game in ("tic_tac_toe", "kuhn_poker"):
        run_plan(plan_openspiel(OpenSpielRunConfig(game=game, seeds=(1,), num_games=1,
                                                   player=make_spec("dummy"), opponent="random"),
                                game), root / game, parallel=False)
    run_plan(plan_bimatrix(BimatrixRunConfig(sets=("class:stag_hunt",), llm=make_spec("dummy"),
                                             num_games=2, num_trials=2), "bim"),
             root / "bimatrix", parallel=False)
    run_plan(plan_repeated(RepeatedRunConfig(llm=make_spec("dummy"), rounds=5, num_games=2),
                           "rep"), root / "repeated", parallel=False)
    return root


def chromium(url: str, tmp_path: Path, *, shot: Path | None = None, width: int = 1000) -> str:
    """The DOM after the page's scripts ran (or a screenshot); fails on any console message."""
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    what = [f"--screenshot={shot}", f"--window-size={width},900"] if shot else ["--dump-dom"]
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={tmp_path / 'profile'}", *what, url],
        check=True, capture_output=True, text=True, timeout=120)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    return done.stdout


def stage(dom: str) -> tuple[str, int, str]:
    """(replay id, step, inner HTML) of the drawing."""
    m = re.search(r'<div id="stage" data-replay="([^"]*)" data-step="(\d+)">(.*?)</div>\s*</main>',
                  dom, re.S)
    assert m, dom[-2000:]
    return m.group(1), int(m.group(2)), m.group(3)


def with_script(page: Path, out: Path, script: str) -> Path:
    """A copy of ``page`` that runs ``script`` once the replay started (a user's clicks)."""
    text = page.read_text(encoding="utf-8")
    out.write_text(text.replace("</body>", f"<script>{script}</script></body>"), encoding="utf-8")
    return out


def assert_self_contained(text: str) -> None:
    """No script, style, image, font or frame from anywhere: nothing is fetched."""
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text, re.I)
    assert not re.search(r"url\(|@import|fetch\(|XMLHttpRequest|<iframe|<link", text, re.I)


def check_family(run: Path, tmp_path: Path, family: str) -> tuple[Path, str]:
    pages = write_replays(run, tmp_path / "site", per_game=2, seed=3)
    mine = {k: v for k, v in pages.items() if k.startswith(family + "/")}
    assert mine, pages
    page = tmp_path / "site" / next(iter(mine.values()))
    text = page.read_text(encoding="utf-8")
    assert_self_contained(text)
    dom = chromium(page.resolve().as_uri(), tmp_path)
    first_id, step, first = stage(dom)
    assert step == 0 and first
    steps = int(re.search(r'id="where"[^>]*>step 1 / (\d+)<', dom).group(1))
    assert steps >= 2
    target = min(2, steps - 1)
    # Keys and buttons step forward and back: the drawing changes.
    stepped = with_script(page, tmp_path / "stepped.html",
                          "var k=function(x){document.dispatchEvent(new KeyboardEvent('keydown',{key:x}));};"
                          "k('ArrowRight');k('ArrowRight');document.getElementById('back').click();"
                          "document.getElementById('fwd').click();")
    rid, step, drawn = stage(chromium(stepped.resolve().as_uri(), tmp_path))
    assert (rid, step) == (first_id, target) and drawn != first
    # The link to that moment opens there.
    linked = chromium(page.resolve().as_uri() + f"#r={first_id}&s={target}", tmp_path)
    assert stage(linked) == (first_id, target, drawn)
    link = html.unescape(re.search(r'id="link" href="([^"]*)"', linked).group(1))
    assert unquote(link) == f"#r={first_id}&s={target}"
    # End goes to the last step; the same seed samples the same games.
    again = write_replays(run, tmp_path / "again", per_game=2, seed=3)
    assert again == pages
    assert (tmp_path / "again" / next(iter(mine.values()))).read_text() == text
    return page, drawn


def test_matrix_replay_marks_the_answer_and_the_equilibrium(runs, tmp_path):
    page, drawn = check_family(runs / "matrix", tmp_path, "matrix")
    assert 'class="eq' in drawn or ' eq"' in drawn  # the equilibrium's support outlined
    assert "pick" in drawn  # the answer at step 2 marked
    DOCS_IMG.mkdir(exist_ok=True)
    shot = tmp_path / "replay-matrix.png"
    chromium(page.resolve().as_uri() + "#s=1", tmp_path, shot=shot)
    assert shot.stat().st_size > 5_000
    shutil.copy(shot, DOCS_IMG / "replay-matrix.png")
    narrow = tmp_path / "narrow.png"
    chromium(page.resolve().as_uri() + "#s=1", tmp_path, shot=narrow, width=400)
    assert narrow.stat().st_size > 2_000


def test_pages_and_keys_per_bucket(runs, tmp_path):
    pages = write_replays(runs / "matrix", tmp_path, per_game=1, seed=0)
    assert set(pages) == {"matrix/3x3_midVar_any", "matrix/2x4_lowVar_pure"}
    assert all((tmp_path / p).is_file() for p in pages.values())
    with pytest.raises(ValueError, match="per_game"):
        write_replays(runs / "matrix", tmp_path, per_game=0, seed=0)


def test_negotiation_replay_draws_items_valuations_and_the_frontier(runs, tmp_path):
    page, drawn = check_family(runs / "negotiation", tmp_path, "negotiation")
    assert "value to a" in drawn and "<polyline" in drawn
    last = chromium(page.resolve().as_uri() + "#s=99", tmp_path)  # clamped to the outcome
    _, step, final = stage(last)
    assert step > 2 and "outcome" in last and "main score" in final
    if "agreed" in last:
        assert 'class="final"' in final


def test_distbench_view_writes_the_replays_beside_the_viewer(runs, tmp_path):
    from click.testing import CliRunner

    from distbench.cli.main import cli

    out = tmp_path / "v" / "view.html"
    result = CliRunner().invoke(cli, ["view", str(runs / "matrix"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    assert "replays: 2 page(s)" in result.stderr
    assert sorted(p.name for p in (tmp_path / "v" / "replays").iterdir()) == [
        "matrix-2x4_lowVar_pure.html", "matrix-3x3_midVar_any.html"]
    result = CliRunner().invoke(cli, ["view", str(runs / "matrix"), "--out",
                                      str(tmp_path / "w" / "view.html"), "--replays", "0"])
    assert result.exit_code == 0 and not (tmp_path / "w" / "replays").exists()


def test_fog_replay_draws_the_board_with_the_fog_and_beliefs(runs, tmp_path):
    page, drawn = check_family(runs / "fog", tmp_path, "fog")
    assert "could not be rebuilt" not in drawn  # the board rebuilt from the stored orders
    assert 'class="own"' in drawn and "enemy fog" in drawn and "orders" in drawn
    shot = tmp_path / "replay-fog.png"
    chromium(page.resolve().as_uri() + "#s=3", tmp_path, shot=shot)
    shutil.copy(shot, DOCS_IMG / "replay-fog.png")


@pytest.mark.parametrize("game", ["tic_tac_toe", "kuhn_poker"])
def test_openspiel_replay_draws_boards_and_hands_with_each_moves_regret(runs, tmp_path, game):
    pytest.importorskip("pyspiel")
    page, drawn = check_family(runs / game, tmp_path, "openspiel")
    assert "regret" in drawn
    if game == "tic_tac_toe":
        assert 'class="rp board"' in drawn
    else:
        assert "state: cards and pot" in drawn


def test_bimatrix_replay_marks_both_answers_and_the_equilibria(runs, tmp_path):
    _, drawn = check_family(runs / "bimatrix", tmp_path, "bimatrix")
    assert "eq1" in drawn and "pick" in drawn
    assert re.search(r'class="[^"]*\beq\b', drawn)  # a pure equilibrium outlined


def test_repeated_replay_draws_the_timeline(runs, tmp_path):
    _, drawn = check_family(runs / "repeated", tmp_path, "repeated")
    assert 'aria-label="timeline"' in drawn and "total so far" in drawn


GAMA_GAMES = ("guessing", "bar", "dollar", "goods", "diner", "auction", "battle", "pirate")


@pytest.fixture(scope="module")
def gama_runs(tmp_path_factory):
    """One small run per gama game (ten scripted seats, three rounds)."""
    from distbench.games.gama.command import build_config
    from distbench.games.gama.plan import plan_gama

    root = tmp_path_factory.mktemp("gama-replay-runs")
    for game in GAMA_GAMES:
        config = build_config({"seeds": (1,), "num_games": 2, "llm_seed": 0, "temperature": 1.0,
                               "max_tokens": None, "reask": 0, "game": game,
                               "gama_options": ("rounds=3",),
                               "seat_players": "scripted:random"}, make_spec("dummy"))
        run_plan(plan_gama(config, game), root / game, parallel=False)
    return root


def test_gama_replay_steps_round_by_round(gama_runs, tmp_path):
    page, drawn = check_family(gama_runs / "guessing", tmp_path, "gama")
    assert "guesses against the target" in drawn and "target" in drawn and 'class="bar win"' in drawn
    _, _, end = stage(chromium(page.resolve().as_uri() + "#s=99", tmp_path))  # the end
    assert 'aria-label="final standing"' in end and "GAMA score" in end


@pytest.mark.parametrize("game,seen", [
    ("bar", "capacity"), ("dollar", "sum of bids"), ("goods", "contributions"),
    ("diner", "cheap"), ("auction", 'class="mark"'), ("battle", "who shot whom"),
    ("pirate", "plan and votes")])
def test_gama_replay_draws_each_games_chart(gama_runs, tmp_path, game, seen):
    """Every game's round chart draws without a console error."""
    pages = write_replays(gama_runs / game, tmp_path, per_game=1, seed=0)
    (page,) = pages.values()
    url = (tmp_path / page).resolve().as_uri()
    assert_self_contained((tmp_path / page).read_text(encoding="utf-8"))
    _, step, drawn = stage(chromium(url + "#s=0", tmp_path))
    assert step == 0 and seen in drawn and "history: " in drawn
