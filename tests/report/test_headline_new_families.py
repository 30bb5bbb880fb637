"""The headline of the bimatrix and repeated families cannot be gamed, as in
``tests/report/test_headline.py``: real shards through the real runners, summaries and
``distbench compare`` SQL; the model is the seeded dummy, except that chosen requests (by their
seed) get an invalid answer or a call that failed at the server.

- Replacing any valid answer by an invalid one never raises the headline of any group, and
  leaves every answered unit answered.
- A failed call is left out, not scored 0: the headline becomes the mean quality of the other
  units, each as it was, and the summary counts the missing ones.
- A group with nothing answered has no headline.
- ``distbench compare`` compares two bimatrix runs and two repeated runs on the headline."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from distbench.games.bimatrix.plan import BimatrixRunConfig
from distbench.games.bimatrix.plan import plan_shards as plan_bimatrix_shards
from distbench.games.bimatrix.runner import run_shard as bimatrix_shard
from distbench.games.bimatrix.runner import trial_quality
from distbench.games.bimatrix.summary import format_summary as bimatrix_format
from distbench.games.bimatrix.summary import summarize as bimatrix_summary
from distbench.games.registry import compare_units
from distbench.games.repeated.plan import RepeatedRunConfig
from distbench.games.repeated.plan import plan_shards as plan_repeated_shards
from distbench.games.repeated.runner import match_end, match_quality
from distbench.games.repeated.runner import run_shard as repeated_shard
from distbench.games.repeated.summary import format_summary as repeated_format
from distbench.games.repeated.summary import summarize as repeated_summary
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.registry import build_backend, make_spec
from distbench.report.compare import compare_connection
from distbench.store.catalog import _select_list

FAMILIES = compare_units()  # every family's comparison units, as compare gets them

EPS = 1e-12
DUMMY = make_spec("dummy")
INVALID = "I would rather not say."
_ROUND = re.compile(r"this is round (\d+)")


class Faulty(Backend):
    """The dummy, except that a request whose seed is in ``invalid`` gets an answer that is
    not a move and one whose seed is in ``failed`` a call that failed at the server. Records
    the seeds it was asked."""

    def __init__(self, spec: BackendSpec, invalid: set[int], failed: set[int]) -> None:
        super().__init__(spec)
        self.inner = build_backend(spec)
        self.invalid, self.failed = invalid, failed
        self.seen: list[int] = []

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        answers = await self.inner.generate(requests)
        out = []
        for req, resp in zip(requests, answers, strict=True):
            self.seen.append(req.seed)
            if req.seed in self.failed:
                out.append(Response(text=None, status="failed", error="scripted: HTTP 503"))
            elif req.seed in self.invalid:
                out.append(Response(text=INVALID))
            else:
                out.append(resp)
        return out


def _pick(rng: np.random.Generator, seeds: list[int]) -> int:
    """One of ``seeds`` (request seeds are 64-bit: never through a numpy array)."""
    return seeds[int(rng.integers(len(seeds)))]


def _views(tables: dict[str, pa.Table]) -> duckdb.DuckDBPyConnection:
    """A connection with each table as the catalog's view of it."""
    con = duckdb.connect()
    for name, table in tables.items():
        con.register("_arrow", table)
        con.execute(f"CREATE OR REPLACE TABLE _raw_{name} AS SELECT * FROM _arrow")
        con.unregister("_arrow")
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT {_select_list(name)} "
                    f"FROM _raw_{name}")
    return con


def _compare_units(con: duckdb.DuckDBPyConnection, family: str) -> dict[tuple, tuple]:
    """Per (player, group): the compare SQL's headline sums over its units."""
    (fam,) = [f for f in FAMILIES if f.family == family]
    out: dict[tuple, list[float]] = {}
    cur = con.cursor()
    result = cur.execute(fam.sql)
    names = [d[0] for d in result.description]
    for row in result.fetchall():
        r = dict(zip(names, row, strict=True))
        acc = out.setdefault(r["grp"], [0.0, 0, 0])
        acc[0] += r["quality_sum"] or 0.0
        acc[1] += r["quality_n"]
        acc[2] += r["valid_rate_sum"]
    cur.close()
    return {k: tuple(v) for k, v in out.items()}


# ---- bimatrix ----------------------------------------------------------------------------

_BIMATRIX_SETS = ["class:prisoners_dilemma", "class:stag_hunt", "2x3_midVar", "3x3_lowVar",
                  "class:battle_of_the_sexes", "type:rg017", "class:chicken"]


