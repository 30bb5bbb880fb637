"""``--perturb``: presentations of a game (labels, seat, affine, framing), answers mapped back,
and the invariance metrics, with planted checks by scripted players through the real run
path."""

from __future__ import annotations

import numpy as np
import pytest
from cli_server import distbench as _cli
from numpy.testing import assert_allclose
from perturb_players import SolverBackend, game_of_prompt, maximin_action

from distbench.engine.driver import run_config
from distbench.games.answers.invariance import invariance_records, position_bias
from distbench.games.answers.presentation import (
    PERTURBATIONS,
    make_presentation,
    parse_perturb,
    presented_payoff,
    to_underlying_actions,
    to_underlying_strategies,
)
from distbench.games.matrix.generate import game_ids, generate_games
from distbench.games.matrix.plan import MatrixRunConfig, plan_matrix, sweep_configs
from distbench.games.matrix.prompts import presented_prompt, pure_prompt
from distbench.kernels import score_strategies, solve_zero_sum
from distbench.llm import registry
from distbench.spec import SpecError, parse_spec
from distbench.store.catalog import open_run

ALL = ",".join(PERTURBATIONS)
# Biased rock-paper-scissors (OpenSpiel's lp_solver_test): the unique equilibrium is
# (1/16, 10/16, 5/16) for both players, value 0.
BIASED_RPS = np.array([[0.0, -0.25, 0.5], [0.25, 0.0, -0.05], [-0.5, 0.05, 0.0]])


# --- presentations ------------------------------------------------------------------------

def test_presentations_are_a_function_of_the_game_id_and_name():
    for name in PERTURBATIONS:
        assert make_presentation("3x3/s0/g7", name, 3, 4) == make_presentation("3x3/s0/g7", name,
                                                                               3, 4)
    orders = {make_presentation(f"3x3/s0/g{k}", "labels", 4, 4).row_order for k in range(40)}
    assert len(orders) > 10  # seeded per game, not one order for all


def test_seat_is_the_same_game_from_the_other_seat():
    u = BIASED_RPS + np.array([[0.0], [1.0], [0.5]])  # not symmetric, value != 0
    shown = presented_payoff(u, make_presentation("g", "seat", 3, 3))
    assert_allclose(shown, -u.T)
    here, there = solve_zero_sum(u[None]), solve_zero_sum(shown[None])
    # the model is the column player of -U^T: its minimax strategy there is x* of U
    assert_allclose(there.value, -here.value, atol=1e-9)
    assert_allclose(there.col[0], here.row[0], atol=1e-9)


def test_affine_keeps_the_equilibrium_and_maps_the_value():
    pres = make_presentation("3x3/s0/g1", "affine", 3, 3)
    assert pres.scale > 0 and pres.shift != 0
    shown = presented_payoff(BIASED_RPS, pres)
    sol = solve_zero_sum(shown[None])
    assert_allclose(sol.row[0], [1 / 16, 10 / 16, 5 / 16], atol=1e-9)
    assert_allclose(sol.value[0], pres.shift, atol=1e-9)


def test_labels_map_answers_back_to_the_same_play():
    payoffs = generate_games("4x3_midVar_any", 0, 0, 20)
    ids = game_ids("4x3_midVar_any", 0, 0, 20)
    rng = np.random.default_rng(0)
    for g, gid in enumerate(ids):
        pres = make_presentation(gid, "labels", 4, 3)
        shown = presented_payoff(payoffs[g], pres)
        p = rng.dirichlet(np.ones(4))
        x = to_underlying_strategies(p[None], np.array([pres.row_order]))[0]
        # the presented strategy against the presented columns is the same play
        assert_allclose(p @ shown, (x @ payoffs[g])[list(pres.col_order)])
        a = to_underlying_actions(np.arange(4), np.tile(pres.row_order, (4, 1)))
        assert_allclose(shown[:, np.argsort(pres.col_order)], payoffs[g][a])
    strategies = to_underlying_strategies(np.full((1, 3), np.nan), np.array([[2, 0, 1]]))
    assert np.isnan(strategies).all()
    assert to_underlying_actions(np.array([-1, 0]), np.array([[2, 0, 1], [2, 0, 1]])).tolist() \
        == [-1, 2]


