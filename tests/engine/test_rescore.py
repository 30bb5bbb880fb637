"""``distbench rescore``: stored answers read again with today's parsers, into a new run.

Runs are made against the real mock server over loopback (``distbench run`` in a subprocess)
and rescored by the real CLI: the server counts 0 requests during the rescore, and unchanged
code gives the source's rows (run id and timing columns aside). A corrected parser installed
through the family contract (a :class:`Family` whose ``rescore`` hook reads otherwise) moves
the transitions and the headline as it should.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from ports import free_port

from distbench.engine.rescore import rescore_run
from distbench.games.answers.parse import parse_pure
from distbench.games.family import Rescoring
from distbench.games.registry import get_family
from distbench.mockserver import ServerConfig, start_server
from distbench.store.catalog import open_run
from distbench.store.schema import SCHEMAS, TIMING_COLUMNS


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distbench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _requests(server) -> int:
    return server.stats()["requests"]


def _rows(run_dir) -> dict[str, list[tuple]]:
    """Every table's rows without run_id and timing columns, sorted."""
    con = open_run(run_dir)
    out = {}
    try:
        for table, schema in SCHEMAS.items():
            cols = [f'"{f.name}"' for f in schema
                    if f.name not in TIMING_COLUMNS and f.name != "run_id"]
            out[table] = con.execute(f"select {', '.join(cols)} from {table} order by all"
                                     ).fetchall()
    finally:
        con.close()
    return out


FAMILY_ARGS = {
    "matrix": ["--combined", "--num-games", "6", "--num-trials", "3"],
    "negotiation": ["--family", "negotiation", "--opponent", "scripted:fair",
                    "--num-games", "3"],
    "fog": ["--family", "fog", "--opponent", "tier1", "--num-games", "2"],
}


@pytest.mark.parametrize("family", list(FAMILY_ARGS))
def test_rescore_calls_no_model_and_gives_the_source_rows(tmp_path, family):
    with start_server(ServerConfig(port=free_port(), seed=1, garbage=0.2)) as server:
        run = _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock",
                   "--base-url", server.url, "--run-id", "src", "--no-parallel",
                   "--no-cache", *FAMILY_ARGS[family])
        assert run.returncode == 0, run.stderr
        before = _requests(server)
        assert before > 0
        out = _cli(tmp_path, "rescore", "results/src", "--run-id", "again")
        assert out.returncode == 0, out.stderr
        assert _requests(server) == before  # not one request
    assert "no model call, 0 answer(s) read differently" in out.stdout
    assert "transitions (old status -> new status)" in out.stdout
    assert "headline before and after" in out.stdout
    source, again = tmp_path / "results" / "src", tmp_path / "results" / "again"
    old, new = _rows(source), _rows(again)
    main = get_family(family).main_table
    assert old[main] and old == new
    manifest = json.loads((again / "manifest.json").read_text())
    assert manifest["run_id"] == "again" and manifest["rescored_from"]["run_id"] == "src"
    assert manifest["state"] == "complete"
    summary = json.loads((again / "summary.json").read_text())
    assert summary["rescored_from"] == "src" and summary["groups"]
    con = open_run(again)
    table = {"matrix": "trials", "negotiation": "turns", "fog": "fog_reports"}[family]
    versions = con.execute(f"select distinct parser_version from {table} "
                           "where raw_text is not null").fetchall()
    con.close()
    assert versions == [({"matrix": "answers.1", "negotiation": "negotiation.1",
                          "fog": "fog.1"}[family],)]


def off_by_one_rescore(stored):
    """A parser that disagrees with the prompt: it believes there is one action fewer."""
    from distbench.games.matrix.rescore import rescore_shard

    return rescore_shard(stored, read_pure=lambda text, m, **kw: parse_pure(text, m - 1, **kw),
                         parser_version="answers.0-off-by-one")


def corrected_rescore(stored):
    """The corrected parser, installed through the family contract."""
    from distbench.games.matrix.rescore import rescore_shard

    return rescore_shard(stored, read_pure=parse_pure, parser_version="answers.1-fixed")


