"""``distbench publish --site``: the static leaderboard site over a matrix run (two models), a
negotiation tournament run, an OpenSpiel run and a fog run, opened in headless Chromium."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from distbench.cli.errors import UserError
from distbench.cli.main import cli
from distbench.cli.publish import site_families
from distbench.engine.driver import run_config, run_plan
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.games.openspiel.plan import OpenSpielRunConfig
from distbench.llm.registry import make_spec
from distbench.report import site
from distbench.store.catalog import find_runs, open_runs

CHROMIUM = Path("/usr/bin/chromium")
DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-runs")
    for name, model in (("mat-a", "random"), ("mat-b", "other")):
        run_config(MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(42,), num_games=12,
                                   num_trials=2, modes=("pure",),
                                   llm=make_spec("dummy", model)), root / name, parallel=False)
    run_plan(plan_negotiation(NegotiationRunConfig(
        seeds=(1,), num_games=3, modes=("semi",), langs=("en",), player_a="scripted:fair",
        player_b="scripted:greedy"), "neg"), root / "neg", parallel=False)
    # A negotiation tournament (its ratings table holds the Nash-averaging mass).
    result = CliRunner().invoke(cli, [
        "tournament", "--family", "negotiation", "--players",
        "scripted:fair,scripted:greedy,scripted:random", "--num-instances", "2",
        "--resamples", "20", "--no-parallel", "--output-dir", str(root), "--run-id", "ntour"])
    assert result.exit_code == 0, result.output
    run_config(OpenSpielRunConfig(game="tic_tac_toe", seeds=(1,), num_games=2,
                                  player=make_spec("dummy"), opponent="random"),
               root / "os", parallel=False)
    run_plan(plan_fog(FogRunConfig(pairings=(("tier3", "tier2"),), num_games=3), "fog"),
             root / "fog", parallel=False)
    return root


@pytest.fixture(scope="module")
def built(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    result = CliRunner().invoke(cli, ["publish", str(runs), "--site", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out / "index.html")
    assert "differ in harness" not in result.output  # one hash per family: nothing mixed
    return out


def chromium(url: str, tmp_path: Path, width: int, *, shot: Path | None = None) -> str:
    """The DOM after the page's script ran at ``width`` px (or a screenshot); fails on any
    console message and on any request to another host (every host name resolves to
    nothing, so such a request would log a load error)."""
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    what = [f"--screenshot={shot}"] if shot else ["--dump-dom"]
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--enable-logging=stderr", "--v=0",
         "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={width},900",
         f"--user-data-dir={tmp_path / 'profile'}", *what, url],
        check=True, capture_output=True, text=True, timeout=120)
    console = [line for line in done.stderr.splitlines()
               if ":CONSOLE" in line or "ERR_NAME_NOT_RESOLVED" in line]
    assert not console, console
    return done.stdout


def fmt(value: float) -> str:
    """A number as the site shows it (3 decimals, no negative zero)."""
    return f"{round(value, 3) + 0.0:.3f}"


def table_rows(dom: str, tid: str) -> list[list[str]]:
    body = re.search(rf'<table id="{tid}-t".*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in
             re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_the_site_refers_to_no_other_host(built):
    for path in built.rglob("*"):
        if path.suffix in (".html", ".css", ".js"):
            text = path.read_text(encoding="utf-8")
            refs = re.findall(r'(?:src|href)="([^"]*)"', text) + re.findall(r"url\(([^)]*)\)",
                                                                            text)
            assert not [r for r in refs if "//" in r or r.startswith(("http", "data:"))], path
            assert "@import" not in text and "fetch(" not in text


def test_leaderboard_rows_and_bands_equal_the_stores(runs, built, tmp_path):
    con = open_runs(find_runs([runs]), safe=True)
    try:
        tables = site.site_tables(con, find_runs([runs]), site_families())
    finally:
        con.close()
    columns, rows = tables.tables["leaderboard"]
    players = {r[1] for r in rows}
    # Models met in every kind of game: the matrix's two models on the same games, the
    # tournaments' seats, the OpenSpiel player and its scripted opponent.
    assert {"scripted:fair", "scripted:greedy", "scripted:random", "tier3", "tier2"} <= players
    assert len(players) >= 6
    for r in rows:
        assert r[5] <= r[4] <= r[6]
    stored = pq.read_table(built / "data" / "leaderboard.parquet").to_pylist()
    assert [tuple(d.values()) for d in stored] == rows
    dom = chromium((built / "index.html").as_uri(), tmp_path, 1000)
    shown = table_rows(dom, "leaderboard")
    assert [(int(s[0]), s[1], s[4], s[5], s[6]) for s in shown] == [
        (r[0], r[1], fmt(r[4]), fmt(r[5]), fmt(r[6])) for r in rows]
    assert "each game weighted equally" in dom
    # Each family's headline with its interval, as the store's compare units give it.
    heads = table_rows(dom, "headlines")
    families = {h[0] for h in heads}
    assert {"matrix", "negotiation", "openspiel", "fog"} <= families
    for h, r in zip(heads, tables.tables["headlines"][1], strict=True):
        assert (h[0], h[1], h[7], h[10]) == (r[0], r[1], r[7], fmt(r[10]))
    # The Nash-averaging mass of the tournament, as its ratings table holds it.
    nash = {(r[1], r[3]) for r in table_rows(dom, "nash")}
    con = open_runs(find_runs([runs]), safe=True)
    try:
        stored = con.execute("SELECT player, nash_mass FROM ratings").fetchall()
    finally:
        con.close()
    assert nash == {(p, fmt(m)) for p, m in stored} and len(stored) == 3
    # every run's harness hash (one per family: no warning) stands in the footer
    assert re.search(r"harness hash [0-9a-f]{12}(, [0-9a-f]{12})*", dom), dom[-800:]
    for name in tables.tables:
        assert (built / "data" / f"{name}.csv").is_file()
        assert (built / "data" / f"{name}.parquet").is_file()


@pytest.mark.parametrize("width", [1000, 400])
def test_pages_fit_the_width_without_console_errors(built, tmp_path, width):
    pages = [built / "index.html", built / "games.html", built / "runs.html",
             next((built / "models").glob("*.html")), next((built / "games").glob("*.html"))]
    for page in pages:
        dom = chromium(page.as_uri(), tmp_path, width)
        assert 'data-overflow="no"' in dom, page
    shot = tmp_path / f"leaderboard-{width}.png"
    chromium((built / "index.html").as_uri(), tmp_path, width, shot=shot)
    assert shot.stat().st_size > 1000
    if width == 1000 and os.environ.get("DISTBENCH_DOCS_SHOTS"):  # refresh docs/img
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMG / "leaderboard.png")


def test_sorting_and_filtering_work_in_the_browser(built, tmp_path):
    page = built / "probe.html"
    text = (built / "index.html").read_text(encoding="utf-8")
    probe = ("<script>var b=document.querySelector('#leaderboard-t th button[data-col=\"1\"]');"
             "b.click();var i=document.querySelector('input[data-filter=\"leaderboard-t\"]');"
             "i.value='tier';i.dispatchEvent(new Event('input'));"
             "document.body.setAttribute('data-shown',Array.prototype.filter.call("
             "document.querySelectorAll('#leaderboard-t tbody tr'),function(r){return !r.hidden;})"
             ".map(function(r){return r.cells[1].textContent;}).join('|'));</script></body>")
    page.write_text(text.replace("</body>", probe), encoding="utf-8")
    try:
        dom = chromium(page.as_uri(), tmp_path, 1000)
    finally:
        page.unlink()
    shown = re.search(r'data-shown="([^"]*)"', dom).group(1).split("|")
    assert shown == ["tier2", "tier3"]


def test_a_game_links_to_its_replays(runs, tmp_path, monkeypatch):
    """With a replay writer present, each game page links to its replay, which opens."""
    def write_replays(run_dir: Path, out_dir: Path, per_game: int, seed: int) -> dict:
        out_dir.mkdir(parents=True, exist_ok=True)
        family = json.loads((run_dir / "manifest.json").read_text())["family"]
        (out_dir / f"{family}.html").write_text(
            f"<!doctype html><html><body><p id='r'>replay of {family}</p></body></html>",
            encoding="utf-8")
        return {family: f"{family}.html"}

    out = tmp_path / "site"
    site.build_site(find_runs([runs / "neg"]), out, site_families(), resamples=20,
                    replay_writer=write_replays)
    page = next((out / "games").glob("*.html"))
    dom = chromium(page.as_uri(), tmp_path, 1000)
    href = re.search(r'<a class="replay" href="([^"]+)"', dom)
    assert href, "no replay link"
    target = (page.parent / href.group(1)).resolve()
    assert target.is_file()
    assert "replay of negotiation" in chromium(target.as_uri(), tmp_path, 1000)


def test_publish_links_each_game_to_a_real_replay_that_steps(runs, tmp_path):
    """``distbench publish`` draws the replays with the families' renderers: a game page's
    link opens a replay page inside the site, and a key press steps it on."""
    out = tmp_path / "pub"
    result = CliRunner().invoke(cli, ["publish", str(runs / "neg"), "--site", str(out),
                                      "--resamples", "20", "--replays", "1"])
    assert result.exit_code == 0, result.output
    linked = []
    for page in sorted((out / "games").glob("*.html")):
        href = re.search(r'<a class="replay" href="([^"]+)"', page.read_text(encoding="utf-8"))
        if href:
            linked.append((page.parent / html.unescape(href.group(1))).resolve())
    assert linked, "no game page links to a replay"
    target = linked[0]
    assert target.is_file() and out.resolve() in target.parents
    dom = chromium(target.as_uri(), tmp_path, 1000)
    first = re.search(r'<div id="stage" data-replay="([^"]*)" data-step="(\d+)"', dom)
    assert first and first.group(2) == "0"
    text = target.read_text(encoding="utf-8")
    stepped = target.with_name("stepped.html")
    stepped.write_text(text.replace("</body>", "<script>document.dispatchEvent(new KeyboardEvent("
                                    "'keydown',{key:'ArrowRight'}));</script></body>"),
                       encoding="utf-8")
    after = re.search(r'<div id="stage" data-replay="([^"]*)" data-step="(\d+)"',
                      chromium(stepped.as_uri(), tmp_path, 1000))
    assert after and after.group(2) == "1"


def test_publish_refuses_a_site_inside_a_run(runs):
    result = CliRunner().invoke(cli, ["publish", str(runs / "neg"), "--site",
                                      str(runs / "neg" / "site")])
    assert result.exit_code != 0 and isinstance(result.exception, UserError)
    assert "--site" in str(result.exception) and "inside the run" in str(result.exception)
    result = CliRunner().invoke(cli, ["publish", str(runs / "nowhere"), "--site", "x"])
    assert result.exit_code != 0 and isinstance(result.exception, UserError)


def test_each_game_weighs_the_same_whatever_its_tables():
    """game_weights of 1 / (a game's tables): a game repeated k times weighs as once."""
    from distbench.report.ratings import bootstrap_plackett_luce

    # Game 1: player 0 beats 1 (one table). Game 2: 1 beats 0, the same table played 5 times.
    one = [([0, 1], [1.0, 0.0])]
    five = [([0, 1], [0.0, 1.0])] * 5
    equal = bootstrap_plackett_luce(2, one + five, seed=1, resamples=0,
                                    game_weights=[1.0] + [0.2] * 5)
    unweighted = bootstrap_plackett_luce(2, one + five, seed=1, resamples=0)
    assert abs(equal.theta[0] - equal.theta[1]) < 1e-6  # one win each: level
    assert unweighted.theta[1] > unweighted.theta[0] + 1.0  # five wins to one
    with pytest.raises(ValueError, match="game_weights"):
        bootstrap_plackett_luce(2, one, seed=1, game_weights=[0.0])


def _luminance(colour: str) -> float:
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_colours_pass_wcag_aa():
    """Every text colour against every background it is drawn on: contrast >= 4.5."""
    css = site._CSS
    var = dict(re.findall(r"--(\w+):(#[0-9a-fA-F]{6})", css))
    for text in ("fg", "muted", "link"):
        for back in ("bg", "head"):
            a, b = sorted((_luminance(var[text]), _luminance(var[back])))
            assert (b + 0.05) / (a + 0.05) >= 4.5, (text, back)


def test_runs_of_different_harnesses_are_said_to_differ(runs, tmp_path):
    """publish says so (a warning line and the pages' footer) when harness hashes differ."""
    for name, digest in (("mat-a", "h-one"), ("mat-b", "h-two")):
        copy = tmp_path / "runs" / name
        shutil.copytree(runs / name, copy)
        summary = json.loads((copy / "summary.json").read_text())
        (copy / "summary.json").write_text(json.dumps({**summary, "harness_hash": digest}))
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["publish", str(tmp_path / "runs"), "--site", str(out)])
    assert result.exit_code == 0, result.output
    assert "differ in harness (h-one, h-two)" in result.stderr
    assert "differ in harness (h-one, h-two)" in (out / "index.html").read_text()


