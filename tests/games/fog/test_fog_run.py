"""Fog runs end to end through the driver (scripted tiers, in-process), planning, the CLI and
the round robin of tiers."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.engine.driver import run_plan
from distbench.games.fog.metrics import gradient_holds, tier_gradient
from distbench.games.fog.plan import FogRunConfig, plan_fog, plan_fog_shards, tournament_config
from distbench.games.fog.runner import run_shard
from distbench.games.fog.schema import TABLES
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run
from distbench.store.schema import SCHEMAS


@pytest.fixture
def fog_tables(monkeypatch):
    # Shim until the store lists the fog tables itself.
    for name, schema in TABLES.items():
        monkeypatch.setitem(SCHEMAS, name, schema)


def test_quick_config_validation_names_the_field():
    with pytest.raises(ValueError, match="pairings"):
        FogRunConfig(pairings=(("tier1", "tier9"),))
    with pytest.raises(ValueError, match="num_games"):
        FogRunConfig(pairings=(("tier1", "tier2"),), num_games=0)
    with pytest.raises(ValueError, match="scout_accuracy"):
        FogRunConfig(pairings=(("tier1", "tier2"),), scout_accuracy=1.5)
    with pytest.raises(ValueError, match="seeds"):
        FogRunConfig(pairings=(("tier1", "tier2"),), seeds=())


def test_quick_plan_is_stable_and_json_shaped():
    spec = make_spec("dummy")
    cfg = FogRunConfig(pairings=(("tier1", spec),), num_games=5, shard_games=2)
    a, b = plan_fog_shards(cfg, "x"), plan_fog_shards(cfg, "y")
    assert [s.shard_id for s in a] == [s.shard_id for s in b] and len(a) == 2 * 3
    assert len({s.shard_id for s in a}) == len(a) and sum(s.num_units for s in a) == 10
    assert all(s.specs == (spec,) and s.family == "fog" for s in a)
    plan = plan_fog(cfg, "x")
    assert plan.unit == "games" and plan.identity["pairings"][0][1]["provider"] == "dummy"
    assert tournament_config(10).num_games == 5 and len(tournament_config(10).pairings) == 6


def test_quick_shard_ids_change_with_the_rules():
    base = FogRunConfig(pairings=(("tier1", "tier2"),))
    other = FogRunConfig(pairings=(("tier1", "tier2"),), scout_accuracy=0.5)
    assert plan_fog_shards(base)[0].shard_id != plan_fog_shards(other)[0].shard_id


def test_quick_run_shard_tables_match_their_schemas_and_are_deterministic():
    cfg = FogRunConfig(pairings=(("tier3", "tier2"),), num_games=4, both_seat_orders=False)
    (shard,) = plan_fog_shards(cfg, "r")
    r1, r2 = run_shard(shard, {}), run_shard(shard, {})
    for name in ("fog_games", "fog_reports", "fog_events"):
        stem, table = r1.tables[name]
        assert stem == shard.shard_id and table.schema.equals(TABLES[name], check_metadata=False)
        assert table.equals(r2.tables[name][1])
    games = r1.tables["fog_games"][1].to_pylist()
    assert all(g["winner"] in ("a", "b", "draw") and g["valid_reports_a"] == g["reports_a"]
               for g in games)
    assert "calls" not in r1.tables


def test_scripted_run_through_the_driver(tmp_path, fog_tables):
    cfg = FogRunConfig(pairings=(("tier4", "tier1"),), num_games=3, shard_games=2)
    out = run_plan(plan_fog(cfg, "r"), tmp_path / "r", parallel=False)
    assert out.shards == 4 and out.executed == 4
    con = open_run(out.run_dir)
    assert con.execute("select count(*) from fog_games").fetchone()[0] == 6
    beliefs = [b for (b,) in con.execute("select beliefs from fog_reports").fetchall()]
    assert beliefs and all(np.allclose(np.sum(b, axis=1), 1) for b in beliefs)
    from distbench.cli.query import resolve_query_file

    sql = resolve_query_file("fog_summary").read_text()
    rows = con.execute(sql).fetchall()
    assert {r[0] for r in rows} == {"tier4", "tier1"}
    assert {g["agent_a"] for g in out.summary} == {"tier4", "tier1"}
    again = run_plan(plan_fog(cfg, "r"), tmp_path / "r", parallel=False)
    assert again.executed == 0


def test_tournament_cli_prints_the_gradient(tmp_path, fog_tables):
    from distbench.cli.services import CliServices
    from distbench.games.fog.commands import commands

    fog = commands(CliServices())  # distbench fog, the fog family's own commands

    result = CliRunner().invoke(fog, ["tournament", "--games-per-pairing", "4", "--run-id", "t",
                                      "--output-dir", str(tmp_path), "--no-parallel"])
    assert result.exit_code == 0, result.output
    assert "tier4 vs tier3" in result.output and "tier gradient:" in result.output


def test_quick_tournament_cli_rejects_bad_input(tmp_path):
    from distbench.cli.errors import UserError
    from distbench.cli.services import CliServices
    from distbench.games.fog.commands import commands

    fog = commands(CliServices())  # distbench fog, the fog family's own commands

    result = CliRunner().invoke(fog, ["tournament", "--games-per-pairing", "0", "--run-id", "t",
                                      "--output-dir", str(tmp_path)])
    assert isinstance(result.exception, UserError) and "games-per-pairing" in str(result.exception)


def test_round_robin_shows_a_tier_gradient():
    """Adjacent tiers, 200 games per pairing (100 in each seat order), scripted, in-process."""
    cfg = FogRunConfig(pairings=(("tier2", "tier1"), ("tier3", "tier2"), ("tier4", "tier3")),
                       seeds=(11,), num_games=100, both_seat_orders=True, shard_games=100)
    rows = []
    for shard in plan_fog_shards(cfg, "rr"):
        rows += run_shard(shard, {}).tables["fog_games"][1].select(
            ["agent_a", "agent_b", "winner"]).to_pylist()
    gradient = tier_gradient(rows)
    for g in gradient:
        print(f"{g['higher']} vs {g['lower']}: {g['score_rate']:.3f} "
              f"[{g['ci_low']:.3f}, {g['ci_high']:.3f}] over {g['games']} games")
    assert all(g["games"] == 200 for g in gradient)
    assert gradient_holds(gradient)



def test_quick_run_max_turns_ends_each_game_by_then_and_zero_is_one_line(tmp_path, capsys):
    """``distbench run --family fog --max-turns N``: the turn limit of its games (recorded in
    ``fog_games.max_turns``); a limit under 1 is a one-line error naming the option."""
    from distbench.cli.main import main

    args = ["run", "--family", "fog", "--agent", "tier3", "--opponent", "tier1",
            "--num-games", "1", "--no-parallel", "--output-dir", str(tmp_path)]
    main([*args, "--max-turns", "2", "--run-id", "short"])
    games = open_run(tmp_path / "short").execute(
        "select max_turns, turns from fog_games").fetchall()
    assert len(games) == 2 and all(limit == 2 and turns <= 2 for limit, turns in games)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--max-turns", "0", "--run-id", "zero"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code != 0 and len(err) == 1 and "--max-turns" in err[0]
