"""``distbench view``: the transcript viewer on a 10^5-trial run, on a run with bad answers, on
negotiation and fog runs; bounded size, escaping, filters honoured in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from distbench.cli.main import cli
from distbench.engine.driver import run_config, run_plan
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.matrix.plan import MatrixRunConfig
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.llm.registry import make_spec
from distbench.mockserver import ServerConfig, start_server
from distbench.mockserver.answerers import MockAnswerer
from distbench.report.viewer import (
    ViewItem,
    ViewOptions,
    ViewPart,
    ViewSource,
    build_view,
    fit_budget,
)
from distbench.store.catalog import open_run

CHROMIUM = Path("/usr/bin/chromium")
BOUND = 5_000_000  # bytes: the page of any run stays under this (README, distbench view)
PAYLOAD = "</script><script>document.title='PWNED'</script><img src=x onerror=\"document.title='PWNED'\"> "


class ScriptAnswerer(MockAnswerer):
    """The mock model, with an HTML/JS injection attempt before every third answer."""

    def answer_text(self, prompt: str, seed: int, *, completion: bool, **kwargs) -> str:
        text = super().answer_text(prompt, seed, completion=completion, **kwargs)
        return PAYLOAD + text if seed % 3 == 0 else text


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 10^5-trial dummy matrix run, a small mock-server run with garbage answers and
    injection attempts, a negotiation run (scripted:fair vs scripted:greedy) and a fog run
    (tier3 vs tier2)."""
    root = tmp_path_factory.mktemp("view-runs")
    big = MatrixRunConfig(buckets=("3x3_midVar_any",), seeds=(42,), num_games=1000,
                          num_trials=100, modes=("pure",), llm=make_spec("dummy"))
    run_config(big, root / "big", parallel=False)
    with start_server(ServerConfig(garbage=0.4, seed=1), ScriptAnswerer()) as server:
        spec = make_spec("llamacpp", "mock", "chat", base_url=server.url, rpm=None,
                         max_concurrency=8, timeout=10.0, max_retries=1, cache=False)
        bad = MatrixRunConfig(buckets=("3x3_midVar_mixed",), seeds=(42,), num_games=12,
                              num_trials=5, modes=("pure", "mixed"), llm=spec, shard_trials=60)
        run_config(bad, root / "bad", parallel=False)
    run_plan(plan_negotiation(NegotiationRunConfig(
        seeds=(1,), num_games=3, modes=("semi",), langs=("en", "de"), player_a="scripted:fair",
        player_b="scripted:greedy"), "neg"), root / "neg", parallel=False)
    run_plan(plan_fog(FogRunConfig(pairings=(("tier3", "tier2"),), num_games=3), "fog"),
             root / "fog", parallel=False)
    return root


def view(run: Path, out: Path, *args: str) -> tuple[Path, float]:
    """Runs ``distbench view`` as a user does; returns the page and the seconds it took."""
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["view", str(run), "--out", str(out), *args])
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    return out, seconds


def embedded(page: Path) -> tuple[list[dict], list[dict]]:
    """The page's index and each part's data, read back from its JSON script blocks."""
    text = page.read_text(encoding="utf-8")
    blocks = dict(re.findall(r'<script type="application/json" id="vd-([a-z0-9]+)">(.*?)</script>',
                             text, re.S))
    index = json.loads(blocks.pop("index"))
    return index, [json.loads(blocks[str(i)]) for i in range(len(index))]


def chromium(url: str, tmp_path: Path, *, shot: Path | None = None) -> tuple[str, float]:
    """The DOM after the page's script ran (or a screenshot), and the seconds it took; fails
    on any message the page writes to the console (an uncaught error above all)."""
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    what = [f"--screenshot={shot}", "--window-size=1200,1600"] if shot else ["--dump-dom"]
    start = time.perf_counter()
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={tmp_path / 'profile'}", *what, url],
        check=True, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - start
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    return done.stdout, seconds