def _bimatrix_config(case: int) -> BimatrixRunConfig:
    rng = np.random.default_rng(case)
    game_set = _BIMATRIX_SETS[case % len(_BIMATRIX_SETS)]
    opponents = ("eq", "uniform", "self") + (("class",) if game_set.startswith("class:") else ())
    return BimatrixRunConfig(sets=(game_set,), llm=DUMMY, seeds=(case,),
                             num_games=int(rng.integers(2, 6)),
                             num_trials=int(rng.integers(1, 4)),
                             modes=[("pure",), ("mixed",), ("pure", "mixed")][case % 3],
                             opponents=opponents, llm_seed=case)


def _bimatrix_play(config: BimatrixRunConfig, invalid: set[int], failed: set[int]
                   ) -> tuple[pa.Table, list[int]]:
    backend = Faulty(DUMMY, invalid, failed)
    tables = [bimatrix_shard(s, {DUMMY: backend}).tables["bimatrix_trials"][1]
              for s in plan_bimatrix_shards(config, "r")]
    return pa.concat_tables(tables), backend.seen


_BIMATRIX_KEY = ("game_set", "seat", "opponent", "mode")


def _bimatrix_headlines(trials: pa.Table) -> dict[tuple, dict]:
    con = _views({"bimatrix_trials": trials})
    records = {tuple(r[k] for k in _BIMATRIX_KEY): r for r in bimatrix_summary(con)}
    units = _compare_units(con, "bimatrix")
    con.close()
    for key, r in records.items():  # the summary and compare's units say the same
        q_sum, q_n, v_sum = units[f"{key[1]}/{key[3]} vs {key[2]}"]
        assert r["answered"] == q_n and r["answered"] + r["missing"] == r["trials"]
        if q_n:
            assert r["quality"] == pytest.approx(q_sum / q_n, abs=1e-9)
            assert r["valid_rate"] == pytest.approx(v_sum / q_n, abs=1e-9)
            if r["quality_of_valid"] is not None:  # headline = valid x quality of valid
                assert r["quality"] == pytest.approx(r["valid_rate"] * r["quality_of_valid"])
        else:
            assert r["quality"] is None and r["quality_ci95"] is None
    return records


@pytest.mark.parametrize("case", range(24))
def test_bimatrix_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    config = _bimatrix_config(case)
    rng = np.random.default_rng(5000 + case)
    _, seeds = _bimatrix_play(config, set(), set())
    seeds = sorted(set(seeds))
    # some invalid answers and failed calls to start with
    invalid = {s for s in seeds if rng.random() < 0.15}
    failed = {s for s in seeds if s not in invalid and rng.random() < 0.15}
    trials, _ = _bimatrix_play(config, invalid, failed)
    before = _bimatrix_headlines(trials)
    for flip in range(5):
        valid = [s for s in seeds if s not in invalid and s not in failed]
        if not valid:
            break
        invalid.add(_pick(rng, valid))
        trials, _ = _bimatrix_play(config, invalid, failed)
        after = _bimatrix_headlines(trials)
        assert after.keys() == before.keys()
        for key, r in after.items():
            b = before[key]
            assert r["answered"] == b["answered"] and r["missing"] == b["missing"], key
            if b["quality"] is None:
                assert r["quality"] is None
            else:
                assert r["quality"] <= b["quality"] + EPS, (key, flip)
                assert r["valid_rate"] <= b["valid_rate"] + EPS
        before = after
    # every valid answer turned invalid: every answered trial scores 0
    trials, _ = _bimatrix_play(config, set(seeds) - failed, failed)
    for r in _bimatrix_headlines(trials).values():
        assert r["quality"] in (None, 0.0) and r["quality_of_valid"] is None


def _bimatrix_by_trial(trials: pa.Table) -> dict[tuple, float | None]:
    return {(r["game_id"], r["seat"], r["opponent"], r["mode"], r["trial"]): r["quality"]
            for r in trials.to_pylist()}