def test_exploitability_is_the_same_in_every_presentation():
    payoffs = generate_games("3x3_midVar_mixed", 0, 0, 10)
    sol = solve_zero_sum(payoffs)
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.ones(3), size=10)
    base = score_strategies(payoffs, sol.col, sol.value, np.arange(10), x).exploitability
    for name in ("labels", "affine"):
        for g in range(10):
            pres = make_presentation(f"g{g}", name, 3, 3)
            shown = presented_payoff(payoffs[g], pres)
            p = x[g][list(pres.row_order)]  # the same play, by presented position
            s = solve_zero_sum(shown[None])
            e = score_strategies(shown[None], s.col, s.value, np.zeros(1, dtype=np.int64), p[None])
            assert_allclose(e.exploitability[0] / pres.scale, base[g], atol=1e-7)


def test_perturb_lists_are_checked():
    assert parse_perturb("framing, labels,labels") == ("labels", "framing")
    assert parse_perturb("") == () and parse_perturb(None) == ()
    with pytest.raises(ValueError, match="unknown perturbation 'order'.*labels, seat"):
        parse_perturb("labels,order")
    with pytest.raises(ValueError, match="comma-separated string"):
        parse_perturb(3)


# --- prompts ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["none", *PERTURBATIONS])
@pytest.mark.parametrize("style", ["chat", "completion"])
def test_every_presentation_states_the_game_it_presents(name, style):
    payoff = generate_games("3x4_midVar_any", 2, 0, 1)[0]
    pres = make_presentation("3x4/s2/g0", name, 3, 4)
    prompt = presented_prompt(payoff, pres, "pure", style=style)
    # what the prompt says is the presented game, from the model's seat
    assert_allclose(game_of_prompt(prompt), pres.scale * payoff[list(pres.row_order)][
        :, list(pres.col_order)] + pres.shift)
    assert prompt.endswith("Action: <k>" if style == "chat" else "Action: ")
    if name == "none":
        assert prompt == pure_prompt(payoff, style=style)
    mixed = presented_prompt(payoff, pres, "mixed", style=style)
    assert mixed.endswith("Strategy: [p1, p2, p3]" if style == "chat" else "Strategy: [")


def test_seat_and_framing_prompts_read_as_intended():
    u = np.array([[3.0, -1.0], [0.0, 1.0]])
    seat = presented_prompt(u, make_presentation("g", "seat", 2, 2), "pure")
    assert "You are the column player" in seat and "Row 2" in seat
    story = presented_prompt(u, make_presentation("g", "framing", 2, 2), "pure")
    assert "you lose 1 " in story and "you gain 3 " in story and "Column" not in story
    assert maximin_action(game_of_prompt(story)) == 1


# --- metrics on arrays --------------------------------------------------------------------

def test_invariance_metrics_on_planted_answers():
    # 3 games, base identity, "labels" reverses the order; the player always picks position 0
    orders = {"none": [0, 1, 2], "labels": [2, 1, 0]}
    rows = [(g, p) for g in range(3) for p in ("none", "labels") for _ in range(2)]
    under = np.zeros((len(rows), 3))
    shown = np.zeros((len(rows), 3))
    for k, (_, p) in enumerate(rows):
        shown[k, 0] = 1
        under[k, orders[p][0]] = 1
    out = invariance_records([r[0] for r in rows], [r[1] for r in rows], under, shown,
                             np.array([orders[r[1]] for r in rows]), np.ones(len(rows), bool))
    (labels,) = out
    assert labels["consistency"] == 0.0 and labels["position_only_consistency"] == 1 / 3
    assert labels["position_bias"] == 1.0 and labels["position_shares"] == [1.0, 0.0, 0.0]
    assert labels["predicted_shares"] == [0.0, 0.0, 1.0]