def test_a_corrected_parser_recovers_the_answers_and_moves_the_headline(tmp_path):
    with start_server(ServerConfig(port=free_port(), seed=2)) as server:
        run = _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock",
                   "--base-url", server.url, "--run-id", "src", "--no-parallel",
                   "--num-games", "40", "--num-trials", "2", "--no-cache")
        assert run.returncode == 0, run.stderr
        before = _requests(server)
        results = tmp_path / "results"
        matrix = get_family("matrix")
        here = __name__  # the module as pytest imported it
        broken = dataclasses.replace(matrix, rescoring=Rescoring(f"{here}:off_by_one_rescore"))
        fixed = dataclasses.replace(matrix, rescoring=Rescoring(f"{here}:corrected_rescore"))
        bad = rescore_run(results / "src", results / "bad", families={"matrix": broken})
        good = rescore_run(results / "bad", results / "good", families={"matrix": fixed})
        assert _requests(server) == before
    con = open_run(results / "src")
    last = con.execute("select count(*) from trials t join games g using (run_id, game_id) "
                       "where t.decision = g.rows - 1").fetchone()[0]
    total = con.execute("select count(*) from trials").fetchone()[0]
    con.close()
    assert 0 < last < total
    # the off-by-one parser loses exactly the answers naming the last action ...
    assert bad.transitions[("trials", "ok", "out_of_range")] == last
    # ... and the corrected one recovers every one of them
    assert good.transitions == {("trials", "out_of_range", "ok"): last,
                                ("trials", "ok", "ok"): total - last}
    rows = {(r["group"], r["metric"]): r for r in good.headline}
    valid = rows[("pure", "valid_rate")]
    assert valid["before"] == pytest.approx(1 - last / total)
    assert valid["after"] == 1.0
    assert valid["ci95_low"] > 0  # the headline moves, and the interval says so
    assert valid["units"] == 40
    assert _rows(results / "good")["trials"] != _rows(results / "src")["trials"]  # versions
    con = open_run(results / "good")
    assert con.execute("select distinct parser_version from trials").fetchall() == [
        ("answers.1-fixed",)]
    con.close()
    src, good_rows = _rows(results / "src"), _rows(results / "good")
    version = [f.name for f in SCHEMAS["trials"] if f.name not in TIMING_COLUMNS
               and f.name != "run_id"].index("parser_version")

    def strip(rows):
        return [r[:version] + r[version + 1:] for r in rows]

    assert strip(good_rows["trials"]) == strip(src["trials"])  # everything else restored
    assert good_rows["game_scores"] == src["game_scores"]


def test_rescore_refuses_an_existing_target_and_a_non_run(tmp_path):
    (tmp_path / "results" / "x").mkdir(parents=True)
    (tmp_path / "results" / "x" / "f").write_text("")
    out = _cli(tmp_path, "rescore", "results/nothing", "--run-id", "y")
    assert out.returncode != 0 and out.stderr.startswith("error: ")
    assert "Traceback" not in out.stderr
    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
               "--run-id", "src", "--no-parallel")
    assert run.returncode == 0, run.stderr
    out = _cli(tmp_path, "rescore", "results/src", "--run-id", "x")
    assert out.returncode != 0 and "already exists" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def _scripted_negotiation(tmp_path):
    run = _cli(tmp_path, "run", "--family", "negotiation", "--llm-type", "scripted:fair",
               "--opponent", "scripted:greedy", "--num-games", "3", "--run-id", "neg",
               "--no-parallel")
    assert run.returncode == 0, run.stderr
    return tmp_path / "results" / "neg"


def proposals_as_messages(stored):
    """A parser that no longer sees proposals: the game would go on differently."""
    from distbench.games.negotiation import parse as P
    from distbench.games.negotiation.rescore import rescore_shard

    return rescore_shard(stored, read=lambda *args: P.Parsed(P.MESSAGE), parser_version="t")


def proposals_rejected(stored):
    """A parser that rejects every proposal: the episode ends at its first answer."""
    from distbench.games.negotiation import parse as P
    from distbench.games.negotiation.rescore import rescore_shard

    def read(text, forms, counts, lang):
        parsed = P.parse_message(text, forms, counts, lang)
        return P.Parsed(P.MALFORMED, detail="test") if parsed.status == P.PROPOSAL else parsed

    return rescore_shard(stored, read=read, parser_version="t")