@pytest.mark.parametrize("case", range(8))
def test_a_bimatrix_failed_call_is_left_out_not_scored(case):
    """A valid answer's call fails instead: its trials (and in self-play the other seat's
    trials that faced it) lose their quality, every other trial keeps its own, and each
    group's headline is the mean of what it keeps."""
    config = _bimatrix_config(case)
    full, seeds = _bimatrix_play(config, set(), set())
    rng = np.random.default_rng(6000 + case)
    pool = sorted(set(seeds))
    failed = {pool[i] for i in rng.choice(len(pool), size=2, replace=False)}
    trials, _ = _bimatrix_play(config, set(), failed)
    was, now = _bimatrix_by_trial(full), _bimatrix_by_trial(trials)
    assert was.keys() == now.keys()
    lost = [k for k in now if now[k] is None]
    assert lost and all(was[k] is not None for k in lost)  # the dummy always answers validly
    assert all(now[k] == was[k] for k in now if now[k] is not None)
    headlines = _bimatrix_headlines(trials)
    for key, r in headlines.items():
        kept = [q for k, q in now.items() if (k[1], k[2], k[3]) == key[1:] and q is not None]
        assert r["missing"] == sum(1 for k in lost if (k[1], k[2], k[3]) == key[1:])
        if kept:
            assert r["quality"] == pytest.approx(math.fsum(kept) / len(kept), abs=1e-12)
        else:
            assert r["quality"] is None


def test_a_bimatrix_group_with_every_call_failed_prints_no_headline():
    config = BimatrixRunConfig(sets=("class:stag_hunt",), llm=DUMMY, num_games=3,
                               num_trials=2, opponents=("eq", "uniform"), seats=("row",))
    _, seeds = _bimatrix_play(config, set(), set())
    trials, _ = _bimatrix_play(config, set(), set(seeds))
    con = _views({"bimatrix_trials": trials})
    records = bimatrix_summary(con)
    con.close()
    assert records and all(r["quality"] is None and r["quality_ci95"] is None
                           and r["valid_rate"] is None and r["missing"] == r["trials"]
                           for r in records)
    text = bimatrix_format(records)
    assert "missing" in text and "[" not in text.split("\n", 2)[2]  # no interval over nothing


def test_bimatrix_trial_quality_rules():
    assert trial_quality(0.7, "ok", "equilibrium", "ok") == 0.7
    assert trial_quality(float("nan"), "no_answer", "uniform", "ok") == 0.0
    assert math.isnan(trial_quality(float("nan"), "call_failed", "uniform", "ok"))
    # self-play: both seats are the model's
    assert trial_quality(float("nan"), "ok", "self", "no_answer") == 0.0
    assert math.isnan(trial_quality(float("nan"), "ok", "self", "call_failed"))
    # another model's invalid answer is not this model's: left out
    assert math.isnan(trial_quality(float("nan"), "ok", "model", "no_answer"))


# ---- repeated ----------------------------------------------------------------------------

_OPPONENTS = ("TitForTat", "Grudger", "Random", "GTFT", "Alternator", "WinStayLoseShift",
              "Cooperator", "Defector", "self")
_STAGES = ("prisoners_dilemma", "stag_hunt", "chicken", "harmony")


def _repeated_config(case: int) -> RepeatedRunConfig:
    rng = np.random.default_rng(case)
    opponents = tuple(str(o) for o in rng.choice(_OPPONENTS, size=3, replace=False))
    length = ({"rounds": int(rng.integers(2, 7))} if case % 3 else
              {"rounds": None, "continuation": 0.7})
    return RepeatedRunConfig(llm=DUMMY, stage=_STAGES[case % len(_STAGES)],
                             opponents=opponents, seeds=(case,),
                             num_games=int(rng.integers(3, 7)), llm_seed=case, **length)


def _repeated_play(config: RepeatedRunConfig, invalid: set[int], failed: set[int]
                   ) -> tuple[pa.Table, list[int]]:
    backend = Faulty(DUMMY, invalid, failed)
    tables = [repeated_shard(s, {DUMMY: backend}).tables["repeated_matches"][1]
              for s in plan_repeated_shards(config, "r")]
    return pa.concat_tables(tables), backend.seen


def _repeated_headlines(matches: pa.Table) -> dict[tuple, dict]:
    con = _views({"repeated_matches": matches})
    records = {(r["stage"], r["opponent"]): r for r in repeated_summary(con)}
    units = _compare_units(con, "repeated")
    con.close()
    for (stage, opponent), r in records.items():
        ((q_sum, q_n, v_sum),) = [v for k, v in units.items()
                                  if k.startswith(stage) and k.endswith(f" vs {opponent}")]
        assert r["answered"] == q_n and r["answered"] + r["missing"] == r["matches"]
        if q_n:
            assert r["quality"] == pytest.approx(q_sum / q_n, abs=1e-9)
            assert r["valid_rate"] == pytest.approx(v_sum / q_n, abs=1e-9)
        else:
            assert r["quality"] is None and r["quality_ci95"] is None
    return records


