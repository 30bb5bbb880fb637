"""Episodes end to end in process: hand-computed scripted games, bad answers, determinism."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pytest

from distbench.games.negotiation import runner
from distbench.games.negotiation.instances import Instance
from distbench.games.negotiation.plan import NegotiationRunConfig, plan_shards
from distbench.games.negotiation.summary import SUMMARY_SQL, negotiation_summary
from distbench.llm.base import Backend, BackendSpec, Request, Response

# Hand-made instance: hats (2), balls (1), books (3); a values 2, 6, 0; b values 1, 2, 2.
HAND = Instance("neg/s0/i0", 0, 0, (0, 1, 2), (2, 1, 3), (2, 6, 0), (1, 2, 2))


def _config(**kw) -> NegotiationRunConfig:
    base = dict(seeds=(0,), num_games=1, modes=("semi",), langs=("en",),
                player_a="scripted:fair", player_b="scripted:fair")
    base.update(kw)
    return NegotiationRunConfig(**base)


def _play(cfg, backends=None, instance=HAND, monkeypatch=None):
    if monkeypatch is not None and instance is not None:
        monkeypatch.setattr(runner, "generate_instances", lambda seed, start, stop: [instance])
    (shard,) = plan_shards(cfg, "r")
    result = runner.run_shard(shard, backends or {})
    return result, {n: t.to_pylist() for n, (_, t) in result.tables.items()}


def test_fair_against_fair_by_hand(monkeypatch):
    _, tabs = _play(_config(both_seat_orders=False), monkeypatch=monkeypatch)
    (ep,) = tabs["episodes"]
    # a: halves (1, 0, 1), odd types by a's value: balls (6) then books (0); a takes balls.
    # b: halves (1, 0, 1), odd types by b's value: balls (2), books (2, later index); b gives
    #    the first (balls) and takes books.
    assert ep["proposal_a"] == [1, 1, 1] and ep["proposal_b"] == [1, 0, 2]
    assert (ep["score_a"], ep["score_b"]) == (2 + 6, 1 + 4)
    assert ep["success"] and not ep["lose"] and not ep["aborted"]
    # Best split (10, 6): hats and the ball to a, books to b; from (8, 5) the gain is 2.
    assert ep["max_sum_score"] == 16 and ep["max_pareto_improvement"] == 2
    assert ep["pareto_optimal"] is False and ep["main_score"] == 80.0
    assert ep["sum_score_ratio"] == 13 / 16 and ep["comp_score"] == 0.3
    assert ep["num_turns"] == 2 and ep["num_calls"] == 0
    kinds = [(t["player"], t["kind"], t["parse_status"]) for t in tabs["turns"]]
    assert kinds == [("a", "message", "proposal"), ("b", "must_propose", "proposal")]
    assert "calls" not in tabs


def test_greedy_against_greedy_loses_by_hand(monkeypatch):
    _, tabs = _play(_config(player_a="scripted:greedy", player_b="scripted:greedy"),
                    monkeypatch=monkeypatch)
    for ep in tabs["episodes"]:  # both seat orders
        # a asks (2, 1, 0), b asks (2, 1, 3): hats and the ball conflict.
        assert ep["proposal_a"] == [2, 1, 0] and ep["proposal_b"] == [2, 1, 3]
        assert ep["lose"] and (ep["score_a"], ep["score_b"]) == (0, 0)
        assert ep["main_score"] == 0.0 and ep["max_pareto_improvement"] == 10
        assert ep["pareto_optimal"] is False and ep["sum_score_ratio"] == 0.0
    assert [e["seat_order"] for e in tabs["episodes"]] == [0, 1]


def test_greedy_against_fair_in_german(monkeypatch):
    cfg = _config(player_a="scripted:greedy", langs=("de",), both_seat_orders=False)
    _, tabs = _play(cfg, monkeypatch=monkeypatch)
    (ep,) = tabs["episodes"]
    assert ep["item_types"] == ["Hüte", "Bälle", "Bücher"]
    assert "[Vorschlag: 2 Hüte, 1 Ball, 0 Bücher]" in tabs["turns"][0]["raw_text"]
    # greedy a (2, 1, 0) + fair b (1, 0, 2): hats conflict.
    assert ep["lose"]


def test_scripted_runs_are_deterministic_and_random_uses_llm_seed():
    cfg = _config(player_a="scripted:random", player_b="scripted:random", num_games=4,
                  modes=("semi", "coop", "comp"), langs=("en", "de", "it"))
    _, one = _play(cfg)
    _, two = _play(cfg)
    assert one == two and len(one["episodes"]) == 4 * 3 * 3 * 2
    _, other = _play(_config(player_a="scripted:random", player_b="scripted:random",
                             num_games=4, modes=("semi", "coop", "comp"),
                             langs=("en", "de", "it"), llm_seed=1))
    assert [e["proposal_a"] for e in other["episodes"]] != [e["proposal_a"] for e in one["episodes"]]


class ScriptedBackend(Backend):
    """Answers from a function of the request; records the batch sizes."""

    def __init__(self, spec, answer):
        super().__init__(spec)
        self.answer = answer
        self.batches: list[int] = []

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.batches.append(len(requests))
        return [self.answer(r) for r in requests]


SPEC = BackendSpec("fake", "m")


def _by_mode(request: Request) -> Response:
    first = request.messages[0][1]
    if "for yourself" in first:  # semi: free text, also when a proposal is required
        return Response(text="Hello! What do you value?")
    if "sum of both" in first:  # coop: an invented item
        return Response(text="Deal. [Proposal: 1 unicorn]")
    return Response(text="[Proposal: 9 hats]")  # comp: more than exists


def test_bad_answers_abort_with_their_reason_and_the_shard_carries_on(monkeypatch):
    fake = ScriptedBackend(SPEC, _by_mode)
    cfg = _config(player_a=SPEC, modes=("semi", "coop", "comp"))
    result, tabs = _play(cfg, {SPEC: fake}, monkeypatch=monkeypatch)
    reasons = {(e["mode"], e["seat_order"]): (e["abort_reason"], e["abort_player"])
               for e in tabs["episodes"]}
    # Order 0: the model is seat a; order 1: fair is seat a and proposes first.
    assert reasons == {
        ("semi", 0): ("free_text_after_proposal", "a"),
        ("semi", 1): ("free_text_after_proposal", "b"),
        ("coop", 0): ("unknown_item", "a"),
        ("coop", 1): ("unknown_item", "b"),
        ("comp", 0): ("too_many_items", "a"),
        ("comp", 1): ("too_many_items", "b"),
    }
    for e in tabs["episodes"]:
        assert e["aborted"] and e["main_score"] is None and e["score_a"] is None
        assert e["pareto_optimal"] is None and not e["success"] and not e["lose"]
    assert result.stats["aborted"] == 6
    # Every model answer has its call row; scripted answers have none.
    model_turns = [t for t in tabs["turns"] if t["player_label"] == "fake:m"]
    assert all(t["call_id"] for t in model_turns)
    assert {c["call_id"] for c in tabs["calls"]} == {t["call_id"] for t in model_turns}
    assert {c["trial_id"] for c in tabs["calls"]} <= {e["episode_id"] for e in tabs["episodes"]}
    # One generate call per round, batching every episode waiting for the model.
    assert fake.batches[0] == 3
    # The scripted player's proposal is secret: the model is only told that it was made.
    fair_texts = [t["raw_text"] for t in tabs["turns"] if t["player_label"] == "scripted:fair"]
    prompts = [c["prompt_text"] for c in tabs["calls"]]
    assert fair_texts and not any(f in p for f in fair_texts for p in prompts)
    assert any("has made a secret final proposal" in p for p in prompts)


def test_time_out_asks_both_and_missing_proposals_abort(monkeypatch):
    def chatty(request):
        if "No messages left" in request.messages[-1][1]:
            return Response(text="I still want to talk.")
        return Response(text="Let us keep talking.")

    fake = ScriptedBackend(SPEC, chatty)
    cfg = _config(player_a=SPEC, player_b=SPEC, max_messages=2, both_seat_orders=False)
    _, tabs = _play(cfg, {SPEC: fake}, monkeypatch=monkeypatch)
    (ep,) = tabs["episodes"]
    assert ep["abort_reason"] == "no_proposal" and ep["abort_player"] == "a"
    kinds = [(t["player"], t["kind"]) for t in tabs["turns"]]
    assert kinds == [("a", "message"), ("b", "message"), ("a", "message"), ("b", "message"),
                     ("a", "timeout_prompt"), ("b", "timeout_prompt")]
    assert fake.batches == [1, 1, 1, 1, 2]


def test_time_out_proposals_are_scored_and_never_relayed(monkeypatch):
    seen: list[str] = []

    def polite(request):
        seen.append(request.messages[-1][1])
        if "No messages left" in request.messages[-1][1]:
            hats = "1 hat" if "hats: 2 points" in request.messages[0][1] else "1 hat, 3 books"
            return Response(text=f"[Proposal: {hats}]")
        return Response(text="Hi")

    fake = ScriptedBackend(SPEC, polite)
    cfg = _config(player_a=SPEC, player_b=SPEC, max_messages=1, both_seat_orders=False)
    _, tabs = _play(cfg, {SPEC: fake}, monkeypatch=monkeypatch)
    (ep,) = tabs["episodes"]
    assert ep["success"] and ep["proposal_a"] == [1, 0, 0] and ep["proposal_b"] == [1, 0, 3]
    assert (ep["score_a"], ep["score_b"]) == (2, 7)
    assert "The other player says: Hi" in seen[1]
    assert not any("1 hat, 3 books" in s for s in seen)


def test_a_failed_call_aborts_only_its_episode(monkeypatch):
    def flaky(request):
        if "sum of both" in request.messages[0][1]:
            return Response(text=None, status="failed", error="HTTP 503")
        return Response(text="Fine. [Proposal: 1 hat]")

    cfg = _config(player_a=SPEC, modes=("semi", "coop"), both_seat_orders=False)
    result, tabs = _play(cfg, {SPEC: ScriptedBackend(SPEC, flaky)}, monkeypatch=monkeypatch)
    by_mode = {e["mode"]: e for e in tabs["episodes"]}
    assert by_mode["coop"]["abort_reason"] == "call_failed"
    assert by_mode["semi"]["success"]
    failed = [t for t in tabs["turns"] if t["parse_status"] == "call_failed"]
    assert len(failed) == 1 and failed[0]["raw_text"] is None
    assert result.stats["call_failed"] == 1
    assert {c["status"] for c in tabs["calls"]} == {"ok", "failed"}


def test_summary_sql_file_matches_the_summary_function(monkeypatch):
    from pathlib import Path

    cfg = _config(player_a="scripted:greedy", num_games=6, modes=("semi", "comp"),
                  langs=("en", "it"))
    result = runner.run_shard(plan_shards(cfg, "r")[0], {})
    con = duckdb.connect()
    con.register("episodes", result.tables["episodes"][1])
    records = negotiation_summary(con)
    path = Path(__file__).resolve().parents[3] / "queries" / "negotiation_summary.sql"
    assert path.read_text() == SUMMARY_SQL
    assert len(records) == 2 * 2 * 2  # players x modes x langs
    for r in records:
        assert r["episodes"] == 6 * 2
        assert r["success_rate"] + r["lose_rate"] + r["aborted_rate"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(modes=("semi", "war")), "modes"),
        (dict(langs=("fr",)), "langs"),
        (dict(player_a="scripted:nice"), "player_a"),
        (dict(player_b=BackendSpec("dummy", "random")), "player_b"),
        (dict(seeds=()), "seeds"),
        (dict(num_games=0), "num_games"),
        (dict(max_messages=0), "max_messages"),
        (dict(shard_episodes=0), "shard_episodes"),
    ],
)
def test_bad_config_names_the_field(kw, match):
    with pytest.raises(ValueError, match=match):
        _config(**kw)


def test_shards_are_stable_and_cover_every_episode():
    cfg = _config(player_a=SPEC, player_b="scripted:fair", seeds=(1, 2), num_games=7,
                  modes=("semi", "coop"), langs=("en", "de", "it"), shard_episodes=30)
    shards = plan_shards(cfg, "r")
    assert shards == plan_shards(cfg, "other-run")  # run_id does not decide equality
    assert [s.shard_id for s in shards] == [s.shard_id for s in plan_shards(cfg)]
    assert sum(s.num_units for s in shards) == 2 * 7 * 2 * 3 * 2
    assert all(s.specs == (SPEC,) for s in shards)
    assert len({s.shard_id for s in shards}) == len(shards)
    assert cfg.identity()["player_a"] == SPEC.identity()
    assert _config(player_b=None).player_b == "scripted:fair"