def test_players_who_never_met_get_one_fit_per_group(runs, tmp_path):
    """A negotiation run and a fog run: their players never met, so each run's players form a
    group with its own fit (the fit of that run alone, its band as wide as that run's), labelled,
    and the page says groups are not comparable, instead of one joint fit that ranks the
    negotiation players (all ties: 0.000 [0, 0]) between the fog players."""
    def tables_of(dirs):
        con = open_runs(dirs, safe=True)
        try:
            return site.site_tables(con, dirs, site_families(), resamples=20)
        finally:
            con.close()

    both = tables_of([runs / "neg", runs / "fog"])
    board = both.records("leaderboard")
    members: dict[str, set[str]] = {}
    for r in board:
        members.setdefault(r["group"], set()).add(r["player"])
    assert sorted(members.values(), key=sorted) == [{"scripted:fair", "scripted:greedy"},
                                                    {"tier2", "tier3"}]
    for run in ("neg", "fog"):  # each group's rows are its run's own fit
        alone = tables_of([runs / run]).records("leaderboard")
        group = next(r["group"] for r in board if r["player"] == alone[0]["player"])
        mine = [{**r, "group": "group 1"} for r in board if r["group"] == group]
        assert mine == alone
    labels = [r["group"] for r in board]  # a group's rows together, never interleaved
    assert labels == sorted(labels)
    site.write_site(both, tmp_path / "s")
    index = (tmp_path / "s" / "index.html").read_text(encoding="utf-8")
    assert "Not comparable across groups" in index and ">group</button>" in index
    one = site.write_site(tables_of([runs / "fog"]), tmp_path / "one")[0].read_text("utf-8")
    assert "Not comparable" not in one


