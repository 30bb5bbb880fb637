"""``distbench rescore`` of the bimatrix, repeated and openspiel families and of tournament runs
(issue 33), and the guards of the command: it never writes into a run, a damaged file is one
line, and it prints paths as the other commands do.

Runs are made against the real mock server over loopback (``distbench run`` / ``distbench
tournament`` in a subprocess) and rescored by the real CLI: the server counts 0 requests during
the rescore, and unchanged code gives the source's rows, ratings included (run id and timing
columns aside).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from cli_server import distbench

from distbench.games.answers.parse import ParseStatus
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run
from distbench.store.schema import SCHEMAS, TIMING_COLUMNS


def _cli(cwd, *args: str):
    return distbench(*args, cwd=cwd, timeout=600)


def _rows(run_dir: Path) -> dict[str, list[tuple]]:
    """Every table's rows without run_id and timing columns, sorted."""
    con = open_run(run_dir)
    views = {r[0] for r in con.execute("select view_name from duckdb_views()").fetchall()}
    out = {}
    try:
        for table, schema in SCHEMAS.items():
            if table not in views:
                continue
            cols = [f'"{f.name}"' for f in schema
                    if f.name not in TIMING_COLUMNS and f.name != "run_id"]
            out[table] = con.execute(f"select {', '.join(cols)} from {table} order by all"
                                     ).fetchall()
    finally:
        con.close()
    return out


def _digest(run_dir: Path) -> dict[str, str]:
    """Every file of a run with its content hash."""
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


RUNS = {
    # the model named again as a model opponent (``llamacpp``: the running model) is asked
    # with its own tag, and self-play's unplayed seat is read from ``calls``
    "bimatrix": (["--family", "bimatrix", "--class", "stag_hunt", "--num-games", "3",
                  "--num-trials", "2", "--seat", "row", "--opponent", "eq,self,llamacpp"],
                 "bimatrix_trials"),
    "repeated": (["--family", "repeated", "--opponent", "self,TitForTat", "--rounds", "4",
                  "--num-games", "3"], "repeated_matches"),
    "openspiel": (["--family", "openspiel", "--game", "kuhn_poker", "--opponent", "self",
                   "--num-games", "4"], "matches"),
}


@pytest.mark.parametrize("family", list(RUNS))
def test_rescore_of_the_new_families_calls_no_model_and_gives_the_source_rows(tmp_path, family):
    if family == "openspiel":
        pytest.importorskip("pyspiel")
    args, main = RUNS[family]
    with start_server(ServerConfig(seed=3, garbage=0.2)) as server:
        run = _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock",
                   "--base-url", server.url, "--run-id", "src", "--no-parallel", "--no-cache",
                   *args)
        assert run.returncode == 0, run.stderr
        before = server.stats()["requests"]
        assert before > 0
        out = _cli(tmp_path, "rescore", "results/src", "--run-id", "again")
        assert out.returncode == 0, out.stderr
        assert server.stats()["requests"] == before  # not one request
    assert "no model call, 0 answer(s) read differently" in out.stdout
    assert "rescored results/src into results/again" in out.stdout  # relative, as run prints
    old, new = _rows(tmp_path / "results" / "src"), _rows(tmp_path / "results" / "again")
    assert old[main] and old == new


TOURNAMENTS = {
    "negotiation": ["--players", "scripted:fair,scripted:greedy,llamacpp:mock"],
    "fog": ["--players", "tier1,tier2,llamacpp:mock"],
    "bimatrix": ["--players", "eq,uniform,llamacpp:mock"],
    "repeated": ["--players", "TitForTat,Defector,llamacpp:mock", "--option", "rounds=3"],
    "openspiel": ["--players", "random,solver,llamacpp:mock"],
}


