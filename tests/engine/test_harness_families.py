"""Every producer of every table records the harness hash (issue 36): each registered family
played end to end from the CLI (its own example: dummy, scripted or tier players), a model run
over real HTTP against the mock server, GAMA-Bench records imported, and a tournament's
ratings; every row of every table has a non-null ``harness_hash``, the family's."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from ports import free_port

from distbench.cli.main import cli
from distbench.games.registry import get_family, load_families
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run
from distbench.store.harness import harness_parts, run_harness
from distbench.store.schema import HARNESS_COLUMN


def _cli(cwd, *args: str) -> None:
    """``distbench ARGS`` in this process (no interpreter to start), run in ``cwd``."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output


def _null_counts(run_dir) -> dict[str, tuple[int, int, set]]:
    """table -> (rows, rows without a hash, the distinct hashes), over every table of the run."""
    con = open_run(run_dir)
    try:
        views = [r[0] for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
        out = {}
        for view in views:
            cols = [d[0] for d in con.execute(f'SELECT * FROM "{view}" LIMIT 0').description]
            if HARNESS_COLUMN not in cols:
                continue
            rows, missing = con.execute(
                f'SELECT count(*), count(*) - count({HARNESS_COLUMN}) FROM "{view}"').fetchone()
            hashes = {r[0] for r in con.execute(
                f'SELECT DISTINCT {HARNESS_COLUMN} FROM "{view}"').fetchall()}
            out[view] = (rows, missing, hashes)
        return out
    finally:
        con.close()


def _check(run_dir, expected: str) -> None:
    counts = _null_counts(run_dir)
    assert counts and any(rows for rows, _, _ in counts.values()), counts
    for view, (rows, missing, hashes) in counts.items():
        assert missing == 0, f"{view}: {missing} of {rows} rows without a harness hash"
        assert not rows or hashes == {expected}, (view, hashes)
    assert run_harness(run_dir) == [expected]
    assert json.loads((run_dir / "summary.json").read_text())["harness_hash"] == expected


@pytest.mark.parametrize("family", sorted(load_families()))
def test_every_family_writes_the_hash_in_every_row(tmp_path, family):
    fam = get_family(family)
    _cli(tmp_path, "run", "--family", family, *fam.play.example, "--run-id", "r",
         "--no-parallel")
    _check(tmp_path / "results" / "r", harness_parts(fam)["hash"])


def test_a_model_over_http_writes_the_hash_in_its_calls_too(tmp_path):
    with start_server(ServerConfig(port=free_port(), seed=3)) as server:
        _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock", "--base-url",
             server.url, "--num-games", "3", "--num-trials", "2", "--run-id", "m",
             "--no-parallel")
    run_dir = tmp_path / "results" / "m"
    _check(run_dir, harness_parts(get_family("matrix"))["hash"])
    assert _null_counts(run_dir)["calls"][0] > 0


def test_imported_gama_records_carry_the_hash(tmp_path):
    folder = tmp_path / "gama" / "guessing_game"
    folder.mkdir(parents=True)
    rounds = [{"responses": [30, 30], "mean": 30, "mean_ratio": 20.0, "winner": 30,
               "winner_num": 2}]
    players = [{"model": "m", "id": f"player_{i}", "records": [30], "utility": [],
                "prompt": [{"role": "system", "content": "rules"}]} for i in range(2)]
    meta = {"name_exp": "m_guessing_game_v1_1", "player_num": 2, "min": 0, "max": 100,
            "ratio": 2 / 3, "ratio_str": "2/3", "round_id": 1, "version": "v1"}
    (folder / "m_guessing_game_v1_1.json").write_text(
        json.dumps({"meta": meta, "round_records": rounds, "player_data": players}))
    from distbench.games.gama.importer import import_folder

    import_folder(tmp_path / "gama", tmp_path / "results", "g")
    counts = _null_counts(tmp_path / "results" / "g")
    assert counts and all(missing == 0 for _, missing, _ in counts.values()), counts
    (hashes,) = {frozenset(h) for rows, _, h in counts.values() if rows}
    assert len(hashes) == 1 and run_harness(tmp_path / "results" / "g") == sorted(hashes)


def test_compare_says_when_the_prompt_templates_differ(tmp_path, monkeypatch, capsys):
    from distbench.store import harness

    fam = get_family("matrix")
    args = ("run", "--family", "matrix", *fam.play.example, "--no-parallel", "--run-id")
    _cli(tmp_path, *args, "a")
    today = harness_parts(fam)
    changed = {k: v for k, v in today.items() if k != "hash"} | {"prompt": "other templates"}
    monkeypatch.setitem(harness._CACHE, "matrix", changed)
    _cli(tmp_path, *args, "b")
    a, b = (run_harness(tmp_path / "results" / r) for r in "ab")
    assert a == [today["hash"]] and b == [harness.harness_hash(changed)] and a != b
    out = CliRunner().invoke(cli, ["compare", str(tmp_path / "results" / "a"),
                                   str(tmp_path / "results" / "b")])
    assert out.exit_code == 0, out.output
    assert f"runs differ in harness: {min(a + b)} vs {max(a + b)}" in out.output
    same = CliRunner().invoke(cli, ["compare", str(tmp_path / "results" / "a")])
    assert "differ in harness" not in same.output


def test_compare_across_two_families_is_no_harness_note(tmp_path):
    """Two families always have two hashes (their own prompts, parsers, scorers): comparing a
    matrix run with a negotiation run mixes nothing, so no "differ in harness" line."""
    for family, run_id in (("matrix", "m"), ("negotiation", "n")):
        _cli(tmp_path, "run", "--family", family, *get_family(family).play.example,
             "--no-parallel", "--run-id", run_id)
    m, n = (run_harness(tmp_path / "results" / r) for r in "mn")
    assert m and n and m != n
    out = CliRunner().invoke(cli, ["compare", str(tmp_path / "results" / "m"),
                                   str(tmp_path / "results" / "n")])
    assert out.exit_code == 0, out.output
    assert "differ in harness" not in out.output


def test_a_tournament_says_when_its_games_mix_harnesses(tmp_path, monkeypatch):
    """A tournament resumed after its prompts changed: the shards played again carry today's
    hash, the others the old one; the tournament says so and its ratings name both."""
    from distbench.store import harness

    fam = get_family("negotiation")
    today = harness_parts(fam)
    old = {k: v for k, v in today.items() if k != "hash"} | {"prompt": "older templates"}
    args = ["tournament", "--family", "negotiation", "--players",
            "scripted:fair,scripted:random,scripted:greedy", "--num-instances", "4",
            "--run-id", "t", "--no-parallel", "--resamples", "20"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(harness._CACHE, "negotiation", old)
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    run_dir = tmp_path / "results" / "t"
    assert first.exit_code == 0, first.output
    assert "differ in harness" not in first.output
    monkeypatch.delitem(harness._CACHE, "negotiation")
    games = sorted((run_dir / "_commits").glob("n-*.json"))
    assert len(games) > 1
    games[0].unlink()  # played again by today's harness on resume
    second = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert second.exit_code == 0, second.output
    both = sorted([harness.harness_hash(old), today["hash"]])
    assert f"runs differ in harness: {both[0]} vs {both[1]}" in second.output
    assert run_harness(run_dir) == both
    con = open_run(run_dir)
    try:
        rated = {r[0] for r in con.execute("SELECT DISTINCT harness_hash FROM ratings").fetchall()}
    finally:
        con.close()
    assert rated == {"+".join(both)}