def cards(dom: str) -> list[tuple[str, str]]:
    """(data-status, title) of every card drawn."""
    return [(html.unescape(s), html.unescape(t)) for s, t in re.findall(
        r'<section class="card[^"]*" data-status="([^"]*)"><h3>([^<]*)<', dom)]


def test_a_1e5_trial_run_gives_a_small_page_quickly(runs, tmp_path):
    page, seconds = view(runs / "big", tmp_path / "view.html")
    size = page.stat().st_size
    print(f"\n10^5 trials: view.html {size / 1e6:.3f} MB in {seconds:.2f} s (CLI, default sample)")
    assert size < BOUND and seconds < 30
    index, data = embedded(page)
    (part,) = index
    assert part["family"] == "matrix" and sum(n for _, n in part["strata"]) == 100_000
    assert len(data[0]["items"]) == 50  # one stratum (one model, bucket, mode; every answer ok)
    # Asking for every trial: the byte budget keeps the page under the bound all the same.
    page, seconds = view(runs / "big", tmp_path / "all.html", "--sample", "100000")
    size = page.stat().st_size
    kept = len(embedded(page)[1][0]["items"])
    print(f"10^5 trials, --sample 100000: {size / 1e6:.3f} MB, {kept} trials kept, {seconds:.2f} s")
    assert 1000 < kept < 100_000 and size < BOUND


def test_the_page_opens_in_chromium_in_under_3_seconds(runs, tmp_path):
    page, _ = view(runs / "big", tmp_path / "view.html")
    dom, wall = chromium(page.resolve().as_uri(), tmp_path)
    ready = int(re.search(r'data-ready-ms="(\d+)"', dom).group(1))
    print(f"\nchromium, default page: ready {ready} ms after navigation start; {wall:.2f} s for "
          "the whole headless run, browser start included")
    assert ready < 3000 and wall < 10
    # The largest page a run can give (--sample 100000 on 10^5 trials: the whole budget).
    page, _ = view(runs / "big", tmp_path / "all.html", "--sample", "100000")
    dom, wall = chromium(page.resolve().as_uri(), tmp_path)
    ready = int(re.search(r'data-ready-ms="(\d+)"', dom).group(1))
    render = int(re.search(r'data-render-ms="(\d+)"', dom).group(1))
    print(f"chromium, --sample 100000 page: ready {ready} ms after navigation start (first render {render} ms); "
          f"{wall:.2f} s for the whole headless run, browser start included")
    assert ready < 3000
    assert len(cards(dom)) == 20  # the first page of the list
    shot = tmp_path / "view-matrix.png"
    chromium(page.resolve().as_uri(), tmp_path, shot=shot)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def test_every_parse_status_is_sampled_with_its_full_count(runs, tmp_path):
    page, _ = view(runs / "bad", tmp_path / "view.html", "--sample", "3")
    con = open_run(runs / "bad")
    counts = dict(con.execute("select parse_status, count(*) from trials group by 1").fetchall())
    assert len(counts) > 1, "the garbage answers should give statuses other than ok"
    index, data = embedded(page)
    (part,) = index
    status = part["status"]
    got: dict[str, int] = {}
    for key, n in part["strata"]:
        got[key[status]] = got.get(key[status], 0) + n
    assert got == counts
    # The filter logic of the page, in Python: the items of a status are the sample of it.
    for value in counts:
        items = [it for it in data[0]["items"] if it[0][status] == value]
        strata = [n for key, n in part["strata"] if key[status] == value]
        assert len(items) == sum(min(3, n) for n in strata)
        raw = dict(con.execute("select trial_id, raw_text from trials where parse_status = ?",
                               [value]).fetchall())
        for it in items:
            trial_id = it[1].split(" · ")[0]
            text = next(b for b in it[2] if b.get("cls") == "raw")["text"]
            assert text == raw[trial_id]