@pytest.mark.parametrize("case", range(24))
def test_repeated_headline_never_rises_when_a_valid_answer_turns_invalid(case):
    """Any round's valid answer turned invalid forfeits its match (0): the headline never
    rises. A match that a later failed call had left out may now count, as a 0: answered
    matches never decrease."""
    config = _repeated_config(case)
    rng = np.random.default_rng(7000 + case)
    _, seeds = _repeated_play(config, set(), set())
    seeds = sorted(set(seeds))
    invalid = {s for s in seeds if rng.random() < 0.05}
    failed = {s for s in seeds if s not in invalid and rng.random() < 0.05}
    matches, _ = _repeated_play(config, invalid, failed)
    before = _repeated_headlines(matches)
    for flip in range(5):
        valid = [s for s in seeds if s not in invalid and s not in failed]
        if not valid:
            break
        invalid.add(_pick(rng, valid))
        matches, _ = _repeated_play(config, invalid, failed)
        after = _repeated_headlines(matches)
        assert after.keys() == before.keys()
        for key, r in after.items():
            b = before[key]
            assert r["answered"] >= b["answered"], key
            if b["quality"] is None:
                assert r["quality"] in (None, 0.0)
            else:
                assert r["quality"] <= b["quality"] + EPS, (key, flip)
        before = after


@pytest.mark.parametrize("case", range(8))
def test_a_repeated_failed_call_is_left_out_not_scored(case):
    """A round's call fails instead of a valid answer: its match is ``call_failed``, with no
    quality, and every group's headline is the mean of its other matches as they were."""
    config = _repeated_config(case)
    full, seeds = _repeated_play(config, set(), set())
    rng = np.random.default_rng(8000 + case)
    fail = _pick(rng, sorted(set(seeds)))
    matches, _ = _repeated_play(config, set(), {fail})
    was = {r["match_id"]: r for r in full.to_pylist()}
    now = {r["match_id"]: r for r in matches.to_pylist()}
    lost = [m for m, r in now.items() if r["quality"] is None]
    assert len(lost) == 1 and now[lost[0]]["status"] == "call_failed"
    assert all(was[m]["status"] == "complete" for m in was)  # the dummy always answers
    assert all(now[m]["quality"] == was[m]["quality"] for m in now if m not in lost)
    for (_, opponent), r in _repeated_headlines(matches).items():
        kept = [now[m]["quality"] for m in now
                if now[m]["opponent"] == opponent and m not in lost]
        assert r["missing"] == sum(now[m]["opponent"] == opponent for m in lost)
        assert r["quality"] == pytest.approx(math.fsum(kept) / len(kept), abs=1e-12)


def _scripted_matches(policy, opponent: str) -> list[dict]:
    """Matches of a scripted player ``policy(round) -> reply`` (known horizon 6)."""
    class Scripted(Backend):
        async def generate(self, requests):
            return [Response(text=policy(int(_ROUND.search(r.prompt).group(1))))
                    for r in requests]

    spec = BackendSpec("scripted-test", "p")
    cfg = RepeatedRunConfig(llm=spec, opponents=(opponent,), rounds=6, num_games=4)
    return [m for s in plan_repeated_shards(cfg, "r")
            for m in repeated_shard(s, {spec: Scripted(spec)}).tables[
                "repeated_matches"][1].to_pylist()]


