"""Every registered family through the whole contract (issue 34; OpenSpiel's
``games_sim_test.py`` simulates every registered game the same way): the built-in families and
the example plugin, each played as it declares (``Play.example``: free players, in this
process), then summarised, queried, rescored where it declares rescoring, compared where it
declares comparison units, exported, reported, viewed, and played in a tournament where it
declares seats. A new family is tested here the day it registers, with no edit to this file.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from click.testing import CliRunner

from distbench.cli.main import cli
from distbench.games.base import Shard
from distbench.games.family import CAPABILITIES, Family, Identity, Play
from distbench.games.registry import families
from distbench.store.catalog import open_run
from distbench.store.schema import TIMING_COLUMNS

BUILT_IN = {"matrix", "negotiation", "fog", "bimatrix", "repeated", "openspiel"}
PLUGIN = "beauty"  # examples/plugins/beauty, installed by the README's test command


def _cli(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def _rows(run_dir, table: str) -> list[dict]:
    """A table's rows without their run id and timings, in a stable order (rescoring keeps
    the rest)."""
    con = open_run(run_dir, threads=1)
    try:
        rows = con.sql(f'SELECT * FROM "{table}"').to_arrow_table()
    finally:
        con.close()
    rows = rows.drop_columns([c for c in ("run_id", *TIMING_COLUMNS) if c in rows.column_names])
    keys = [f.name for f in rows.schema  # nested columns cannot be sort keys
            if not pa.types.is_nested(f.type)]
    return rows.sort_by([(k, "ascending") for k in keys]).to_pylist()


def test_every_built_in_family_and_the_plugin_are_registered():
    assert BUILT_IN | {PLUGIN} <= set(families()), sorted(families())


@pytest.mark.parametrize("name", sorted(families()))
def test_the_family_declares_its_contract(name):
    family = families()[name]
    assert isinstance(family, Family) and isinstance(family.identity, Identity)
    assert isinstance(family.play, Play) and family.name == name
    assert set(family.capabilities()) == set(CAPABILITIES)
    for hook in (family.play.runner, family.play.summarize, family.play.command):
        module, _, attr = hook.partition(":")
        assert module and attr, hook
    if family.tournaments:
        assert len(family.tournaments.anchors) >= 2, "a family with seats names its anchors"
        for text in family.tournaments.anchors:
            family.tournament_player(text)  # each anchor is a player of the family
    if family.comparing:
        units = family.compare_units()
        assert units.family == name and units.metrics[0].name == "quality"


@pytest.mark.parametrize("name", sorted(families()))
def test_the_family_goes_through_every_verb(tmp_path, name):
    family = families()[name]
    out = tmp_path / "results"
    run = out / "r"
    # plan and play (free players, in this process)
    _cli("run", "--family", name, *family.play.example, "--no-parallel", "--run-id", "r",
         "--output-dir", str(out))
    con = open_run(run, threads=1)
    try:
        shards = con.execute(f'SELECT DISTINCT shard_id FROM "{family.main_table}"').fetchall()
        assert shards, f"{name}: no rows in its main table {family.main_table}"
        # summary
        assert family.summary(con), f"{name}: an empty summary"
    finally:
        con.close()
    # query
    result = _cli("query", str(run), f'SELECT count(*) AS n FROM "{family.main_table}"')
    assert result.output.strip()
    # rescore: only where the family declares it; no model call, the same rows
    compared = [str(run)]
    if family.rescoring:
        _cli("rescore", str(run), "--run-id", "again")
        assert _rows(out / "again", family.main_table) == _rows(run, family.main_table)
        # no model call: the new run's calls are the source's, none added
        assert _rows(out / "again", "calls") == _rows(run, "calls")
        compared.append(str(out / "again"))
    # compare: where the family declares its units
    if family.comparing:
        result = _cli("compare", *compared, "--format", "json")
        assert f'"family": "{name}"' in result.output, result.output[:500]
    # export, report, viewer
    _cli("export", str(run), "--out", str(tmp_path / "export"))
    assert any((tmp_path / "export").iterdir())
    _cli("report", str(run), "--out", str(tmp_path / "report"))
    _cli("view", str(run), "--out", str(tmp_path / "view.html"))
    assert (tmp_path / "view.html").stat().st_size > 0
    # a tournament, where the family declares seats
    if family.tournaments:
        a, b = family.tournaments.anchors[:2]
        result = _cli("tournament", "--family", name, "--players", f"{a},{b}",
                      "--num-instances", "1", "--resamples", "0", "--run-id", "t",
                      "--output-dir", str(out), "--no-parallel")
        assert "rank" in result.output


@pytest.mark.parametrize("name", sorted(families()))
def test_the_family_plans_declared_shards(name):
    """Every shard a family plans, for ``distbench run`` and for a pairing of a tournament,
    is a :class:`Shard` of the family (the driver's only view of it)."""
    from distbench.cli.run import run as run_command
    from distbench.games.base import PairingSettings
    from distbench.llm.base import BackendSpec
    from distbench.llm.registry import make_spec

    family = families()[name]
    ctx = run_command.make_context("run", ["--family", name, *family.play.example])
    llm = ctx.params["llm_type"] or "dummy"  # what distbench run plays without the bundled model
    spec = (BackendSpec(provider=llm, model=llm.partition(":")[2]) if llm.startswith("scripted:")
            else make_spec(llm))
    plans = [family.command_run(dict(ctx.params), spec).plan("x")]
    if family.tournaments:
        a, b = (family.tournament_player(t)[0] for t in family.tournaments.anchors[:2])
        plans.append(family.plan_pairing(a, b, PairingSettings(num_instances=1)).plan("x"))
    for plan in plans:
        assert plan.shards and all(isinstance(s, Shard) for s in plan.shards), name
        assert {s.family for s in plan.shards} == {name}
