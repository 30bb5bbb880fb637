"""``distbench report`` on small runs of each family: figures present, numbers equal to SQL."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from click.testing import CliRunner  # noqa: E402

from distbench.cli.errors import UserError  # noqa: E402
from distbench.cli.report import report  # noqa: E402
from distbench.engine.driver import run_plan  # noqa: E402
from distbench.engine.sweep import plan_sweep  # noqa: E402
from distbench.games.fog.plan import FogRunConfig, plan_fog  # noqa: E402
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation  # noqa: E402
from distbench.games.registry import report_parts  # noqa: E402
from distbench.mockserver import ServerConfig, start_server  # noqa: E402
from distbench.report.build import build_report  # noqa: E402
from distbench.spec import parse_spec  # noqa: E402
from distbench.store.catalog import open_run  # noqa: E402

MATRIX_FIGURES = {"matrix_headline", "matrix_nash_gap", "matrix_exploitability", "matrix_degenerate",
                  "matrix_tier_gradient", "matrix_valid_rate", "matrix_stated_vs_read",
                  "matrix_paired", "matrix_paired_exploitability", "matrix_paired_valid_rate",
                  "cost_latency", "cost_tokens"}
NEGOTIATION_FIGURES = {"negotiation_outcomes", "negotiation_scores", "negotiation_pareto",
                       "negotiation_paired"}
FOG_FIGURES = {"fog_win_rates", "fog_belief_scores", "fog_reliability", "fog_info_gain",
               "fog_paired"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A matrix sweep (mock-server model in tier A and the dummy in tier C on the same games,
    pure + mixed + logprob), a scripted negotiation run and a fog run tier3 vs tier1."""
    root = tmp_path_factory.mktemp("runs")
    data = {"seeds": [1], "games_per_bucket": 4, "trials_per_game": 2,
            "modes": ["pure", "mixed", "logprob"], "buckets": ["2x2_lowVar_mixed", "3x3_midVar_mixed"]}
    with start_server(ServerConfig()) as server:
        data["providers"] = {
            "mock": {"type": "llamacpp", "base_url": server.url, "cache": False,
                     "tiers": {"A": ["mock-a"]}},
            "dummy": {"tiers": {"C": ["random"]}},
        }
        run_plan(plan_sweep(parse_spec(data, "t.toml"), "sw"), root / "sw", parallel=False)
    run_plan(plan_negotiation(NegotiationRunConfig(
        seeds=(1,), num_games=3, modes=("semi",), langs=("en",), player_a="scripted:fair",
        player_b="scripted:greedy"), "neg"), root / "neg", parallel=False)
    run_plan(plan_fog(FogRunConfig(pairings=(("tier3", "tier1"),), num_games=4), "fog"),
             root / "fog", parallel=False)
    reports = {name: build_report(root / name, root / name / "report", report_parts())
               for name in ("sw", "neg", "fog")}
    return root, reports


def md_table(md_path: Path, table_id: str) -> list[dict[str, str]]:
    """The rows of a report table as dicts of cell text, from ``tables/<id>.csv`` beside
    ``report.md`` (every number at full precision; the page rounds them to their intervals).
    The table is on the page too, under its marker."""
    import csv

    assert f"<!-- table:{table_id} -->" in md_path.read_text()
    with open(md_path.parent / "tables" / f"{table_id}.csv", newline="") as fh:
        return [{k: ("n/a" if v == "" else v) for k, v in row.items()}
                for row in csv.DictReader(fh)]


def num(text: str) -> float | None:
    return None if text == "n/a" else float(text)


def close(text: str, value) -> bool:
    if value is None:
        return text == "n/a"
    return num(text) == pytest.approx(float(value), rel=1e-5, abs=1e-9)