@pytest.mark.parametrize("family", list(TOURNAMENTS))
def test_rescore_of_a_tournament_rescores_its_plays_and_refits_the_same_ratings(tmp_path,
                                                                                family):
    if family == "openspiel":
        pytest.importorskip("pyspiel")
    with start_server(ServerConfig(seed=2, garbage=0.2)) as server:
        run = _cli(tmp_path, "tournament", "--family", family, *TOURNAMENTS[family],
                   "--base-url", server.url, "--num-instances", "2", "--resamples", "50",
                   "--run-id", "tour", "--no-parallel")
        assert run.returncode == 0, run.stderr
        before = server.stats()["requests"]
        assert before > 0
        out = _cli(tmp_path, "rescore", "results/tour", "--run-id", "again")
        assert out.returncode == 0, out.stderr
        assert server.stats()["requests"] == before  # 0 model calls
    assert "no model call, 0 answer(s) read differently" in out.stdout
    old, new = _rows(tmp_path / "results" / "tour"), _rows(tmp_path / "results" / "again")
    assert old["ratings"] and old["pairings"]
    assert old == new  # the plays, and the ratings fitted again on them: identical
    assert (tmp_path / "results" / "again" / "_commits" / "tournament-ratings.json").is_file()


def test_rescore_never_writes_into_a_run_and_says_so_in_one_line(tmp_path):
    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
               "--run-id", "src", "--no-parallel")
    assert run.returncode == 0, run.stderr
    other = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "2", "--num-trials",
                 "2", "--run-id", "other", "--no-parallel", "--seed", "5")
    assert other.returncode == 0, other.stderr
    results = tmp_path / "results"
    before = {name: _digest(results / name) for name in ("src", "other")}
    attempts = [
        ["results/src", "--run-id", "src"],                                # the source itself
        ["results/src", "--run-id", "other"],                              # another run
        ["results/src", "--run-id", "inner", "--output-dir", "results/src"],  # inside it
        ["results/src", "--run-id", "x", "--output-dir", "results/other/trials"],  # in a run
        ["results/src/", "--run-id", "src", "--output-dir", str(results)],  # by another path
    ]
    for args in attempts:
        out = _cli(tmp_path, "rescore", *args)
        assert out.returncode != 0, args
        assert out.stderr.startswith("error: ") and "Traceback" not in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "--run-id" in out.stderr or "--output-dir" in out.stderr \
            or "already exists" in out.stderr
    assert {name: _digest(results / name) for name in ("src", "other")} == before
    assert not (results / "x").exists()


def test_a_byte_flipped_parquet_file_is_one_line_not_a_thrift_error(tmp_path):
    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
               "--run-id", "src", "--no-parallel")
    assert run.returncode == 0, run.stderr
    victim = sorted((tmp_path / "results" / "src" / "trials").glob("*.parquet"))[0]
    data = bytearray(victim.read_bytes())
    data[len(data) - 12] ^= 0xFF  # inside the footer's metadata: same size, unreadable
    victim.write_bytes(bytes(data))
    out = _cli(tmp_path, "rescore", "results/src", "--run-id", "again")
    assert out.returncode != 0
    assert out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    assert "thrift" not in out.stderr.lower() and "Traceback" not in out.stderr
    assert "damaged" in out.stderr
    assert not (tmp_path / "results" / "again").exists()


READERS = {  # (family, run args, the runner module whose reader a "stricter parser" replaces)
    "bimatrix": (["--family", "bimatrix", "--class", "stag_hunt", "--num-games", "3",
                  "--num-trials", "2", "--opponent", "eq,self"],
                 "distbench.games.bimatrix.runner", "parse_pure", "trials"),
    "repeated": (["--family", "repeated", "--opponent", "self", "--rounds", "3",
                  "--num-games", "2"], "distbench.games.repeated.runner", "parse_pure",
                 "rounds"),
    "openspiel": (["--family", "openspiel", "--game", "kuhn_poker", "--opponent", "self",
                   "--num-games", "3"], "distbench.games.openspiel.runner", "parse_move",
                  "moves"),
}