def test_filtering_by_status_in_the_url_shows_the_raw_answers_of_that_status(runs, tmp_path):
    page, _ = view(runs / "bad", tmp_path / "view.html")
    con = open_run(runs / "bad")
    bad = con.execute("select parse_status, count(*) from trials where parse_status <> 'ok' "
                      "group by 1 order by 2 desc limit 1").fetchone()[0]
    raw = dict(con.execute("select trial_id, raw_text from trials where parse_status = ?",
                           [bad]).fetchall())
    dom, _ = chromium(page.resolve().as_uri() + f"#status={bad}", tmp_path)
    shown = cards(dom)
    assert shown and {s for s, _ in shown} == {bad}
    assert len(shown) == min(20, len(raw))
    summary = re.search(r'<div class="summary" id="summary">([^<]*)<', dom).group(1)
    assert f"of {len(raw)} in the run" in summary
    assert f">{bad} ({len(raw)})</option>" in dom  # the menu gives the run's full count
    for _, title in shown:
        trial_id = title.split(" · ")[0]
        assert html.escape(raw[trial_id], quote=False) in dom


def test_model_text_cannot_inject_markup_or_script(runs, tmp_path):
    page, _ = view(runs / "bad", tmp_path / "view.html")
    text = page.read_text(encoding="utf-8")
    con = open_run(runs / "bad")
    hits = con.execute("select count(*) from trials where raw_text like '%</script>%'").fetchone()[0]
    assert hits > 0, "the test model should have answered with a <script>"
    assert "PWNED" in text  # the text is there (escaped) ...
    assert "<script>document.title" not in text and "<img" not in text  # ... never as markup
    # Our own script blocks only: the index, one per part, the page's script.
    assert text.count("<script") == 3 and text.count("</script>") == 3
    dom, _ = chromium(page.resolve().as_uri() + "#q=pwned", tmp_path)
    assert "<title>distbench view" in dom and "PWNED</title>" not in dom
    assert "<img" not in dom
    assert "&lt;/script&gt;&lt;script&gt;document.title='PWNED'" in dom
    assert cards(dom)


def test_negotiation_and_fog_transcripts_render(runs, tmp_path):
    page, _ = view(runs / "neg", tmp_path / "neg.html")
    con = open_run(runs / "neg")
    index, data = embedded(page)
    assert [p["family"] for p in index] == ["negotiation"]
    turns = dict(con.execute("select episode_id, count(*) from turns group by 1").fetchall())
    assert len(data[0]["items"]) == len(turns) == 12
    for it in data[0]["items"]:
        msgs = [b for b in it[2] if b["t"] == "msg"]
        assert len(msgs) == turns[it[1].split(" · ")[0]]
        assert all(m["text"] and m["extra"].startswith("proposal as parsed") for m in msgs)
    first = con.execute("select raw_text from turns order by episode_id, turn limit 1").fetchone()[0]
    dom, _ = chromium(page.resolve().as_uri() + "#lang=de", tmp_path)
    assert len(cards(dom)) == 6 and "scripted:fair vs scripted:greedy" in dom
    assert 'class="msg' in dom
    chromium(page.resolve().as_uri(), tmp_path, shot=tmp_path / "view-negotiation.png")
    assert first

    page, _ = view(runs / "fog", tmp_path / "fog.html")
    con = open_run(runs / "fog")
    index, data = embedded(page)
    assert [p["family"] for p in index] == ["fog"]
    turns = dict(con.execute("select game_id, max(turn) from fog_reports group by 1").fetchall())
    assert len(data[0]["items"]) == len(turns) == 6
    for it in data[0]["items"]:
        heads = [b["text"] for b in it[2] if b["t"] == "h"]
        assert heads[-1] == f"turn {turns[it[1].split(' · ')[0]]}"
        assert any(b["t"] == "grid" and b.get("label") == "events" for b in it[2])
    # every report's action and objective prediction scores are shown (all 6 games sampled)
    column = "actions: Brier, log loss"
    shown = [row[b["head"].index(column)] for it in data[0]["items"] for b in it[2]
             if b["t"] == "grid" and column in b.get("head", []) for row in b["rows"]]
    scored = con.execute("select count(*) filter (where action_brier is not null), count(*) "
                         "from fog_reports").fetchone()
    assert sum(v != "-" for v in shown) == scored[0] > 0 and len(shown) == scored[1]
    dom, _ = chromium(page.resolve().as_uri(), tmp_path)
    assert len(cards(dom)) == 6 and "beliefs (true power)" in dom and "scout_reveal" in dom
    chromium(page.resolve().as_uri(), tmp_path, shot=tmp_path / "view-fog.png")