def check_figures(out: Path, result, expected: set[str]) -> None:
    assert set(result.figures) == expected
    html = (out / "report.html").read_text()
    assert html.count("<figure ") == html.count("<svg") == len(expected)  # inline SVG
    assert "<img " not in html
    assert "<script" not in html and "<link" not in html  # nothing fetched, nothing run
    assert 'src="http' not in html and "url(http" not in html and "@import" not in html
    for fid in expected:
        assert f'id="fig-{fid}"' in html
        png = out / f"fig-{fid}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(fig-{fid}.png)" in (out / "report.md").read_text()
        assert (out / "figures" / f"{fid}.pdf").read_bytes()[:5] == b"%PDF-"
        assert (out / "figures" / f"{fid}.svg").read_text().startswith("<svg")
    for tid in result.tables:
        assert (out / "tables" / f"{tid}.csv").is_file()
        assert "\\toprule" in (out / "tables" / f"{tid}.tex").read_text()


def test_report_matrix_sweep_has_every_figure_and_sql_numbers(runs):
    root, reports = runs
    out = root / "sw" / "report"
    check_figures(out, reports["sw"], MATRIX_FIGURES)
    html = (out / "report.html").read_text()
    assert "Negotiation" not in html and "Fog of war" not in html
    for name in ("big_table_all_runs.csv", "big_table_aggregated.md", "suite_metadata.json"):
        assert (out / name).exists()
    con = open_run(root / "sw")
    md = out / "report.md"

    groups = md_table(md, "matrix_groups")
    expected = con.execute(
        "select bucket, provider, model, mode, count(*), avg((parse_status = 'ok')::int),"
        " avg(nash_gap) filter (where parse_status = 'ok'),"
        " avg(exploitability) filter (where parse_status = 'ok')"
        " from trials group by all order by all").fetchall()
    assert len(groups) == len(expected) == 12
    got = {(r["bucket"], r["provider"], r["model"], r["mode"]): r for r in groups}
    for bucket, prov, model, mode, n, valid, gap, expl in expected:
        r = got[(bucket, prov, model, mode)]
        assert int(r["trials"]) == n
        assert close(r["valid_rate"], valid) and close(r["mean_nash_gap"], gap)
        assert close(r["mean_exploitability"], expl)

    deg = {r["bucket"]: r for r in md_table(md, "matrix_degenerate")}
    for bucket, share in con.execute(
            "select bucket, avg(gap_degenerate::int) from games group by 1").fetchall():
        assert close(deg[bucket]["degenerate_share"], share)

    tiers = md_table(md, "matrix_tier_gradient")
    for tier, mode, gap in con.execute(
            "select tier, mode, avg(nash_gap) from trials where parse_status = 'ok'"
            " group by all").fetchall():
        (r,) = [r for r in tiers if (r["tier"], r["mode"]) == (tier, mode)]
        assert close(r["mean_nash_gap"], gap)
        assert num(r["ci95_low"]) <= num(r["mean_nash_gap"]) <= num(r["ci95_high"])

    paired = md_table(md, "matrix_paired")
    (pure,) = [r for r in paired if r["subset"] == "pure"]
    assert (pure["model A"], pure["model B"]) == ("dummy:random", "llamacpp:mock-a")
    diff, n = con.execute(
        "with g as (select model, game_id, avg(nash_gap) m from trials"
        " where mode = 'pure' and parse_status = 'ok' group by all)"
        " select avg(a.m - b.m), count(*) from g a join g b using (game_id)"
        " where a.model = 'random' and b.model = 'mock-a'").fetchone()
    assert close(pure["A - B"], diff) and int(pure["pairs (games)"]) == n
    assert num(pure["CI 95% low"]) <= num(pure["A - B"]) <= num(pure["CI 95% high"])
    assert pure["significant"] == ("yes" if num(pure["CI 95% low"]) > 0
                                   or num(pure["CI 95% high"]) < 0 else "no")

    stated = md_table(md, "matrix_stated_vs_read")
    assert {r["model"] for r in stated} == {"dummy:random", "llamacpp:mock-a"}

    (cost,) = md_table(md, "cost_endpoints")
    calls, tokens, p90 = con.execute(
        "select count(*), sum(prompt_tokens), quantile_cont(latency_ms, 0.9) from calls"
    ).fetchone()
    assert int(cost["calls"]) == calls and int(cost["prompt_tokens"]) == tokens
    assert close(cost["latency_p90_ms"], p90)