def test_repeated_quality_is_one_at_the_optimum_zero_at_the_worst_and_for_a_forfeit():
    """Planted: against Tit For Tat (known horizon 6, a prisoner's dilemma) cooperating until
    the last round and defecting then is optimal: quality 1; always cooperating against a
    Defector is the worst play there (the sucker's payoff every round): quality 0; a forfeit
    scores 0 whatever it had gained before; a failed call leaves the match out."""
    best = _scripted_matches(lambda now: f"Action: {2 if now == 6 else 1}", "TitForTat")
    assert all(m["quality"] == 1.0 and m["regret"] == 0.0 for m in best)
    always_c = _scripted_matches(lambda now: "Action: 1", "TitForTat")
    assert all(0.0 < m["quality"] < 1.0 for m in always_c)
    sucker = _scripted_matches(lambda now: "Action: 1", "Defector")
    assert all(m["quality"] == 0.0 and m["total"] == m["worst_total"] for m in sucker)
    for m in always_c + sucker:
        assert m["worst_total"] <= m["total"] <= m["best_total"]
    forfeits = _scripted_matches(lambda now: "Action: 1" if now < 3 else INVALID, "TitForTat")
    assert all(m["status"] == "forfeit" and m["quality"] == 0.0 for m in forfeits)
    assert match_quality("call_failed", 10.0, 12.0, 3.0, np.eye(2), 4) is None
    assert match_quality("opponent_forfeit", 10.0, 12.0, 3.0, np.eye(2), 4) is None
    assert match_quality("complete", 3.0, 12.0, 3.0, np.eye(2), 4) == 0.0
    assert match_quality("complete", 5.0, 5.0, 5.0, np.eye(2), 4) == 1.0
    # against a model: the share of the stage payoffs' range over the rounds
    assert match_quality("complete", 2.0, None, None, np.eye(2), 4) == 0.5
    assert match_end("call_failed", None, False) == "call_failed"
    assert match_end("no_answer", "call_failed", True) == "call_failed"
    assert match_end("no_answer", None, False) == "forfeit"
    assert match_end("ok", "no_answer", True) == "forfeit"  # self-play: the model's answer
    assert match_end("ok", "no_answer", False) == "opponent_forfeit"


def test_a_repeated_group_with_every_call_failed_prints_no_headline():
    config = RepeatedRunConfig(llm=DUMMY, opponents=("TitForTat",), rounds=3, num_games=3)
    _, seeds = _repeated_play(config, set(), set())
    matches, _ = _repeated_play(config, set(), set(seeds))
    con = _views({"repeated_matches": matches})
    (record,) = repeated_summary(con)
    con.close()
    assert record["quality"] is None and record["quality_ci95"] is None
    assert record["missing"] == record["matches"] == 3 and record["answered"] == 0
    assert "missing" in repeated_format([record])


# ---- distbench compare -------------------------------------------------------------------


def _as_run(table: pa.Table, run_id: str) -> pa.Table:
    i = table.schema.get_field_index("run_id")
    return table.set_column(i, table.schema.field(i), pa.array([run_id] * table.num_rows))


def _compare(tables: list[dict[str, pa.Table]], family: str):
    names = tables[0].keys()
    con = _views({n: pa.concat_tables([t[n] for t in tables]) for n in names})
    (fam,) = [f for f in FAMILIES if f.family == family]
    result = compare_connection(con, [fam])
    con.close()
    return result


def test_compare_tells_an_all_invalid_bimatrix_run_from_the_dummy_on_the_headline():
    config = BimatrixRunConfig(sets=("3x3_midVar",), llm=DUMMY, num_games=40, num_trials=2,
                               opponents=("uniform",), seats=("row",))
    good, seeds = _bimatrix_play(config, set(), set())
    bad, _ = _bimatrix_play(config, set(seeds), set())
    runs = [{"bimatrix_trials": _as_run(good, "a")},
            {"bimatrix_trials": _as_run(bad, "b")}]
    leaderboard, paired, shared, present = _compare(runs, "bimatrix")
    assert present == ["bimatrix"]
    # b has no valid answer: no quality of valid answers or regret to pair
    assert [r[2] for r in paired] == ["quality", "valid_rate"]
    quality = paired[0]
    assert quality[1] == "row/pure vs uniform" and quality[6] == 40 and quality[9] > 0
    assert quality[-2] == "a better" and quality[-1] == ""
    assert leaderboard[0][3] == "quality" and leaderboard[0][6] == "a"  # ranked first
    assert shared[0][4] == 40 and shared[0][5] == "games"


def test_compare_pairs_two_repeated_runs_on_shared_matches():
    config = RepeatedRunConfig(llm=DUMMY, opponents=("TitForTat", "self"), rounds=4,
                               num_games=6)
    a, _ = _repeated_play(config, set(), set())
    other = RepeatedRunConfig(llm=DUMMY, opponents=("TitForTat", "self"), rounds=4,
                              num_games=6, llm_seed=9)
    b, _ = _repeated_play(other, set(), set())
    b = _as_run(b, "b")
    _, paired, shared, present = _compare([{"repeated_matches": _as_run(a, "a")},
                                           {"repeated_matches": b}], "repeated")
    assert present == ["repeated"]
    groups = {r[1] for r in paired}
    assert groups == {"prisoners_dilemma T=4 vs TitForTat", "prisoners_dilemma T=4 vs self"}
    for group in groups:
        rows = [r for r in paired if r[1] == group]
        assert [r[2] for r in rows][:3] == ["quality", "valid_rate", "quality_of_valid"]
        assert all(r[6] == 6 and r[-1] == "< 30 units" for r in rows)
    assert shared[0][4] == 12 and shared[0][5] == "matches"