def test_position_bias_is_zero_where_the_prediction_holds_and_signed():
    obs = np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0]])
    out = position_bias(obs, obs.copy(), np.array([4.0, 4.0]))
    assert out["bias"] == [0.0, 0.0, 0.0]
    out = position_bias(np.array([[0.0, 2.0], [0.0, 2.0]]), np.array([[1.0, 1.0], [1.0, 1.0]]),
                        np.array([2.0, 2.0]))
    assert out["bias"] == [-1.0, 1.0]


# --- runs ---------------------------------------------------------------------------------

@pytest.fixture
def scripted():
    for name, target in (("test-first-label", "perturb_players:FirstLabelBackend"),
                         ("test-solver", "perturb_players:SolverBackend")):
        registry.register(registry.Provider(name, target, "scripted", "chat", "a test player"))
    yield
    for name in ("test-first-label", "test-solver"):
        registry._PROVIDERS.pop(name, None)
        registry._ORIGINS.pop(name, None)


def _config(provider: str, bucket: str, games: int, trials: int, perturb=PERTURBATIONS,
            modes=("pure",)) -> MatrixRunConfig:
    return MatrixRunConfig(buckets=(bucket,), seeds=(3,), num_games=games, num_trials=trials,
                           modes=modes, llm=registry.make_spec(provider), perturb=perturb)


def _entries(out) -> dict[str, dict]:
    (group,) = out.summary
    return {e["presentation"]: e for e in group["perturbation"]}


def test_first_label_player_has_position_bias_one_and_chance_consistency(scripted, tmp_path):
    out = run_config(_config("test-first-label", "3x3_midVar_any", 60, 2), tmp_path / "r",
                     parallel=False)
    entries = _entries(out)
    assert list(entries) == list(PERTURBATIONS)
    labels = entries["labels"]
    assert labels["position_bias"] == 1.0 and labels["position_bias_ci95"] == [1.0, 1.0]
    assert labels["position_shares"] == [1.0, 0.0, 0.0]
    # consistency: the share of games whose shuffled first label is the original first action
    kept = open_run(out.run_dir).execute(
        "SELECT avg(CASE WHEN row_order[1] = 0 THEN 1.0 ELSE 0.0 END) FROM (SELECT DISTINCT "
        "game_id, row_order FROM perturb_trials WHERE presentation = 'labels')").fetchone()[0]
    assert labels["consistency"] == pytest.approx(kept)
    low, high = labels["consistency_ci95"]
    assert low <= labels["position_only_consistency"] <= high  # the presentation's chance
    assert abs(labels["position_only_consistency"] - 1 / 3) < 0.1
    for name in ("seat", "affine", "framing"):  # the order is kept: position = action
        assert entries[name]["consistency"] == 1.0
        assert entries[name]["position_only_consistency"] == 1.0
        assert entries[name]["position_bias"] is None
        assert entries[name]["headline_diff"] == 0.0


def test_exact_solver_is_consistent_and_unbiased(scripted, tmp_path):
    out = run_config(_config("test-solver", "3x3_midVar_pure", 40, 2), tmp_path / "r",
                     parallel=False)
    entries = _entries(out)
    for entry in entries.values():
        assert entry["valid_rate"] == 1.0
        assert entry["consistency"] == 1.0 and entry["consistency_ci95"] == [1.0, 1.0]
        assert entry["headline_diff"] == 0.0
        assert entry["valid_rate_diff"] == 0.0 and entry["valid_rate_diff_ci95"] == [0.0, 0.0]
    assert entries["labels"]["position_bias_by_position"] == [0.0, 0.0, 0.0]
    assert entries["labels"]["position_bias_ci95"] == [0.0, 0.0]
    con = open_run(out.run_dir)
    assert con.execute("SELECT max(nash_gap), max(exploitability) FROM perturb_trials"
                       ).fetchone() == (0.0, 0.0)  # the Nash action in every presentation
    # positions follow the presentation: the model's label moved with the action
    moved = con.execute("SELECT count(*) FROM perturb_trials WHERE presentation = 'labels' "
                        "AND position <> decision").fetchone()[0]
    assert moved > 0
    assert isinstance(SolverBackend.in_process, bool)


