"""The bimatrix family: instances, scoring, shards, the driver, the CLI, the spec section."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from click.testing import CliRunner

from distbench.engine.driver import run_plan
from distbench.games.bimatrix.instances import CLASSES, generate, get_set, type_sets
from distbench.games.bimatrix.plan import BimatrixRunConfig, plan_bimatrix, plan_shards, section
from distbench.games.bimatrix.runner import run_shard, score
from distbench.games.bimatrix.schema import TABLES
from distbench.games.bimatrix.summary import summarize
from distbench.games.bimatrix.types import type_ranks
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.registry import make_spec
from distbench.store.catalog import open_run

DUMMY = make_spec("dummy")


class FixedBackend(Backend):
    """Answers every pure request with one action (a scripted player, for planted checks)."""

    def __init__(self, spec: BackendSpec, action: int) -> None:
        super().__init__(spec)
        self.action = action

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(text=f"Let me think.\nAction: {self.action}") for _ in requests]


# --------------------------------------------------------------------------------------------
# instances


@pytest.mark.parametrize("name", CLASSES)
def test_class_games_are_true_to_their_class(name):
    a, b = generate(f"class:{name}", 3, 0, 300)
    r, s, t, p = a[:, 0, 0], a[:, 0, 1], a[:, 1, 0], a[:, 1, 1]
    conditions = {
        "prisoners_dilemma": (t > r) & (r > p) & (p > s) & (2 * r > t + s),
        "stag_hunt": (r > t) & (t > p) & (p > s),
        "chicken": (t > r) & (r > s) & (s > p),
        "deadlock": (t > p) & (p > r) & (r > s),
        "harmony": (r > t) & (t > s) & (s > p),
        "battle_of_the_sexes": (r > p) & (p > s) & (b[:, 1, 1] > b[:, 0, 0]) & (t == s),
        "pure_coordination": (np.minimum(r, p) > s) & (s == t) & (a == b).all(axis=(1, 2)),
        "matching_pennies": (r > s) & (r == p) & (b == -a + (r + s)[:, None, None]).all(axis=(1, 2)),
    }
    assert conditions[name].all()
    if name in ("prisoners_dilemma", "stag_hunt", "chicken", "deadlock", "harmony"):
        assert (b == a.transpose(0, 2, 1)).all()
    assert len({x.tobytes() for x in a}) > 20  # randomised payoffs


def test_games_are_deterministic_and_independent_of_the_chunking():
    a1, b1 = generate("3x3_midVar", 7, 0, 10)
    a2, b2 = generate("3x3_midVar", 7, 5, 10)
    assert (a1[5:] == a2).all() and (b1[5:] == b2).all()
    assert np.abs(a1).max() <= 50 and not (a1 == generate("3x3_midVar", 8, 0, 10)[0]).all()


def test_type_games_keep_their_ordering():
    for set_id in type_sets("1,17,144"):
        ra, rb = type_ranks(int(set_id[-3:]))
        a, b = generate(set_id, 1, 0, 50)
        for x, ranks in ((a, ra), (b, rb)):
            order = np.argsort(x.reshape(50, 4), axis=1)
            assert (order == np.argsort(ranks.ravel())).all()
    assert len(type_sets("all")) == 144


def test_bad_sets_and_configs_are_refused_in_one_line():
    with pytest.raises(ValueError, match="Did you mean 'stag_hunt'"):
        get_set("class:stag_hunts")
    with pytest.raises(ValueError, match="sizes 1..5"):
        get_set("6x6_midVar")
    with pytest.raises(ValueError, match="--types"):
        type_sets("0")
    with pytest.raises(ValueError, match="class rule opponent needs class games"):
        BimatrixRunConfig(sets=("2x2_lowVar",), llm=DUMMY, opponents=("class",))
    with pytest.raises(ValueError, match="unknown bimatrix opponent"):
        BimatrixRunConfig(sets=("2x2_lowVar",), llm=DUMMY, opponents=("nash",))


# --------------------------------------------------------------------------------------------
# scoring


def test_score_regret_quality_and_flags():
    p = np.array([[3.0, 0.0], [5.0, 1.0]])  # prisoner's dilemma, row seat
    q = p.T.copy()
    eq = np.array([[0.0, 1.0]])
    pure = np.array([[False, False], [False, True]])
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [np.nan, np.nan]])
    y = np.tile([1.0, 0.0], (4, 1))  # the opponent cooperates
    m = score(p, q, x, y, eq, pure, 6.0)
    np.testing.assert_allclose(m["value"][:3], [3.0, 5.0, 4.0])
    np.testing.assert_allclose(m["regret"][:3], [2.0, 0.0, 1.0])
    np.testing.assert_allclose(m["quality"], [0.0, 1.0, 0.5, 0.0])  # invalid: 0
    assert np.isnan(m["regret"][3]) and m["br_value"][3] == 5.0
    np.testing.assert_array_equal(m["eq_consistent"][:3], [0.0, 1.0, 0.0])
    # mixed mode: equal to an equilibrium strategy within 1e-6, not merely in its support
    stag = np.array([[4.0, 0.0], [3.0, 2.0]])
    eqs = np.array([[1.0, 0.0], [0.0, 1.0], [2 / 3, 1 / 3]])
    xm = np.array([[2 / 3, 1 / 3], [0.5, 0.5], [1.0, 0.0]])
    m_mixed = score(stag, stag.T, xm, np.tile([0.5, 0.5], (3, 1)), eqs, np.eye(2, dtype=bool),
                    4.0 + 4.0, "mixed")
    np.testing.assert_array_equal(m_mixed["eq_consistent"], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(m["dominated"][:3], [1.0, 0.0, 1.0])  # cooperating is
    np.testing.assert_allclose(m["welfare_ratio"][:3], [1.0, 5 / 6, 11 / 12])
    np.testing.assert_allclose(m["dist_to_eq"][:3], [2.0, 0.0, 1.0])
    assert m["coordinated"][1] == 0.0
    # an unknown opponent (a model's invalid answer): nothing scores, quality included
    m = score(p, q, x[:1], np.full((1, 2), np.nan), eq, pure, 6.0)
    assert np.isnan(m["quality"][0]) and np.isnan(m["regret"][0])


# --------------------------------------------------------------------------------------------
# shards, the driver, the summary


def _config(**kw) -> BimatrixRunConfig:
    base = {"sets": ("class:prisoners_dilemma",), "llm": DUMMY, "num_games": 20,
            "num_trials": 10, "opponents": ("eq", "uniform", "class")}
    return BimatrixRunConfig(**{**base, **kw})


def test_shards_are_stable_and_tables_match_their_schemas():
    cfg = _config(shard_games=8)
    a, b = plan_shards(cfg, "x"), plan_shards(cfg, "y")
    assert [s.shard_id for s in a] == [s.shard_id for s in b] and len(a) == 3
    assert sum(s.num_units for s in a) == 20 * 2 * 10
    r1, r2 = run_shard(a[0], {DUMMY: _dummy()}), run_shard(a[0], {DUMMY: _dummy()})
    for name, schema in TABLES.items():
        table = r1.tables[name][1]
        assert table.schema.equals(schema, check_metadata=False)
        assert table.equals(r2.tables[name][1])
    trials = r1.tables["bimatrix_trials"][1]
    # 8 games x 2 seats x 10 trials, each against eq1 (mutual defection), uniform and class
    assert trials.num_rows == 8 * 2 * 10 * 3
    assert set(trials["opponent"].to_pylist()) == {"eq1", "uniform", "class"}


def _dummy():
    from distbench.llm.dummy import DummyBackend

    return DummyBackend(DUMMY)


def test_a_defector_has_regret_zero_and_exploits_a_cooperator():
    """Planted: always defecting (Action 2) in the prisoner's dilemma is a best response to
    every opponent (defection dominates): regret 0, quality 1, equilibrium play; against the
    class rule (the cooperator) it takes T, the temptation payoff."""
    spec = BackendSpec("fixed", "defect")
    cfg = _config(llm=spec, num_games=10, num_trials=2)
    (shard,) = plan_shards(cfg, "r")
    trials = run_shard(shard, {spec: FixedBackend(spec, 2)}).tables["bimatrix_trials"][1]
    rows = trials.to_pylist()
    assert all(r["regret"] == 0.0 and r["quality"] == 1.0 and r["eq_consistent"]
               and r["cooperate"] == 0.0 for r in rows)
    a, _ = generate("class:prisoners_dilemma", 42, 0, 10)
    for r in rows:
        if r["opponent"] == "class":
            assert r["value"] == a[r["game_index"], 1, 0]  # T
    cooperator = run_shard(shard, {spec: FixedBackend(spec, 1)}).tables["bimatrix_trials"][1]
    vs_class = [r for r in cooperator.to_pylist() if r["opponent"] == "class"]
    assert all(r["value"] == a[r["game_index"], 0, 0] and r["regret"] > 0 for r in vs_class)


def test_run_through_the_driver_resumes_exactly_once_and_a_seat_blind_model_shows_no_seat_gap(
        tmp_path):
    plan = plan_bimatrix(_config(shard_games=10), "r")
    out = run_plan(plan, tmp_path / "r", parallel=False)
    assert out.executed == 2
    con = open_run(out.run_dir)
    assert con.execute("select count(*) from bimatrix_trials").fetchone()[0] == 20 * 2 * 10 * 3
    assert con.execute("select count(*) from bimatrix_games").fetchone()[0] == 20
    again = run_plan(plan_bimatrix(_config(shard_games=10), "r"), tmp_path / "r", parallel=False)
    assert again.executed == 0
    records = {(r["seat"], r["opponent"]): r for r in summarize(con)}
    row, col = records[("row", "uniform")], records[("col", "uniform")]
    assert row["valid_rate"] == 1.0 and row["games"] == 20
    for name in ("cooperation", "mean_regret", "quality"):  # the dummy ignores its seat
        assert row[f"{name}_lo"] <= col[name] <= row[f"{name}_hi"] or \
            col[f"{name}_lo"] <= row[name] <= col[f"{name}_hi"], name


def test_model_and_self_opponents_pair_answers_trial_by_trial():
    cfg = _config(opponents=("self", DUMMY), num_games=3, num_trials=4, seats=("row", "col"))
    (shard,) = plan_shards(cfg, "s")
    rows = run_shard(shard, {DUMMY: _dummy()}).tables["bimatrix_trials"][1].to_pylist()
    by = {(r["seat"], r["opponent"], r["game_index"], r["trial"]): r for r in rows}
    for g in range(3):
        for t in range(4):
            row_self = by[("row", "self", g, t)]
            col_self = by[("col", "self", g, t)]
            # self-play: the opponent of the row seat is the model's own column answer
            assert row_self["opponent_strategy"] == col_self["strategy"]
            assert col_self["opponent_strategy"] == row_self["strategy"]
            assert by[("row", "dummy:random", g, t)]["opponent_kind"] == "model"


# --------------------------------------------------------------------------------------------
# the CLI and the spec section


def test_cli_prints_per_seat_rates_with_intervals(tmp_path):
    from distbench.cli.main import cli

    result = CliRunner().invoke(cli, [
        "run", "--family", "bimatrix", "--class", "prisoners_dilemma", "--num-games", "20",
        "--num-trials", "10", "--llm-type", "dummy", "--no-parallel", "--output-dir",
        str(tmp_path), "--run-id", "pd"])
    assert result.exit_code == 0, result.output
    assert "cooperation [95% CI]" in result.output and "mean regret [95% CI]" in result.output
    lines = [x for x in result.output.splitlines() if x.startswith("class:prisoners_dilemma")]
    assert {x.split()[1] for x in lines} == {"row", "col"}
    result = CliRunner().invoke(cli, [
        "run", "--family", "bimatrix", "--types", "all", "--num-games", "1", "--num-trials", "1",
        "--llm-type", "dummy", "--no-parallel", "--output-dir", str(tmp_path), "--run-id", "t"])
    assert result.exit_code == 0, result.output
    con = open_run(tmp_path / "t")
    assert con.execute("select count(distinct game_set) from bimatrix_games").fetchone()[0] == 144


def test_cli_refuses_bad_input_in_one_line(tmp_path):
    from distbench.cli.main import cli

    result = CliRunner().invoke(cli, ["run", "--family", "bimatrix", "--class", "chickn",
                                      "--llm-type", "dummy", "--output-dir", str(tmp_path)])
    from distbench.cli.errors import UserError

    assert isinstance(result.exception, UserError) and "Did you mean 'chicken'" in str(
        result.exception)


def test_spec_section_fills_defaults_and_names_bad_keys():
    out = section({"classes": ["stag_hunt"], "types": [1, 2], "sets": ["2x2_lowVar"]})
    assert out["sets"] == ["2x2_lowVar", "type:rg001", "type:rg002", "class:stag_hunt"]
    assert out["seats"] == ["row", "col"] and out["opponents"] == ["eq", "uniform"]
    with pytest.raises(ValueError, match="seat"):
        section({"classes": ["stag_hunt"], "seat": ["row"]})
    with pytest.raises(ValueError, match="types"):
        section({"types": "some"})
