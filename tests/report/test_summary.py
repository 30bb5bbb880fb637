"""Summary statistics against hand computations."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from distbench.games.matrix.summary import matrix_summary
from distbench.report.bootstrap import bootstrap_mean_ci

# What each shard stores per game (the runner computes it with numpy; here DuckDB does, from
# the trials, so the summary is checked against an independent per-game reduction).
_GAME_SCORES_SQL = """
CREATE TABLE game_scores AS
SELECT 'r' AS run_id, {shard} AS shard_id, bucket, provider, model, tier, mode, game_id,
       count(*)::INTEGER AS trials,
       (count(*) FILTER (WHERE parse_status = 'ok'))::INTEGER AS valid,
       avg(nash_gap) FILTER (WHERE parse_status = 'ok') AS mean_nash_gap,
       var_pop(nash_gap) FILTER (WHERE parse_status = 'ok') AS var_nash_gap,
       min(nash_gap) FILTER (WHERE parse_status = 'ok') AS min_nash_gap,
       max(nash_gap) FILTER (WHERE parse_status = 'ok') AS max_nash_gap,
       avg(llm_value) FILTER (WHERE parse_status = 'ok') AS mean_llm_value,
       avg(br_value) FILTER (WHERE parse_status = 'ok') AS mean_br_value,
       avg(abs(br_value)) FILTER (WHERE parse_status = 'ok') AS mean_abs_br_value,
       avg(exploitability) FILTER (WHERE parse_status = 'ok') AS mean_exploitability,
       NULL::DOUBLE AS mean_label_mass,
       bool_or(gap_degenerate) AS gap_degenerate
FROM trials GROUP BY ALL
"""


def _group(gaps, games, valid=None, br=None, parts=1):
    """The summary record of one group of trials (invalid trials carry no scores), each
    game's trials cut into ``parts`` shards (as a game with more trials than a shard holds)."""
    gaps = np.asarray(gaps, dtype=float)
    valid = np.ones(len(gaps), bool) if valid is None else np.asarray(valid)
    br = np.full(len(gaps), 2.0) if br is None else np.asarray(br, dtype=float)

    def scored(values):
        return [float(v) if ok else None for v, ok in zip(values, valid, strict=True)]

    n = len(gaps)
    trials = pa.table({
        "family": ["matrix"] * n, "bucket": ["b"] * n, "provider": ["dummy"] * n,
        "model": ["m"] * n, "tier": pa.nulls(n, pa.string()), "mode": ["pure"] * n,
        "game_id": list(games),
        "parse_status": ["ok" if ok else "no_answer" for ok in valid],
        "nash_gap": scored(gaps), "llm_value": scored(br - gaps), "br_value": scored(br),
        "exploitability": scored(gaps * 2), "gap_degenerate": [False] * n,
    })
    trials = trials.append_column("part", pa.array(np.arange(n) % parts))
    con = duckdb.connect()
    con.register("trials", trials)
    con.execute(_GAME_SCORES_SQL.format(shard="'s' || part"))
    (record,) = matrix_summary(con)
    return record


def test_summary_fields_match_a_hand_computation():
    # Two games, two trials each; the last trial is invalid (its gap is NaN and ignored).
    gaps = [1.0, 3.0, 2.0, np.nan]
    out = _group(gaps, ["a", "a", "b", "b"], valid=[True, True, True, False],
                 br=[4.0, 4.0, -2.0, -2.0])
    assert out["num_games"] == 2
    assert out["num_trials_per_game"] == 2
    assert out["total_trials"] == 4
    assert out["valid_trials"] == 3
    assert out["valid_rate"] == pytest.approx(0.75)
    assert out["mean_nash_gap"] == pytest.approx(2.0)
    assert out["median_nash_gap"] == pytest.approx(2.0)
    assert out["std_nash_gap"] == pytest.approx(np.sqrt(2 / 3))  # population std of 1, 3, 2
    assert (out["min_nash_gap"], out["max_nash_gap"]) == (1.0, 3.0)
    assert out["mean_br_value"] == pytest.approx((4 + 4 - 2) / 3)
    assert out["mean_llm_value"] == pytest.approx((3 + 1 - 4) / 3)
    assert out["gap_ratio"] == pytest.approx(2.0 / ((4 + 4 + 2) / 3))
    assert out["mean_exploitability"] == pytest.approx(4.0)
    lo, hi = out["nash_gap_ci95"]
    assert 1.0 <= lo <= 2.0 <= hi <= 3.0