def test_uniform_dummy_shows_no_bias_beyond_its_interval(tmp_path):
    out = run_config(_config("dummy", "3x3_midVar_any", 150, 8), tmp_path / "r",
                     parallel=False)
    entries = _entries(out)
    labels = entries["labels"]
    # the headline (position 1) within its interval; every position near 0 (each position's
    # own 95% interval misses 0 about one time in twenty, so three of them are not all asked)
    low, high = labels["position_bias_ci95"]
    assert low <= 0.0 <= high
    assert max(abs(b) for b in labels["position_bias_by_position"]) < 0.15
    for entry in entries.values():  # a random player agrees by chance: 1/3
        low, high = entry["consistency_ci95"]
        assert low <= 1 / 3 <= high
        assert entry["paired_games"] == 150 and entry["headline_diff_ci95"][0] < 2.0


def test_mixed_and_logprob_answers_are_mapped_back(tmp_path):
    out = run_config(_config("dummy", "3x3_midVar_any", 12, 3, ("labels",), ("mixed", "logprob")),
                     tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    rows = con.execute("SELECT mode, count(*), count(strategy), count(position) FROM "
                       "perturb_trials GROUP BY ALL ORDER BY mode").fetchall()
    assert rows == [("logprob", 12, 12, 0), ("mixed", 36, 36, 0)]
    for group in out.summary:
        (entry,) = group["perturbation"]
        assert entry["presentation"] == "labels" and 0 <= entry["consistency"] <= 1
        assert entry["position_shares"] is not None


def test_base_rows_are_those_of_a_run_without_presentations(tmp_path):
    plain = run_config(_config("dummy", "3x3_midVar_any", 10, 3, ()), tmp_path / "a",
                       parallel=False)
    more = run_config(_config("dummy", "3x3_midVar_any", 10, 3, ("labels", "seat")),
                      tmp_path / "b", parallel=False)
    query = ("SELECT game_id, trial, decision, parse_status, raw_text, exploitability FROM "
             "trials ORDER BY ALL")
    assert open_run(plain.run_dir).execute(query).fetchall() == \
        open_run(more.run_dir).execute(query).fetchall()
    assert "perturbation" not in plain.summary[0]
    config = _config("dummy", "3x3_midVar_any", 10, 3, ())
    assert "perturb" not in config.to_dict()  # old runs' identities are unchanged
    ids = {s.shard_id for s in plan_matrix(config)}
    assert ids.isdisjoint(s.shard_id for s in plan_matrix(_config("dummy", "3x3_midVar_any",
                                                                  10, 3)))


def test_sweep_spec_takes_perturb_and_names_a_bad_value():
    providers = {"dummy": {"tiers": {"A": ["random"]}}}
    spec = parse_spec({"perturb": ["seat", "labels"], "providers": providers})
    assert spec.perturb == ("labels", "seat") and spec.to_dict()["perturb"] == ["labels", "seat"]
    (config,) = sweep_configs(spec, spec.models[0])
    assert config.perturb == ("labels", "seat")
    assert "perturb" not in parse_spec({"providers": providers}).to_dict()
    with pytest.raises(SpecError, match="perturb: unknown perturbation 'colour'"):
        parse_spec({"perturb": "colour", "providers": providers})


def test_cli_on_ray_prints_invariance_reports_it_and_refuses_a_bad_perturbation(tmp_path):
    run = _cli("run", "--llm-type", "dummy", "--num-games", "6", "--num-trials", "2",
               "--perturb", ALL, "--run-id", "p", "--parallel", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "starting a local Ray instance" in run.stderr  # shards as Ray tasks
    assert "invariance, 3x3_midVar_any dummy:random pure" in run.stdout
    assert "position-1 bias" in run.stdout
    report = _cli("report", "results/p", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "results/p/report/report.md").read_text()
    assert "table:matrix_invariance" in md and "| framing |" in md
    bad = _cli("run", "--llm-type", "dummy", "--perturb", "labels,colour", cwd=tmp_path)
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1].startswith("error: unknown perturbation 'colour'")
    assert "Traceback" not in bad.stderr
