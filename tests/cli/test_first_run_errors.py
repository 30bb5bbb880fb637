"""What a new user met on a first afternoon: each a one-line fix, each pinned here."""

from __future__ import annotations

import json
import sys

import duckdb
import pytest
from cli_server import distbench as _cli

from distbench.cli import main as cli_main
from distbench.report.viewer import num
from distbench.store.catalog import find_runs, open_runs

DUMMY_RUN = ["run", "--llm-type", "dummy", "--num-games", "2", "--num-trials", "2"]


def test_fog_tournament_writes_to_results_by_default(tmp_path):
    out = _cli("fog", "tournament", "--games-per-pairing", "2", "--agents", "tier1,tier2",
               "--run-id", "rr", "--no-parallel", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "results" / "rr" / "manifest.json").exists()
    assert "tier2 vs tier1" in out.stdout


def test_query_over_a_folder_of_runs_includes_seed_format_runs(tmp_path):
    for extra in (["--run-id", "plain"], ["--output-format", "seed", "--run-id", "seedrun"]):
        made = _cli(*DUMMY_RUN, *extra, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
    results = tmp_path / "results"
    assert (results / "seedrun" / "seedrun" / "manifest.json").exists()  # the seed's layout
    assert [p.relative_to(results).as_posix() for p in find_runs([results])] == [
        "plain", "seedrun/seedrun"]
    con = open_runs(find_runs([results]))
    assert con.execute("select run_id, count(*) from trials group by 1 order by 1").fetchall() == [
        ("plain", 4), ("seedrun", 4)]
    out = _cli("query", "results", "select count(distinct run_id) from trials", "--format",
               "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert list(json.loads(out.stdout)[0].values()) == [2]


@pytest.mark.parametrize("exc", [duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
                                 RuntimeError("Query interrupted"), KeyboardInterrupt()],
                         ids=["InterruptException", "RuntimeError", "KeyboardInterrupt"])
def test_ctrl_c_while_duckdb_runs_a_query_is_one_line(tmp_path, monkeypatch, capsys, exc):
    """DuckDB turns Ctrl-C into its own exception (the viewer met it as ``RuntimeError: Query
    interrupted``): the command says ``interrupted`` in one line, exit status 130 (and, not
    writing a run, says nothing of resuming one)."""
    made = _cli(*DUMMY_RUN, "--run-id", "v", cwd=tmp_path)
    assert made.returncode == 0, made.stderr

    def interrupted(*args, **kwargs):
        raise exc

    monkeypatch.setattr("distbench.report.viewer.build_view", interrupted)
    with pytest.raises(SystemExit) as stop:
        cli_main.main(["view", str(tmp_path / "results" / "v")])
    assert stop.value.code == 130
    assert capsys.readouterr().err.strip().splitlines() == ["error: interrupted"]


def test_an_unusable_output_dir_is_one_line_before_anything_else(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "a-file").write_text("")
    cases = [
        (["--output-dir", "dangling"], "error: --output-dir dangling: a symbolic link to "
         f"{tmp_path / 'nowhere'}, which does not exist; choose another folder"),
        (["--output-dir", "a-file/sub"], "error: --output-dir a-file/sub: cannot create it (Not "
         "a directory); choose another folder"),
    ]
    if sys.platform.startswith("linux"):
        cases.append((["--output-dir", "/proc/x"], "error: --output-dir /proc/x: cannot create "
                      "it (No such file or directory); choose another folder"))
    for flags, line in cases:
        for command in ([*DUMMY_RUN, "--run-id", "x"],
                        ["sweep", "run", "--use-dummy", "--num-games-per-bucket", "1",
                         "--num-trials", "1", "--seeds", "1", "--run-id", "x"],
                        ["fog", "tournament", "--games-per-pairing", "2", "--agents",
                         "tier1,tier2", "--run-id", "x"]):
            out = _cli(*command, *flags, cwd=tmp_path)
            assert (out.returncode, out.stderr) == (2, line + "\n"), (command, flags)
    assert not (tmp_path / "nowhere").exists()


def test_the_viewer_shows_float_noise_as_zero():
    assert num(6.661e-16) == "0" and num(-4e-16, 3) == "0"
    assert num(0.123456) == "0.1235" and num(2e-9) == "2e-09"
    assert num(float("nan")) == "n/a" and num(None) == "n/a"


def test_a_scripted_fog_run_does_not_mention_the_bundled_model(tmp_path, monkeypatch):
    monkeypatch.setenv("DISTBENCH_LOCAL_MODEL", str(tmp_path / "absent.gguf"))  # not installed
    fog = _cli("run", "--family", "fog", "--agent", "tier3", "--opponent", "tier1",
               "--num-games", "1", "--run-id", "f", "--no-parallel", cwd=tmp_path)
    assert fog.returncode == 0, fog.stderr
    assert "bundled model" not in fog.stderr
    # where the dummy does stand in for the model, the note stays
    matrix = _cli("run", "--num-games", "1", "--num-trials", "1", "--run-id", "m", cwd=tmp_path)
    assert matrix.returncode == 0, matrix.stderr
    assert "note: the bundled model is not installed" in matrix.stderr


def test_the_readme_plugin_example_is_the_command_the_plugin_test_plays_on_ray():
    """The README says the plugin example runs "on Ray": a run this small plays in the
    process unless --parallel asks for Ray, so the line must carry it: it is the command
    ``tests/plugins/test_beauty_plugin.py`` runs, checking that Ray started."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("distbench run --family beauty"))
    command, _, comment = line.partition("#")
    assert "on Ray" in comment
    assert command.split()[1:] == ["run", "--family", "beauty", "--llm-type", "dummy",
                                   "--num-games", "20", "--run-id", "b", "--parallel"]