@pytest.mark.parametrize("parts", [2, 3])
def test_a_game_cut_into_shards_summarises_as_the_whole_game(parts):
    rng = np.random.default_rng(5)
    gaps = np.round(rng.exponential(1.0, 60), 1)
    games = [f"g{k % 4}" for k in range(60)]
    valid = rng.random(60) > 0.2
    whole = _group(gaps, games, valid=valid)
    cut = _group(gaps, games, valid=valid, parts=parts)
    assert cut.keys() == whole.keys()
    for key, value in whole.items():
        if isinstance(value, float):
            assert cut[key] == pytest.approx(value, rel=1e-12), key
        elif key.endswith("ci95") and value is not None:
            assert cut[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert cut[key] == value, key


def test_the_median_from_counts_is_duckdbs_median(monkeypatch):
    """Large groups take their median from counts of distinct gaps (bounded memory): the
    same number, with an odd and an even count and ties."""
    from distbench.games.matrix import summary

    for gaps in ([3.0, 1.0, 2.0, 2.0, 5.0], [3.0, 1.0, 2.0, 2.0, 5.0, 4.0], [0.5, 0.25],
                 list(np.round(np.random.default_rng(2).normal(size=101), 1))):
        games = [f"g{k % 3}" for k in range(len(gaps))]
        monkeypatch.setattr(summary, "MEDIAN_IN_MEMORY", 10**9)
        direct = _group(gaps, games)["median_nash_gap"]
        monkeypatch.setattr(summary, "MEDIAN_IN_MEMORY", 0)
        assert _group(gaps, games)["median_nash_gap"] == direct == float(np.median(gaps))


def test_no_valid_answer_gives_nulls_not_errors():
    out = _group([np.nan, np.nan], ["a", "a"], valid=[False, False])
    assert out["valid_rate"] == 0.0
    assert out["mean_nash_gap"] is None and out["nash_gap_ci95"] is None


def test_bootstrap_ci_is_deterministic_and_covers_the_mean():
    rng = np.random.default_rng(0)
    sums = rng.normal(5.0, 1.0, size=200) * 10
    counts = np.full(200, 10)
    a = bootstrap_mean_ci(sums, counts)
    assert a == bootstrap_mean_ci(sums, counts)
    assert a[0] < sums.sum() / counts.sum() < a[1]
    # roughly mean +- 1.96 * sd / sqrt(n) for the cluster means
    width = a[1] - a[0]
    assert width == pytest.approx(2 * 1.96 * 1.0 / np.sqrt(200), rel=0.2)


def test_bootstrap_ci_of_nothing_is_none():
    assert bootstrap_mean_ci(np.array([]), np.array([])) is None


def test_matrix_summary_groups_by_bucket_model_and_mode():
    table = pa.table({
        "family": ["matrix"] * 4,
        "bucket": ["b1", "b1", "b2", "b2"],
        "provider": ["dummy"] * 4,
        "model": ["m"] * 4,
        "tier": [None] * 4,
        "mode": ["pure", "pure", "pure", "mixed"],
        "game_id": ["g1", "g2", "g3", "g3"],
        "trial": [0, 0, 0, 0],
        "parse_status": ["ok", "ok", "no_answer", "ok"],
        "nash_gap": [1.0, 2.0, None, 0.5],
        "llm_value": [0.0, 0.0, None, 0.0],
        "br_value": [1.0, 2.0, None, 0.5],
        "exploitability": [1.0, 1.0, None, 0.1],
        "gap_degenerate": [False, False, True, True],
    })
    # game_scores: what the shards compute from these trials (one game per row here)
    scores = pa.table({
        "run_id": ["r"] * 4,
        "shard_id": ["s"] * 4,
        "bucket": ["b1", "b1", "b2", "b2"],
        "provider": ["dummy"] * 4,
        "model": ["m"] * 4,
        "tier": pa.nulls(4, pa.string()),
        "mode": ["pure", "pure", "pure", "mixed"],
        "game_id": ["g1", "g2", "g3", "g3"],
        "trials": [1, 1, 1, 1],
        "valid": [1, 1, 0, 1],
        "mean_nash_gap": [1.0, 2.0, None, 0.5],
        "var_nash_gap": [0.0, 0.0, None, 0.0],
        "min_nash_gap": [1.0, 2.0, None, 0.5],
        "max_nash_gap": [1.0, 2.0, None, 0.5],
        "mean_llm_value": [0.0, 0.0, None, 0.0],
        "mean_br_value": [1.0, 2.0, None, 0.5],
        "mean_abs_br_value": [1.0, 2.0, None, 0.5],
        "mean_exploitability": [1.0, 1.0, None, 0.1],
        "mean_label_mass": pa.nulls(4, pa.float64()),
        "gap_degenerate": [False, False, True, True],
    })
    con = duckdb.connect()
    con.register("trials", table)
    con.register("game_scores", scores)
    records = matrix_summary(con)
    assert [(r["bucket"], r["mode"]) for r in records] == [("b1", "pure"), ("b2", "mixed"), ("b2", "pure")]
    assert records[0]["mean_nash_gap"] == pytest.approx(1.5)
    assert records[2]["valid_rate"] == 0.0
    assert records[1]["degenerate_game_share"] == 1.0


class _Parts:
    """An Offload that runs each part at once and records the parts (unit-test stand-in)."""

    def __init__(self, width):
        self.width = width
        self.parts = []

    def submit(self, fn, *args):
        self.parts.append(args[2:4])
        value = fn(*args)
        return lambda: value


def test_the_bootstrap_is_the_same_in_one_part_or_cut_into_several():
    rng = np.random.default_rng(3)
    sums = rng.normal(0.0, 5.0, size=4000)
    counts = rng.integers(1, 9, size=4000).astype(float)
    here = bootstrap_mean_ci(sums, counts)
    offload = _Parts(width=3)
    assert bootstrap_mean_ci(sums, counts, offload=offload) == here
    assert offload.parts == [(0, 666), (666, 1333), (1333, 2000)]


def test_a_small_bootstrap_is_one_part_whatever_the_width():
    rng = np.random.default_rng(4)
    sums, counts = rng.normal(size=50), np.full(50, 3.0)
    offload = _Parts(width=8)
    assert bootstrap_mean_ci(sums, counts, offload=offload) == bootstrap_mean_ci(sums, counts)
    assert offload.parts == [(0, 2000)]


@pytest.mark.parametrize("n", [1, 2, 7, 2000])
def test_the_bootstrap_quantile_is_numpys_linear_quantile(n):
    from distbench.report.bootstrap import _quantile

    values = np.sort(np.random.default_rng(n).normal(size=n))
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        assert _quantile(values, q) == pytest.approx(float(np.quantile(values, q)), abs=1e-12)
