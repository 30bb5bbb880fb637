"""The harness hash (issue 36): every row records what made it; rescoring changes the scorer
part; ``compare`` says when runs mix harness hashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from distbench.engine.rescore import rescore_run
from distbench.games.registry import get_family
from distbench.store import harness
from distbench.store.catalog import open_run
from distbench.store.harness import (
    harness_hashes,
    harness_line,
    harness_parts,
    role_modules,
    run_harness,
)
from distbench.store.schema import HARNESS_COLUMN, SCHEMAS


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "distbench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


def _hashes(run_dir) -> dict[str, set]:
    con = open_run(run_dir)
    try:
        return {t: {r[0] for r in con.execute(f"select distinct {HARNESS_COLUMN} from {t}"
                                              ).fetchall()} for t in SCHEMAS}
    finally:
        con.close()


def test_every_table_ends_with_the_harness_column():
    assert all(s.names[-1] == HARNESS_COLUMN for s in SCHEMAS.values())


def test_the_parts_come_from_the_family_modules_by_role():
    roles = role_modules(get_family("matrix"))
    assert "distbench.games.matrix.prompts" in roles["prompt"]
    assert "distbench.games.answers.parse" in roles["parse"]
    assert any(m.startswith("distbench.games.matrix.") for m in roles["score"])
    parts = harness_parts(get_family("negotiation"))
    assert set(parts) == {"prompt", "parse", "score", "version", "hash"}
    assert parts["hash"] != harness_parts(get_family("matrix"))["hash"]


def test_rows_record_the_harness_and_rescoring_changes_the_scorer_part(tmp_path, monkeypatch):
    run = _cli(tmp_path, "run", "--llm-type", "dummy", "--run-id", "src", "--no-parallel",
               "--num-games", "4", "--num-trials", "2")
    assert run.returncode == 0, run.stderr
    src = tmp_path / "results" / "src"
    today = harness_parts(get_family("matrix"))
    written = {t: h for t, h in _hashes(src).items() if h}
    assert written and all(h == {today["hash"]} for h in written.values()), written
    assert set(harness_hashes(src)) == {today["hash"]} and run_harness(src) == [today["hash"]]
    assert json.loads((src / "summary.json").read_text())["harness_hash"] == today["hash"]
    marker = json.loads(next((src / "_commits").glob("*.json")).read_text())
    assert marker["harness"] == today

    # a scorer changed since the run: the rescored rows say so, the prompt part is kept
    changed = {k: v for k, v in today.items() if k != "hash"} | {"score": "changed"}
    monkeypatch.setitem(harness._CACHE, "matrix", changed)
    rescore_run(src, tmp_path / "results" / "new")
    new = tmp_path / "results" / "new"
    (new_hash,) = harness_hashes(new)
    assert new_hash != today["hash"]
    assert all(h == {new_hash} for t, h in _hashes(new).items() if h)
    marker = json.loads(next((new / "_commits").glob("*.json")).read_text())
    assert marker["harness"]["prompt"] == today["prompt"]
    assert marker["harness"]["score"] == "changed"

    out = _cli(tmp_path, "compare", "results/src", "results/new")
    assert out.returncode == 0, out.stderr
    assert f"runs differ in harness: {min(today['hash'], new_hash)} vs " \
        f"{max(today['hash'], new_hash)}" in out.stderr
    same = _cli(tmp_path, "compare", "results/src")
    assert "harness" not in same.stderr


def test_modules_that_only_draw_are_no_part_of_the_harness():
    """A replay, viewer or report module draws what is stored: editing one changes no number,
    so it is in no role (``replay`` contains ``play``, a scorer's pattern)."""
    for name in ("matrix", "openspiel", "gama"):
        modules = [m for ms in role_modules(get_family(name)).values() for m in ms]
        assert modules
        assert not [m for m in modules
                    if m.rsplit(".", 1)[1] in ("replay", "viewer", "report")], modules


def test_one_harness_is_no_note():
    assert harness_line(["a", "a"]) is None
    assert harness_line(["b", "a"]) == "runs differ in harness: a vs b"


def test_the_harness_line_keys_hashes_by_family():
    assert harness_line([("matrix", "a"), ("fog", "b")]) is None
    assert harness_line([("matrix", "a"), ("fog", "b"), ("matrix", "c")]) == \
        "runs differ in harness: a vs c"