def _distbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "distbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_distbench_compare_prints_the_headline_of_bimatrix_and_repeated_runs(tmp_path):
    runs = [("--family", "bimatrix", "--class", "stag_hunt", "--num-games", "4",
             "--num-trials", "2", "--opponent", "eq,self", "--llm-seed", str(seed))
            for seed in (1, 2)]
    runs += [("--family", "repeated", "--opponent", "TitForTat", "--rounds", "3",
              "--num-games", "4", "--llm-seed", str(seed)) for seed in (1, 2)]
    for i, args in enumerate(runs):
        result = _distbench("run", *args, "--llm-type", "dummy", "--no-parallel",
                            "--run-id", f"run{i}", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "quality [95% CI]" in result.stdout and "missing" in result.stdout
    result = _distbench("compare", "results", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bimatrix row/pure vs self: headline quality run0/dummy:random" in result.stdout
    assert "repeated prisoners_dilemma T=3 vs TitForTat: headline quality run2/dummy:random" \
        in result.stdout
    data = json.loads(_distbench("compare", "results", "--format", "json",
                                 cwd=tmp_path).stdout)
    paired = data["paired"]
    assert {r["family"] for r in paired} == {"bimatrix", "repeated"}
    assert all(r["shared"] == 4 for r in paired if r["metric"] == "quality")


# ---- over real HTTP: the mock server's faults ---------------------------------------------


def test_over_http_failed_calls_are_missing_and_garbage_answers_score_zero(tmp_path):
    """The mock server over loopback fails some calls (HTTP 500, no retry) and answers others
    with nonsense: in both families a failed call's trials (matches) have no quality and are
    counted as missing, a nonsense answer scores 0."""
    from distbench.engine.driver import run_plan
    from distbench.games.bimatrix.plan import plan_bimatrix
    from distbench.games.repeated.plan import plan_repeated
    from distbench.mockserver import ServerConfig, start_server
    from distbench.store.catalog import open_run

    with start_server(ServerConfig(seed=4, fail_500=0.2, garbage=0.15)) as server:
        spec = make_spec("llamacpp", "mock-a", base_url=server.url, cache=False,
                         max_retries=0)
        cfg = BimatrixRunConfig(sets=("class:stag_hunt",), llm=spec, num_games=8,
                                num_trials=2, opponents=("eq", "self"))
        out = run_plan(plan_bimatrix(cfg, "b"), tmp_path / "b", parallel=False)
        rcfg = RepeatedRunConfig(llm=spec, opponents=("TitForTat", "self"), num_games=8,
                                 rounds=3)
        rout = run_plan(plan_repeated(rcfg, "r"), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    rows = con.execute("select parse_status, opponent, opponent_status, quality "
                       "from bimatrix_trials").fetchall()
    statuses = {st for st, _, _, _ in rows}
    assert "call_failed" in statuses and statuses - {"ok", "call_failed"}, statuses
    for st, opp, ost, q in rows:
        if st == "call_failed" or (opp == "self" and ost == "call_failed"):
            assert q is None
        elif st != "ok" or (opp == "self" and ost != "ok"):
            assert q == 0.0
        else:
            assert 0.0 <= q <= 1.0
    records = bimatrix_summary(con)
    assert sum(r["missing"] for r in records) == sum(q is None for *_, q in rows) > 0
    con.close()
    rcon = open_run(rout.run_dir)
    matches = rcon.execute("select match_id, status, quality from repeated_matches").fetchall()
    assert any(st == "call_failed" for _, st, _ in matches)
    for _, st, q in matches:
        assert (q is None) == (st == "call_failed")
        if st == "forfeit":
            assert q == 0.0
    failed_calls = rcon.execute("select count(*) from calls where status = 'failed'").fetchone()[0]
    missing = sum(r["missing"] for r in repeated_summary(rcon))
    assert missing == sum(st == "call_failed" for _, st, _ in matches) <= failed_calls
    rcon.close()