@pytest.mark.parametrize("family", list(READERS))
def test_the_new_hooks_read_the_stored_answers_with_todays_parser(tmp_path, monkeypatch,
                                                                  family):
    """A parser that reads nothing any more turns every stored answer into ``no_answer``: the
    hooks re-read the stored texts (they do not copy the stored rows), and a match now ended by
    the first answer drops the later ones."""
    import importlib

    from distbench.engine.rescore import rescore_run
    from distbench.games.answers.parse import PureAnswer
    from distbench.games.openspiel.rules import MoveAnswer

    if family == "openspiel":
        pytest.importorskip("pyspiel")
    args, module, reader, unit = READERS[family]
    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--run-id", "src", "--no-parallel", *args)
    assert run.returncode == 0, run.stderr
    nothing = (MoveAnswer("no_answer", None, "stricter") if reader == "parse_move"
               else PureAnswer(ParseStatus.NO_ANSWER, None, "stricter"))
    monkeypatch.setattr(importlib.import_module(module), reader, lambda *a, **k: nothing)
    out = rescore_run(tmp_path / "results" / "src", tmp_path / "results" / "strict")
    moved = {(o, n): c for (u, o, n), c in out.transitions.items() if u == unit}
    assert moved and all(o == "ok" and n in ("no_answer", "dropped") for o, n in moved)
    assert moved.get(("ok", "no_answer"), 0) > 0
    if family != "bimatrix":  # multi-round: the later answers are no longer asked
        assert moved.get(("ok", "dropped"), 0) > 0


DIVERGING = {  # self-play against a server answering some nonsense, and a reader that reads
    # every answer as the first action: matches that ended on nonsense now go on
    "repeated": (["--family", "repeated", "--opponent", "self", "--rounds", "4",
                  "--num-games", "6"], "distbench.games.repeated.runner", "parse_pure",
                 ("repeated_matches", "rounds")),
    "openspiel": (["--family", "openspiel", "--game", "kuhn_poker", "--opponent", "self",
                   "--num-games", "6"], "distbench.games.openspiel.runner", "parse_move",
                  ("matches", "moves")),
}


@pytest.mark.parametrize("family", list(DIVERGING))
def test_a_match_that_would_ask_an_answer_never_stored_is_kept_as_stored(tmp_path, monkeypatch,
                                                                         family):
    import importlib

    from distbench.engine.rescore import rescore_run
    from distbench.games.answers.parse import PureAnswer
    from distbench.games.openspiel.rules import MoveAnswer

    if family == "openspiel":
        pytest.importorskip("pyspiel")
    args, module, reader, tables = DIVERGING[family]
    with start_server(ServerConfig(seed=7, garbage=0.3)) as server:
        run = _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock",
                   "--base-url", server.url, "--run-id", "src", "--no-parallel", "--no-cache",
                   *args)
        assert run.returncode == 0, run.stderr
        before = server.stats()["requests"]
        first = (MoveAnswer("ok", 0, "") if reader == "parse_move"
                 else PureAnswer(ParseStatus.OK, 0, ""))
        monkeypatch.setattr(importlib.import_module(module), reader, lambda *a, **k: first)
        out = rescore_run(tmp_path / "results" / "src", tmp_path / "results" / "lenient")
        assert server.stats()["requests"] == before
    source, again = tmp_path / "results" / "src", tmp_path / "results" / "lenient"
    forfeit = "status = 'forfeit'" if family == "repeated" else "outcome_a = 'forfeit'"
    by_match = []
    for run_dir in (source, again):
        con = open_run(run_dir)
        rows = {}
        for table in tables:  # every match's rows (run id and timings aside)
            cols = [f'"{f.name}"' for f in SCHEMAS[table]
                    if f.name not in TIMING_COLUMNS and f.name != "run_id"]
            for row in con.execute(f"select match_id, {', '.join(cols)} from {table} "
                                   "order by all").fetchall():
                rows.setdefault(row[0], []).append(row[1:])
        by_match.append(rows)
        if run_dir == source:
            forfeited = {m for (m,) in con.execute(
                f"select match_id from {tables[0]} where {forfeit}").fetchall()}
        con.close()
    old, new = by_match
    assert old.keys() == new.keys()  # each match once, none lost
    kept = {m for m in forfeited if old[m] == new[m]}
    assert out.diverged > 0 and len(kept) >= out.diverged  # kept exactly as stored
    assert any(old[m] != new[m] for m in old)  # the others are re-read (and read otherwise)