def test_groups_are_the_components_of_who_met_whom():
    games = {"g1": [(["a", "b"], [1.0, 0.0]), (["x", "y"], [0.0, 1.0])],
             "g2": [(["b", "c"], [1.0, 0.0])], "g3": [(["d", "e", "f"], [3.0, 2.0, 1.0])]}
    assert site.groups(games) == [["a", "b", "c"], ["d", "e", "f"], ["x", "y"]]
    columns, rows = site._fit(games, 0, 10)
    assert columns[-1] == "group" and {r[-1] for r in rows} == {"group 1", "group 2", "group 3"}
    for label in ("group 1", "group 2", "group 3"):  # each group's strengths: mean 0
        assert abs(sum(r[4] for r in rows if r[-1] == label)) < 1e-9


def test_a_gama_run_publishes_its_group_and_replays(runs, tmp_path):
    """A gama run (a mixed table of two scripted players) beside the fog run: its players are a
    group of their own on the leaderboard (an n-seat family's tables enter the fit), and its
    game page links to the gama replay, which opens and steps in Chromium."""
    from distbench.games.gama.command import build_config
    from distbench.games.gama.plan import plan_gama

    config = build_config({"seeds": (1,), "num_games": 3, "llm_seed": 0, "temperature": 1.0,
                           "max_tokens": None, "reask": 0, "game": "guessing",
                           "gama_options": ("rounds=2",),
                           "seat_players": "scripted:equilibrium,scripted:random"},
                          make_spec("dummy"))
    run_plan(plan_gama(config, "gama"), tmp_path / "gama", parallel=False)
    out = tmp_path / "pub"
    result = CliRunner().invoke(cli, ["publish", str(tmp_path / "gama"), str(runs / "fog"),
                                      "--site", str(out), "--resamples", "20", "--replays", "1"])
    assert result.exit_code == 0, result.output
    board = pq.read_table(out / "data" / "leaderboard.parquet").to_pylist()
    members: dict[str, set[str]] = {}
    for r in board:
        members.setdefault(r["group"], set()).add(r["player"])
    assert sorted(members.values(), key=sorted) == [{"scripted:equilibrium", "scripted:random"},
                                                    {"tier2", "tier3"}]
    page = (out / "games" / "gama-guessing.html").read_text(encoding="utf-8")
    target = (out / "games" / html.unescape(
        re.search(r'<a class="replay" href="([^"]+)"', page).group(1))).resolve()
    assert target.is_file() and "gama-guessing" in target.name
    text = target.read_text(encoding="utf-8")
    stepped = target.with_name("stepped.html")
    stepped.write_text(text.replace("</body>", "<script>document.dispatchEvent(new KeyboardEvent("
                                    "'keydown',{key:'ArrowRight'}));</script></body>"),
                       encoding="utf-8")
    dom = chromium(stepped.as_uri(), tmp_path, 1000)
    assert re.search(r'<div id="stage" data-replay="[^"]*" data-step="1"', dom)
    assert "guesses against the target" in dom


