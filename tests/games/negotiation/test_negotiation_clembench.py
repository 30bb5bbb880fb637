"""clembench drop-in: its instance files played, its aggregates, near-miss proposals, export."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from distbench.cli.main import cli, main
from distbench.engine.driver import run_plan
from distbench.games.negotiation import runner
from distbench.games.negotiation.clembench import load_instances
from distbench.games.negotiation.command import section
from distbench.games.negotiation.plan import file_config, plan_negotiation, plan_shards
from distbench.games.negotiation.summary import negotiation_summary
from distbench.llm.base import Backend, BackendSpec, Response
from distbench.store.catalog import open_run

DATA = Path(__file__).parent / "data"
TINY = DATA / "instances_tiny.json"  # our own file in clembench's format: 4 game instances
SPEC = BackendSpec("fake", "m")


class Fake(Backend):
    def __init__(self, spec, answer):
        super().__init__(spec)
        self.answer = answer
        self.prompts: list[str] = []

    async def generate(self, requests):
        self.prompts += [r.messages[-1][1] for r in requests]
        return [Response(text=self.answer(r)) for r in requests]


def _tables(cfg, backends=None):
    result = runner.run_shard(plan_shards(cfg, "r")[0], backends or {})
    return {n: t for n, (_, t) in result.tables.items()}


def test_the_file_is_read_as_clembench_writes_it():
    got = load_instances(DATA)  # a folder: its instances*.json
    assert [fi.instance.instance_id for fi in got] == [
        "instances_tiny/semi_en/0", "instances_tiny/semi_en/1", "instances_tiny/coop_de/0",
        "instances_tiny/comp_en/7"]
    first = got[0]
    assert (first.mode, first.lang, first.max_messages) == ("semi", "en", 3)
    assert first.instance.words == (("lamp", "lamps"), ("kite", "kites"), ("drum", "drums"))
    assert first.instance.counts == (2, 1, 3) and first.instance.values_b == (0, 4, 2)
    assert first.prompts is not None and got[2].prompts is None  # coop_de brings no texts


@pytest.mark.parametrize("modes, langs, n", [((), (), 4), (("semi", "comp"), (), 3),
                                             ((), ("de",), 1), (("coop",), ("en",), 0)])
def test_every_instance_of_the_chosen_experiments_is_played_once(modes, langs, n):
    if n == 0:
        with pytest.raises(ValueError, match="no experiment in mode coop"):
            file_config(str(TINY), modes, langs, player_a="scripted:fair")
        return
    cfg = file_config(str(TINY), modes, langs, player_a="scripted:fair",
                      player_b="scripted:greedy")
    eps = _tables(cfg)["episodes"].to_pylist()
    assert len(eps) == n == sum(s.num_units for s in plan_shards(cfg))
    assert len({e["episode_id"] for e in eps}) == n


def test_item_words_values_and_instance_ids_are_the_files():
    cfg = file_config(str(TINY), (), (), player_a="scripted:fair", player_b="scripted:greedy")
    tabs = _tables(cfg)
    eps = {e["instance_id"]: e for e in tabs["episodes"].to_pylist()}
    coop = eps["instances_tiny/coop_de/0"]
    assert (coop["mode"], coop["lang"], coop["instance_index"], coop["seed"]) == ("coop", "de", 0, -1)
    assert coop["item_types"] == ["Tassen", "Stifte", "Münzen"]
    assert coop["values_a"] == [1, 4, 4] and coop["values_b"] == [0, 0, 10]
    assert eps["instances_tiny/comp_en/7"]["instance_index"] == 7
    assert eps["instances_tiny/semi_en/0"]["max_messages"] == 3
    turns = tabs["turns"].to_pylist()
    assert any("[Vorschlag: 1 Tasse, 1 Stift, 0 Münzen]" in t["raw_text"] for t in turns)


def test_the_files_prompts_are_used_and_messages_relayed_verbatim():
    fake = Fake(SPEC, lambda r: "[Proposal: 1 lamp]" if "Make" in r.messages[-1][1]
                else "Hello there")
    cfg = file_config(str(TINY), ("semi",), (), player_a=SPEC, player_b=SPEC)
    tabs = _tables(cfg, {SPEC: fake})
    first = fake.prompts[0]
    assert first.startswith("A test negotiation. Split these items with the other player: "
                            "2 lamps, 1 kite, 3 drums.")
    assert "worth to you: lamp: 2, kite: 3, drum: 1." in first and "at most 3 messages" in first
    assert any(p.endswith("Keep more points for yourself.\n\n\nHello there") for p in fake.prompts)
    assert not any("The other player says" in p for p in fake.prompts)
    assert any("No more messages. Make your secret proposal now." in p for p in fake.prompts)
    lamps = [e for e in tabs["episodes"].to_pylist() if e["instance_id"].endswith("semi_en/0")]
    assert lamps[0]["success"] and lamps[0]["num_turns"] == 2 * 3 + 2
    early = Fake(SPEC, lambda r: "[Proposal: 1 kite]")
    cfg = file_config(str(TINY), ("semi",), (), player_a="scripted:fair", player_b=SPEC)
    _tables(cfg, {SPEC: early})
    assert all(p.endswith("Your partner has made a secret proposal. Make yours now.\n")
               for p in early.prompts)


# Hand-checked (scripted:fair in seat a, scripted:greedy in seat b):
# semi_en/0 lose -> 0; semi_en/1 success (5, 10), best for a with b >= 10 is 6 -> gap 1 ->
# 100 * (1 - 1/10) = 90; coop_de/0 success, sum 15 of max 16 -> 93.75; comp_en/7 lose -> 100.
def test_clembench_aggregates_by_hand(tmp_path):
    cfg = file_config(str(TINY), (), (), player_a="scripted:fair", player_b="scripted:greedy")
    out = run_plan(plan_negotiation(cfg, "r"), tmp_path / "r", parallel=False)
    con = open_run(out.run_dir)
    q = dict(con.execute("select instance_id, clem_quality from episodes").fetchall())
    assert q == {"instances_tiny/semi_en/0": 0.0, "instances_tiny/semi_en/1": 90.0,
                 "instances_tiny/coop_de/0": 93.75, "instances_tiny/comp_en/7": 100.0}
    gaps = con.execute("select instance_id, clem_pareto_improvement, clem_max_pareto_improvement,"
                       " max_pareto_improvement from episodes order by all").fetchall()
    assert gaps == [("instances_tiny/comp_en/7", 0, 0, 10), ("instances_tiny/coop_de/0", 1, 16, 1),
                    ("instances_tiny/semi_en/0", 10, 10, 10), ("instances_tiny/semi_en/1", 1, 10, 1)]
    fair = {(r["mode"], r["lang"]): r for r in out.summary if r["player"] == "scripted:fair"}
    assert fair["semi", "en"]["clem_quality_score"] == 45.0 and fair["semi", "en"]["clemscore"] == 45.0
    assert fair["coop", "de"]["clem_quality_score"] == 93.75
    assert fair["comp", "en"]["clem_quality_score"] == 100.0 and fair["comp", "en"]["mean_main_score"] == 0.0
    assert all(r["clem_pct_played"] == 100.0 for r in out.summary)
    rows = {(r[0], r[1], r[2]): r for r in con.execute(
        (Path(__file__).resolve().parents[3] / "queries" / "report_negotiation_clembench.sql")
        .read_text()).fetchall()}
    assert rows["scripted:fair", "all", "all"][3:7] == (4, 100.0, 70.9375, 70.9375)


def test_aborted_episodes_count_in_pct_played_not_in_quality():
    # The model writes a near miss on the cups game and a valid proposal on the lamps game:
    # lamps: a (1, 0, 0) + greedy b (0, 1, 3): success (2, 10); a can reach 4 -> 100 * (1 - 2/10).
    fake = Fake(SPEC, lambda r: "[Proposal 1 cup]" if "cup" in r.messages[0][1]
                else "[Proposal: 1 lamp]")
    cfg = file_config(str(TINY), ("semi",), (), player_a=SPEC, player_b="scripted:greedy")
    tabs = _tables(cfg, {SPEC: fake})
    con = duckdb.connect()
    con.register("episodes", tabs["episodes"])
    (rec,) = [r for r in negotiation_summary(con) if r["player"] == "fake:m"]
    assert rec["clem_pct_played"] == 50.0 and rec["clem_quality_score"] == pytest.approx(80.0)
    assert rec["clemscore"] == pytest.approx(40.0)


def test_a_near_miss_aborts_with_its_reason_and_is_never_relayed():
    fake = Fake(SPEC, lambda r: "Let us share. [Proposal 1 lamp]")
    cfg = file_config(str(TINY), ("comp",), (), player_a=SPEC, player_b="scripted:fair")
    tabs = _tables(cfg, {SPEC: fake})
    (ep,) = tabs["episodes"].to_pylist()
    assert ep["aborted"] and ep["abort_reason"] == "near_miss_proposal" and ep["abort_player"] == "a"
    (turn,) = tabs["turns"].to_pylist()  # the other player was never asked
    assert turn["parse_status"] == "near_miss_proposal" and "without ':'" in turn["parse_detail"]


def test_german_keyword_in_an_english_game_aborts(monkeypatch):
    fake = Fake(SPEC, lambda r: "[Vorschlag: 1 lamp]")
    cfg = file_config(str(TINY), ("comp",), (), player_a=SPEC, player_b="scripted:fair")
    (ep,) = _tables(cfg, {SPEC: fake})["episodes"].to_pylist()
    assert ep["abort_reason"] == "near_miss_proposal"


def test_cli_run_and_export_write_per_episode_records(tmp_path):
    cli_runner = CliRunner()
    res = cli_runner.invoke(cli, ["run", "--family", "negotiation", "--instances", str(DATA),
                                  "--llm-type", "scripted:fair", "--opponent", "scripted:greedy",
                                  "--output-dir", str(tmp_path), "--run-id", "c", "--no-parallel"])
    assert res.exit_code == 0, res.output
    assert "clemscore" in res.output
    res = cli_runner.invoke(cli, ["export", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    records = json.loads((tmp_path / "c" / "export" / "episodes.json").read_text())
    assert len(records) == 4
    rec = next(r for r in records if r["instance_id"] == "instances_tiny/semi_en/1")
    assert rec["player_a_proposal"] == [1, 1, 0] and rec["player_b_proposal"] == [0, 0, 1]
    assert (rec["score_a"], rec["score_b"], rec["success"]) == (5, 10, True)
    assert [t["player"] for t in rec["dialogue"]] == ["a", "b"]
    assert rec["dialogue"][0]["raw_text"].endswith("[Proposal: 1 cup, 1 pen, 0 coins]")
    assert rec["clembench"]["Main Score"] == 90.0 and rec["clembench"]["pareto_improvement"] == 1
    assert rec["clembench"]["max_pareto_improvement"] == 10 and rec["distbench"]["main_score"] == 90.0
    summary = json.loads((tmp_path / "c" / "export" / "summary.json").read_text())
    assert {g["clemscore"] for g in summary["groups"]} == {45.0, 93.75, 100.0}


def test_export_of_an_unreadable_run_of_another_family_is_one_line(tmp_path, capsys):
    run = tmp_path / "f"
    (run / "_commits").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"run_id": "f", "family": "nosuchfamily"}))
    with pytest.raises(SystemExit) as exit_:
        main(["export", str(run)])
    err = capsys.readouterr().err
    assert exit_.value.code != 0 and "unknown game family 'nosuchfamily'" in err
    assert len(err.strip().splitlines()) == 1 and not (run / "export").exists()


def test_spec_section_takes_the_instance_files():
    out = section({"instances": str(TINY), "modes": ["semi"]})
    assert out["modes"] == ["semi"] and out["langs"] == ["en", "de"]
    with pytest.raises(ValueError, match="instances"):
        section({"instances": str(DATA / "missing.json")})


@pytest.mark.parametrize("change, match", [
    (lambda g: g.update(item_counts=[1, 1]), "item_counts has 2 entries"),
    (lambda g: g.update(player_a_values=[1, -1, 3]), "must not be negative"),
    (lambda g: g.update(game_id="x"), "game_id must be an integer"),
])
def test_a_bad_instance_is_named(tmp_path, change, match):
    data = json.loads(TINY.read_text())
    change(data["experiments"][0]["game_instances"][0])
    path = tmp_path / "instances_bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=match):
        load_instances(path)
