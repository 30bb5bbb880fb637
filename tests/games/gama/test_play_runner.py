"""The gama family's play, in process: the dummy plays all eight games; scripted equilibrium
tables score as GAMA's formulas say; the re-ask policy (counted re-asks, forfeit by default);
the conversation's canonical echoes and Public Goods' window; one batch per model and round;
determinism; one-line errors for bad options."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest

from distbench.games.gama import rules
from distbench.games.gama.command import build_config
from distbench.games.gama.plan import GamaRunConfig, plan_shards
from distbench.games.gama.runner import run_shard
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.registry import build_backend, make_spec

DUMMY = make_spec("dummy")


def _play(config: GamaRunConfig, backends=None):
    shard = plan_shards(config, "r")[0]
    backends = backends or {s: build_backend(s) for s in config.specs()}
    result = run_shard(shard, backends)
    return {name: table.to_pylist() for name, (_, table) in result.tables.items()}, result


def _options(**extra):
    return {"seeds": (42,), "num_games": 2, "llm_seed": 0, "temperature": 1.0,
            "max_tokens": None, "reask": 0, **extra}


@pytest.mark.parametrize("game", rules.GAME_NAMES)
def test_the_dummy_plays_every_game_with_rows_for_every_move(game):
    config = build_config(_options(game=game, gama_options=("rounds=5",)), DUMMY)
    tables, result = _play(config)
    games = tables["gama_games"]
    assert len(games) == 2 and {g["game"] for g in games} == {game}
    for g in games:
        assert g["status"] in ("ok", "forfeit")
        mine = [m for m in tables["gama_moves"] if m["game_id"] == g["game_id"]]
        assert g["invalid_answers"] == sum(m["status"] != "ok" for m in mine)
        assert g["rounds"] == sum(r["game_id"] == g["game_id"] for r in tables["gama_rounds"])
        if g["status"] == "forfeit":  # the round of the invalid answer has its raw text
            bad = [m for m in mine if m["status"] != "ok"]
            assert bad and all(m["answer_raw"].startswith("Answer:") for m in bad)
            assert g["detail"]
        seats = [p for p in tables["gama_players"] if p["game_id"] == g["game_id"]]
        assert [p["seat"] for p in seats] == list(range(10))
    assert result.stats["games"] == 2


@pytest.mark.parametrize("game", rules.GAME_NAMES)
def test_a_table_of_equilibrium_players_completes_every_game(game):
    config = build_config(_options(game=game, seat_players="scripted:equilibrium"), DUMMY)
    tables, _ = _play(config)
    for g in tables["gama_games"]:
        assert g["status"] == "ok" and g["invalid_answers"] == 0, g["detail"]
        assert g["gama_score"] is not None
    expected = {"guessing": 100.0, "goods": 100.0, "dollar": 100.0}
    if game in expected:
        assert all(g["gama_score"] == pytest.approx(expected[game])
                   for g in tables["gama_games"])
    if game == "pirate":  # the equilibrium plan passes at once, every vote by GAMA's rule
        (g, _) = tables["gama_games"]
        assert g["rounds"] == 1 and g["gama_score"] == pytest.approx(100.0)


class _Scripted(Backend):
    """Answers from a list of texts in turn, recording every request."""

    in_process = True

    def __init__(self, spec: BackendSpec, texts: Sequence[str] | Callable[[Request], str]) -> None:
        super().__init__(spec)
        self.texts = texts if callable(texts) else list(texts)
        self.batches: list[list[Request]] = []

    def _next(self, request: Request) -> str:
        if callable(self.texts):
            return self.texts(request)
        return self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]

    async def generate(self, requests):
        self.batches.append(list(requests))
        return [Response(text=self._next(r)) for r in requests]


def _scripted_backend(texts):
    spec = make_spec("dummy")
    return spec, _Scripted(spec, texts)


def test_an_invalid_answer_forfeits_the_game_by_default_and_reasks_are_counted():
    spec, backend = _scripted_backend(["I pick fifty"] + ["Answer: 30"] * 200)
    base = build_config(_options(game="guessing", num_games=1,
                                 gama_options=("players=3", "rounds=2")), spec)
    tables, _ = _play(base, {spec: backend})
    (g,) = tables["gama_games"]
    assert g["status"] == "forfeit" and g["rounds"] == 0 and g["gama_score"] is None
    bad = [m for m in tables["gama_moves"] if m["status"] != "ok"]
    assert [(m["seat"], m["status"], m["answer_raw"]) for m in bad] == [
        (0, "no_answer", "I pick fifty")]
    ranks = {p["seat"]: p["rank"] for p in tables["gama_players"]}
    assert ranks[0] == 3  # the forfeiting seat finishes last
    spec, backend = _scripted_backend(["I pick fifty"] + ["Answer: 30"] * 200)
    again = build_config(_options(game="guessing", num_games=1, reask=2,
                                  gama_options=("players=3", "rounds=2")), spec)
    tables, result = _play(again, {spec: backend})
    (g,) = tables["gama_games"]
    assert g["status"] == "ok" and g["rounds"] == 2 and g["reasks"] == 1
    assert [m["reasks"] for m in tables["gama_moves"] if m["round"] == 1] == [1, 0, 0]
    assert result.stats["calls"] == 3 * 2 + 1
    # round 1: one batch of the three seats, then one re-ask of seat 0 alone
    assert [len(b) for b in backend.batches] == [3, 1, 3]


def test_the_conversation_keeps_canonical_echoes_not_raw_text():
    spec, backend = _scripted_backend(["Let me think... 30 seems fine.\nAnswer: 30"])
    config = build_config(_options(game="guessing", num_games=1,
                                   gama_options=("players=2", "rounds=3")), spec)
    _play(config, {spec: backend})
    last = backend.batches[-1][0].messages
    roles = [r for r, _ in last]
    assert roles == ["system"] + ["user", "assistant", "user"] * 2 + ["user"]
    echoes = [c for r, c in last if r == "assistant"]
    assert echoes == ["Answer: 30", "Answer: 30"]
    assert "Round 3." in last[-1][1]


def test_public_goods_keeps_a_window_of_ten_rounds():
    spec, backend = _scripted_backend(["Answer: 5"])
    config = build_config(_options(game="goods", num_games=1,
                                   gama_options=("players=2", "rounds=13")), spec)
    _play(config, {spec: backend})
    last = backend.batches[-1][0].messages
    assert sum(r == "assistant" for r, _ in last) == 10
    assert "Round 3:" in last[1][1]  # rounds 3..12 kept for round 13


def test_every_round_asks_all_seats_of_all_live_games_in_one_batch():
    spec, backend = _scripted_backend(["Answer: 10"])
    config = build_config(_options(game="dollar", num_games=4,
                                   gama_options=("rounds=3",)), spec)
    _play(config, {spec: backend})
    assert [len(b) for b in backend.batches] == [40, 40, 40]


def test_a_pirate_round_asks_the_proposers_then_the_voters():
    spec, backend = _scripted_backend(
        lambda r: "Answer: 96, 0, 1, 0, 1, 0, 1, 0, 1, 0" if "propose how" in r.prompt
        else "Answer: accept")
    config = build_config(_options(game="pirate", num_games=2), spec)
    tables, _ = _play(config, {spec: backend})
    assert [len(b) for b in backend.batches] == [2, 18]
    assert all(g["status"] == "ok" and g["rounds"] == 1 for g in tables["gama_games"])


def test_the_same_configuration_plays_the_same_rows():
    config = build_config(_options(game="battle", seat_players="dummy,scripted:random"), DUMMY)
    first, _ = _play(config)
    second, _ = _play(config)
    assert first == second


def test_a_mixed_table_seats_players_in_turn_and_ranks_them():
    config = build_config(_options(game="dollar", gama_options=("players=4",),
                                   seat_players="dummy,scripted:equilibrium,scripted:fixed=40/10"),
                          DUMMY)
    assert [s if isinstance(s, str) else s.provider for s in config.seats] == [
        "dummy", "scripted:equilibrium", "scripted:fixed=40/10", "dummy"]
    tables, _ = _play(config)
    fixed = [m["answer"] for m in tables["gama_moves"] if m["seat"] == 2]
    assert fixed[:2] == ["40", "10"]
    assert {g["model"] for g in tables["gama_games"]} == {"mixed"}


@pytest.mark.parametrize(("options", "message"), [
    ({"game": "chess"}, "--game chess: not a gama game"),
    ({"game": "guessing", "gama_options": ("ratio=abc",)}, "--option ratio=abc"),
    ({"game": "guessing", "gama_options": ("colour=red",)}, "--option colour"),
    ({"game": "guessing", "gama_options": ("ratio",)}, "give NAME=VALUE"),
    ({"game": "guessing", "seat_players": "scripted:nobody"}, "--players 'scripted:nobody'"),
    ({"game": "guessing", "gama_options": ("players=2",), "seat_players": "dummy,dummy,dummy"},
     "3 players for 2 seats"),
    ({"game": "guessing", "gama_options": ("version=v9",)}, "version=v9"),
])
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")) as info:
        build_config(_options(**options), DUMMY)
    assert "\n" not in str(info.value)


def test_parameters_reach_the_rules_and_the_rows():
    config = build_config(_options(game="bar", num_games=1,
                                   gama_options=("ratio=1/2", "mode=explicit", "rounds=3")),
                          DUMMY)
    tables, _ = _play(config)
    (g,) = tables["gama_games"]
    params = json.loads(g["params_json"])
    assert params["ratio"] == 0.5 and params["mode"] == "explicit"
    assert g["variant"] == "explicit"


def test_asyncio_gather_of_several_models_in_one_round():
    a, b = make_spec("dummy"), make_spec("dummy", "other")
    backends = {a: _Scripted(a, ["Answer: 1"]), b: _Scripted(b, ["Answer: 2"])}
    config = GamaRunConfig(game="guessing", seats=(a, b) * 5, num_games=1,
                           options=(("rounds", "2"),))
    tables, _ = _play(config, backends)
    assert [len(x.batches) for x in backends.values()] == [2, 2]
    assert {m["answer"] for m in tables["gama_moves"] if m["seat"] % 2} == {"2"}


def test_mixed_tables_rate_their_players_by_plackett_luce_from_finishing_orders():
    import duckdb

    from distbench.games.gama.summary import format_summary, summarize
    from distbench.report.ratings import bootstrap_plackett_luce

    config = build_config(_options(game="dollar", num_games=6, gama_options=("rounds=2",),
                                   seat_players="scripted:fixed=10,scripted:fixed=5,"
                                                "scripted:random"), DUMMY)
    shard = plan_shards(config, "r")[0]
    result = run_shard(shard, {})
    con = duckdb.connect()
    for name, (_, table) in result.tables.items():
        con.register(name, table)
    records = summarize(con)
    ratings = [r for r in records if r["kind"] == "rating"]
    assert [r["player"] for r in ratings][0] == "scripted:fixed=10"
    assert all(r["strength_lo"] <= r["strength"] <= r["strength_hi"] for r in ratings)
    # the same fit from the finishing orders read back
    labels = sorted(r["player"] for r in ratings)
    rows = con.execute("select list(player order by seat), list(rank order by seat) "
                       "from gama_players group by game_id order by game_id").fetchall()
    games = [([labels.index(p) for p in ps], [-float(x) for x in ranks]) for ps, ranks in rows]
    fit = bootstrap_plackett_luce(3, games, seed=0, resamples=500)
    assert {r["player"]: r["strength"] for r in ratings} == pytest.approx(
        dict(zip(labels, fit.theta.tolist(), strict=True)))
    assert "Plackett-Luce strength" in format_summary(records)


def test_a_completion_style_model_continues_after_an_answer_cue():
    spec = make_spec("dummy", style="completion")
    backend = _Scripted(spec, [" 42 because"])
    config = build_config(_options(game="guessing", num_games=1,
                                   gama_options=("players=2", "rounds=2")), spec)
    tables, _ = _play(config, {spec: backend})
    first = backend.batches[0][0]
    assert first.messages is None and first.prompt.endswith("Assistant: Answer:")
    assert first.stop == ("\n",)
    assert {m["answer"] for m in tables["gama_moves"]} == {"42"}


class _SlowFirst(Backend):
    """A model over HTTP (its spec's provider) whose first call returns after ``delay``
    seconds and every other at once; records the order calls start and end in."""

    def __init__(self, spec: BackendSpec, delay: float) -> None:
        super().__init__(spec)
        self.delay = delay
        self.events: list[tuple[str, int]] = []
        self.sizes: list[int] = []

    async def generate(self, requests):
        import asyncio

        call = len(self.sizes)
        self.sizes.append(len(requests))
        self.events.append(("start", call))
        await asyncio.sleep(self.delay if call == 0 else 0)
        self.events.append(("end", call))
        return [Response(text="Answer: 10") for _ in requests]


def _http_config(delay: float):
    spec = make_spec("llamacpp", "mock", base_url="http://127.0.0.1:9")
    backend = _SlowFirst(spec, delay)
    config = build_config(_options(game="dollar", num_games=2, gama_options=("rounds=3",)),
                          spec)
    return config, spec, backend


def test_a_game_over_http_plays_its_rounds_without_waiting_for_the_others():
    config, spec, backend = _http_config(0.3)
    slow, _ = _play(config, {spec: backend})
    assert backend.sizes == [10] * 6  # one call per game and round, not one per round
    # the other game played its three rounds while the first game's first call was out
    other = [e for c in (1, 2, 3) for e in (("start", c), ("end", c))]
    assert backend.events[:8] == [("start", 0), *other, ("end", 0)]
    config, spec, quick = _http_config(0.0)
    fast, _ = _play(config, {spec: quick})
    assert slow == fast  # rows and the calls table's order do not depend on the timing