def test_a_scripted_label_in_two_families_is_two_players_and_a_model_one():
    """``scripted:random`` of negotiation and of gama play by different rules: two players on
    the leaderboard (two groups here, nothing links them), while a model met in both families
    stays one player and links its families' groups."""
    from types import SimpleNamespace as Seat

    def neg(_con):
        return [Seat(player_a="scripted:random", player_b="scripted:fair", score_a=0.2,
                     score_b=0.8),
                Seat(player_a="openai:m", player_b="scripted:fair", score_a=0.9, score_b=0.1)]

    def gama(_con):
        return [("g", "s", ["scripted:random", "scripted:equilibrium"], [10.0, 60.0]),
                ("g", "s", ["openai:m", "scripted:equilibrium"], [70.0, 60.0])]

    scripted = site_families()[0].scripted
    fams = [site.SiteFamily("negotiation", None, neg, scripted),
            site.SiteFamily("gama", None, gama, scripted)]
    games = site._meetings(None, fams, {"negotiation", "gama"})
    assert games["negotiation"][0][0] == ["scripted:random (negotiation)", "scripted:fair"]
    assert games["gama"][0][0] == ["scripted:random (gama)", "scripted:equilibrium"]
    assert games["gama"][1][0] == ["openai:m", "scripted:equilibrium"]
    assert site.groups(games) == [["openai:m", "scripted:equilibrium", "scripted:fair",
                                   "scripted:random (gama)", "scripted:random (negotiation)"]]
    alone = site._meetings(None, fams[:1], {"negotiation"})  # one family: labels as they are
    assert alone["negotiation"][0][0] == ["scripted:random", "scripted:fair"]