def test_the_sample_is_fixed_by_its_seed(runs, tmp_path):
    a, _ = view(runs / "bad", tmp_path / "a.html", "--sample", "2", "--seed", "7")
    b, _ = view(runs / "bad", tmp_path / "b.html", "--sample", "2", "--seed", "7")
    c, _ = view(runs / "bad", tmp_path / "c.html", "--sample", "2", "--seed", "8")
    assert a.read_bytes() == b.read_bytes()
    titles = [[it[1] for it in embedded(p)[1][0]["items"]] for p in (a, c)]
    assert titles[0] != titles[1] and len(titles[0]) == len(titles[1])


def test_a_family_without_a_viewer_gets_its_main_table_with_every_column(runs, tmp_path):
    result = build_view(runs / "bad", tmp_path / "g.html", [ViewSource("matrix", "trials")],
                        ViewOptions(sample=2))
    index, data = embedded(result.path)
    (part,) = index
    assert [f[0] for f in part["filters"]] == ["model", "mode", "status"]
    columns = [d[0] for d in open_run(runs / "bad").execute("select * from trials limit 0").description]
    for it in data[0]["items"]:
        assert [r[0] for r in it[2][0]["rows"]] == columns


def test_the_budget_keeps_one_item_per_stratum_and_the_first_by_rank():
    items = [ViewItem((s,), r, f"{s}{r}", [{"t": "text", "text": "x" * 1000}])
             for s in "abc" for r in range(50)]
    part = ViewPart("f", "f", "rows", (("status", "status"),), [((s,), 50) for s in "abc"], items)
    (kept,) = fit_budget([part], 10_000)
    assert {it.key for it in kept.items} == {("a",), ("b",), ("c",)}
    assert all(it.rank < 3 for it in kept.items) and len(kept.items) == 9
    (least,) = fit_budget([part], 10)
    assert len(least.items) == 3
    (whole,) = fit_budget([part], 10**9)
    assert len(whole.items) == 150


def test_bad_input_is_one_line_naming_the_fix(tmp_path):
    from distbench.cli.errors import UserError

    missing = CliRunner().invoke(cli, ["view", str(tmp_path / "nope")])
    assert isinstance(missing.exception, UserError)
    assert "no such run directory" in str(missing.exception)
    zero = CliRunner().invoke(cli, ["view", str(tmp_path), "--sample", "0"])
    assert zero.exit_code != 0 and "--sample" in zero.output


def test_each_family_of_a_run_is_a_tab_the_url_can_open(runs, tmp_path):
    # Two parts on one page (as a sweep with several families gives): the hook's and the
    # generic view of another table; #family= opens the second.
    sources = [ViewSource("matrix", "trials", None), ViewSource("calls", "calls", None)]
    result = build_view(runs / "bad", tmp_path / "two.html", sources, ViewOptions(sample=2))
    index, _ = embedded(result.path)
    assert [p["family"] for p in index] == ["matrix", "calls"]
    dom, _ = chromium(result.path.resolve().as_uri() + "#family=calls", tmp_path)
    assert dom.count("<nav") == 1 and "<h2>calls (calls)</h2>" in dom
    assert len(cards(dom)) == len(embedded(result.path)[1][1]["items"])