def test_negotiation_episode_that_would_go_on_differently_is_kept_and_marked(tmp_path):
    source = _scripted_negotiation(tmp_path)
    family = dataclasses.replace(get_family("negotiation"),
                                 rescoring=Rescoring(f"{__name__}:proposals_as_messages"))
    out = rescore_run(source, tmp_path / "results" / "msg", families={"negotiation": family})
    # seat a proposed on turn 0; read as a message, seat b would be asked for a message, but
    # the stored turn 1 answers "must propose": the rest cannot be known
    assert out.diverged == 6
    assert sum(c for (u, _, new), c in out.transitions.items()
               if u == "episodes" and new == "diverged") == 6
    assert _rows(source)["episodes"] != _rows(tmp_path / "results" / "msg")["episodes"]
    con = open_run(tmp_path / "results" / "msg")
    assert con.execute("select distinct diverged_at from episodes").fetchall() == [(1,)]
    kept = con.execute("select count(*) from turns where parser_version = 'negotiation.1'"
                       ).fetchone()[0]
    con.close()
    assert kept == 12  # the stored turns, as stored


def test_negotiation_episode_that_now_ends_earlier_is_rescored(tmp_path):
    source = _scripted_negotiation(tmp_path)
    family = dataclasses.replace(get_family("negotiation"),
                                 rescoring=Rescoring(f"{__name__}:proposals_rejected"))
    out = rescore_run(source, tmp_path / "results" / "rej", families={"negotiation": family})
    assert out.diverged == 0
    assert out.transitions[("turns", "proposal", "malformed")] == 6
    assert out.transitions[("turns", "proposal", "dropped")] == 6
    con = open_run(tmp_path / "results" / "rej")
    assert con.execute("select count(*), count(*) filter (where aborted and abort_reason = "
                       "'malformed' and abort_player = 'a' and num_turns = 1) from episodes"
                       ).fetchone() == (6, 6)
    con.close()


def fog_lenient(stored):
    """Reads every answer as an empty order list (all forces hold, as a no_json answer does):
    the same orders, another status."""
    from distbench.games.fog.rescore import rescore_shard
    from distbench.games.fog.text import parse_answer

    return rescore_shard(stored, read=lambda text, obs: parse_answer(
        None if text is None else '{"orders": {}}', obs), parser_version="t")


def fog_fortify(stored):
    """Reads every answer as 'F0 fortifies': other orders than the stored holds."""
    from distbench.games.fog.rescore import rescore_shard
    from distbench.games.fog.text import parse_answer

    return rescore_shard(stored, read=lambda text, obs: parse_answer(
        '{"orders": {"F0": "fortify"}}', obs), parser_version="t")


def test_fog_games_rescore_unless_their_orders_change(tmp_path):
    with start_server(ServerConfig(port=free_port(), seed=1)) as server:
        run = _cli(tmp_path, "run", "--llm-type", "llamacpp", "--llm-model", "mock",
                   "--base-url", server.url, "--run-id", "fog", "--no-parallel",
                   *FAMILY_ARGS["fog"])
        assert run.returncode == 0, run.stderr
    source = tmp_path / "results" / "fog"
    fog = get_family("fog")
    here = __name__  # the module as pytest imported it
    same = rescore_run(source, tmp_path / "results" / "same",
                       families={"fog": dataclasses.replace(fog, rescoring=Rescoring(f"{here}:fog_lenient"))})
    assert same.diverged == 0
    reports = sum(c for (u, _, _), c in same.transitions.items() if u == "reports")
    assert same.transitions[("reports", "no_json", "bad_beliefs")] == reports > 0
    old, new = _rows(source), _rows(tmp_path / "results" / "same")
    assert old["fog_events"] == new["fog_events"]  # the same game, move for move
    moved = rescore_run(source, tmp_path / "results" / "moved",
                        families={"fog": dataclasses.replace(fog, rescoring=Rescoring(f"{here}:fog_fortify"))})
    assert moved.diverged == 4
    con = open_run(tmp_path / "results" / "moved")
    assert con.execute("select distinct diverged_at from fog_games").fetchall() == [(1,)]
    con.close()
    assert _rows(tmp_path / "results" / "moved")["fog_reports"] == old["fog_reports"]


def test_a_family_without_a_rescore_hook_is_refused_and_leaves_no_folder(tmp_path):
    from distbench.errors import UserError

    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2",
               "--run-id", "src", "--no-parallel")
    assert run.returncode == 0, run.stderr
    plain = dataclasses.replace(get_family("matrix"), rescoring=None)
    with pytest.raises(UserError, match="cannot rescore"):
        rescore_run(tmp_path / "results" / "src", tmp_path / "results" / "new",
                    families={"matrix": plain})
    assert not (tmp_path / "results" / "new").exists()
