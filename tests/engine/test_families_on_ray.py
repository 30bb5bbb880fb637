"""Negotiation and fog shards run as Ray tasks give the same rows as in-process runs."""

from __future__ import annotations

from distbench.engine.driver import run_plan
from distbench.games.fog.plan import FogRunConfig, plan_fog
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_negotiation
from distbench.store.catalog import open_run
from distbench.store.schema import TIMING_COLUMNS


def _rows(run_dir, table: str, order: str) -> list[tuple]:
    con = open_run(run_dir)
    cols = [d[0] for d in con.execute(f"select * from {table} limit 0").description]
    keep = [c for c in cols if c not in TIMING_COLUMNS and c != "run_id"]
    return con.execute(f"select {', '.join(keep)} from {table} order by {order}").fetchall()


def test_negotiation_on_ray_matches_in_process(tmp_path, ray_session):
    cfg = NegotiationRunConfig(seeds=(1, 2), num_games=3, modes=("semi", "comp"), langs=("en", "de"),
                               player_a="scripted:random", player_b="scripted:fair",
                               shard_episodes=8)
    a = run_plan(plan_negotiation(cfg, "a"), tmp_path / "a", parallel=True, num_workers=2)
    b = run_plan(plan_negotiation(cfg, "b"), tmp_path / "b", parallel=False)
    assert a.shards > 1
    assert _rows(a.run_dir, "episodes", "episode_id") == _rows(b.run_dir, "episodes", "episode_id")
    assert _rows(a.run_dir, "turns", "episode_id, turn, player") == _rows(b.run_dir, "turns", "episode_id, turn, player")
    assert len(_rows(a.run_dir, "episodes", "episode_id")) == 2 * 3 * 2 * 2 * 2


def test_fog_on_ray_matches_in_process(tmp_path, ray_session):
    cfg = FogRunConfig(pairings=(("tier3", "tier1"), ("tier4", "tier2")), seeds=(5,), num_games=3,
                       shard_games=2)
    a = run_plan(plan_fog(cfg, "a"), tmp_path / "a", parallel=True, num_workers=2)
    b = run_plan(plan_fog(cfg, "b"), tmp_path / "b", parallel=False)
    assert a.shards > 1
    assert _rows(a.run_dir, "fog_games", "game_id") == _rows(b.run_dir, "fog_games", "game_id")
    assert _rows(a.run_dir, "fog_events", "game_id, turn, seq") == _rows(b.run_dir, "fog_events", "game_id, turn, seq")