def test_report_negotiation_numbers_equal_sql(runs):
    root, reports = runs
    out = root / "neg" / "report"
    check_figures(out, reports["neg"], NEGOTIATION_FIGURES)
    con = open_run(root / "neg")
    rows = {r["player"]: r for r in md_table(out / "report.md", "negotiation_outcomes")}
    expected = con.execute(
        "select p, count(*), avg(success::int), avg(lose::int), avg(aborted::int),"
        " avg(main_score), avg(coalesce(pareto_optimal, false)::int) from ("
        " select player_a p, * from episodes union all select player_b p, * from episodes)"
        " group by p").fetchall()
    assert len(rows) == len(expected) == 2
    for player, n, success, lose, aborted, score, pareto in expected:
        r = rows[player]
        assert int(r["episodes"]) == n
        for col, value in (("success_share", success), ("lose_share", lose),
                           ("aborted_share", aborted), ("mean_main_score", score),
                           ("pareto_optimal_rate", pareto)):
            assert close(r[col], value), col
    (paired,) = md_table(out / "report.md", "negotiation_paired")
    assert int(paired["pairs (instances)"]) == 3


def test_report_fog_numbers_equal_sql(runs):
    root, reports = runs
    out = root / "fog" / "report"
    check_figures(out, reports["fog"], FOG_FIGURES)
    assert "Cost and speed" not in (out / "report.html").read_text()
    con = open_run(root / "fog")
    md = out / "report.md"
    wins = {r["agent"]: r for r in md_table(md, "fog_pairings")}
    for agent, rate in con.execute(
            "select agent, avg(w) from (select agent_a agent, (winner = 'a')::int w from fog_games"
            " union all select agent_b, (winner = 'b')::int from fog_games) group by 1").fetchall():
        assert close(wins[agent]["win_rate"], rate)
    agents = {r["agent"]: r for r in md_table(md, "fog_agents")}
    for agent, brier, ll in con.execute(
            "select agent, avg(b), avg(l) from (select agent_a agent, brier_a b, log_loss_a l"
            " from fog_games union all select agent_b, brier_b, log_loss_b from fog_games)"
            " group by 1").fetchall():
        assert close(agents[agent]["mean_brier"], brier)
        assert close(agents[agent]["mean_log_loss"], ll)
    # Reliability: every probability about a living enemy force of a valid report is counted.
    rel = md_table(md, "fog_reliability")
    reports = con.execute("select agent, beliefs, enemy_alive from fog_reports"
                          " where report_status = 'ok' and beliefs is not null").fetchall()
    for agent in {r[0] for r in reports}:
        expected = sum(len(b[k]) for a, b, alive in reports if a == agent
                       for k in range(len(b)) if alive[k])
        assert sum(int(r["forecasts"]) for r in rel if r["agent"] == agent) == expected
    (paired,) = md_table(md, "fog_paired")
    assert (paired["model A"], paired["model B"]) == ("tier1", "tier3")
    assert close(paired["A - B"], -1.0) and paired["significant"] == "yes"


def test_report_cli_writes_to_the_default_folder_and_rejects_bad_input(runs, tmp_path):
    root, _ = runs
    run = tmp_path / "neg"
    shutil.copytree(root / "neg", run, ignore=shutil.ignore_patterns("report"))
    result = CliRunner().invoke(report, [str(run)])
    assert result.exit_code == 0, result.output
    assert (run / "report" / "report.html").exists() and (run / "report" / "report.md").exists()

    bad = CliRunner().invoke(report, [str(tmp_path / "nowhere")])
    assert isinstance(bad.exception, UserError) and "no such run directory" in str(bad.exception)
    (tmp_path / "file").write_text("x")
    bad = CliRunner().invoke(report, [str(run), "--out", str(tmp_path / "file")])
    assert isinstance(bad.exception, UserError) and "--out" in str(bad.exception)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    bad = CliRunner().invoke(report, [str(run), "--out", str(locked / "sub")])
    if os.geteuid() != 0:  # root may write anywhere
        assert isinstance(bad.exception, UserError) and "not writable" in str(bad.exception)


def test_report_html_renders_in_headless_chromium(runs, tmp_path):
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from matplotlib.image import imread

    root, reports = runs
    shot = tmp_path / "shot.png"
    subprocess.run(
        [str(chromium), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
         "--window-size=1200,2000", reports["sw"].html.resolve().as_uri()],
        check=True, capture_output=True, timeout=120)
    pixels = imread(str(shot))
    assert pixels.shape[0] > 100 and float(pixels[..., :3].var()) > 0


def _chromium(url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
         "--v=0", *extra, url], capture_output=True, text=True, timeout=120)


def test_a_three_family_sweep_report_for_a_paper(tmp_path):
    """The issue's check: a sweep of three models with matrix, negotiation and fog sections;
    the header names the models and versions; every figure is inline SVG with its PDF; every
    table has its CSV and LaTeX; no figure for an empty group; it renders in Chromium with no
    console error (the screenshot is left in the test's folder)."""
    data = {"seeds": [1], "games_per_bucket": 3, "trials_per_game": 2, "modes": ["pure"],
            "buckets": ["2x2_lowVar_mixed"],
            "negotiation": {"games": 2, "opponents": ["scripted:fair"], "max_messages": 1},
            "fog": {"games": 1, "opponents": ["tier1"], "max_turns": 2, "max_tokens": 32}}
    with start_server(ServerConfig()) as server:
        data["providers"] = {
            "mock": {"type": "llamacpp", "base_url": server.url, "cache": False,
                     "tiers": {"A": ["mock-a"], "B": ["mock-b"]}},
            "dummy": {"tiers": {"C": ["random"]}}}
        run_plan(plan_sweep(parse_spec(data, "t.toml"), "three"), tmp_path / "three",
                 parallel=False)
    out = tmp_path / "three" / "report"
    result = build_report(tmp_path / "three", out, report_parts())
    html = result.html.read_text()
    for section in ("Matrix games", "Negotiation", "Fog of war"):
        assert f">{section}</h2>" in html
    meta = html.split('id="tab-meta"', 1)[1].split("</table>", 1)[0]
    for name in ("llamacpp:mock-a", "llamacpp:mock-b", "dummy:random", "distbench ", "numba ",
                 "duckdb ", "game seeds", "temperature", "machine"):
        assert name in meta, name
    assert html.count("<figure ") == html.count("<svg") == len(result.figures) > 5
    for fid in result.figures:
        assert (out / "figures" / f"{fid}.pdf").is_file()
    for tid in result.tables:
        assert (out / "tables" / f"{tid}.csv").is_file() and (out / "tables" / f"{tid}.tex").is_file()
    # the mock model never states valid beliefs: its reliability panel is not drawn empty
    assert "no figure, every value is empty" in html or "fog_reliability" in result.figures
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    shot = tmp_path / "report.png"
    done = _chromium(result.html.resolve().as_uri(), tmp_path, f"--screenshot={shot}",
                     "--window-size=1200,3000")
    assert shot.stat().st_size > 10_000
    errors = [ln for ln in done.stderr.splitlines()
              if "CONSOLE" in ln and ("Error" in ln or "Uncaught" in ln)]
    assert not errors, errors
    print(f"report screenshot: {shot}")
