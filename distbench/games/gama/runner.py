"""Plays one ``gama`` shard: each game is a coroutine of one event loop that asks its next
round as soon as its own answers of the last are back (no lockstep: one game's rules, prompts
and rows run while the others' calls are in flight); a round asks the game's acting seats
(scripted seats answer at once), the Pirate Game in two steps (proposers, then voters). The
requests that the games send in the same turn of the loop go to a model as one batch (so a
local model still answers a whole round at once). Runs in a Ray task or in the driver; writes
nothing (the rows are built per game at the end and returned as tables; the calls table in
the order of round, step, attempt, game and seat, whatever the order the answers came in).

The rules and GAMA's scores are :mod:`.rules` and :mod:`.scoring`; the words and the parser
:mod:`.prompts`; the re-ask and forfeit policy is stated in :mod:`.plan`.

Determinism: game ``i`` of seed ``s`` has the id ``gama/<game>/<table>/s<s>/g<i>``
(:meth:`GamaRunConfig.game_id`: unique in a run of several tables) and its own seed
``derive_seed("gama", game, s, i)`` (Battle Royale's hits, the same at every table); a model's request seed is
``derive_seed(llm_seed, game_id, round, seat, step, attempt)``; a scripted seat's draws are
in :mod:`.players`. Answers do not depend on how games are cut into shards.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from distbench.games.answers.reasoning import reasoning_budget, reasoning_mode
from distbench.games.base import ShardResult, derive_seed, seat_label, stable_hash
from distbench.games.gama import prompts, rules, scoring
from distbench.games.gama.plan import NAME, GamaRunConfig, GamaShard, GamaSuiteShard
from distbench.games.gama.players import scripted_answer, table_label
from distbench.games.gama.prompts import Parsed
from distbench.games.gama.schema import GAMA_GAMES, GAMA_MOVES, GAMA_PLAYERS, GAMA_ROUNDS
from distbench.llm.base import Backend, BackendSpec, Request, Response, render_transcript
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows

FAILED = "call_failed"
ANSWER_CUE = "Answer:"
"""Completion style: the transcript ends with this cue and the continuation is the answer."""
_GATHER_TURNS = 3
"""Turns of the event loop a model's batch waits for the games woken by the same answers
(each wakes a few turns after the batch it waited on returns) to add their requests."""
_HERE = Path(__file__).parent
HARNESS = stable_hash([NAME, 1] + [(_HERE / f).read_text() for f in
                                   ("prompts.py", "players.py", "runner.py", "rules.py",
                                    "scoring.py")])
"""Hash of what makes the rows (prompts, parser, players, rules, scorer)."""


@dataclass
class _Game:
    config: GamaRunConfig
    seed: int
    index: int
    game_id: str
    state: rules.GameState
    reports: list[list[list[tuple[str, str]]]]  # per seat, per round: messages
    status: str = "ok"
    detail: str = ""
    forfeits: set[int] = field(default_factory=set)
    out_round: dict[int, int] = field(default_factory=dict)  # seat -> round it left
    payoff: list[float] = field(default_factory=list)
    paid: bool = False
    moves: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Ask:
    game: _Game
    seat: int
    proposer: bool = False
    plan: list[int] | None = None
    parsed: Parsed | None = None
    text: str | None = None
    reasks: int = 0
    call_id: str | None = None


class _Caller:
    """Asks the models of a shard and logs their calls."""

    def __init__(self, shard: GamaShard | GamaSuiteShard,
                 backends: Mapping[BackendSpec, Backend]) -> None:
        self.backends = backends
        self.log: dict[BackendSpec, list[tuple[tuple[Any, ...],
                                               tuple[Request, Response, str, str]]]] = {}
        self.calls = 0
        self.order: dict[str, int] = {}  # game id -> its place in the shard (the log's order)
        self._waiting: dict[BackendSpec, list[tuple[list[Request], asyncio.Future[Any]]]] = {}
        self.alone = {s for s in shard.specs if _answers_call_by_call(s)}
        replay = [s for s in shard.specs if s.provider == "replay"]
        self.record = json.loads(Path(replay[0].model).read_text()) if replay else None

    def request(self, ask: _Ask, spec: BackendSpec, step: str, attempt: int) -> Request:
        g = ask.game
        c = g.config
        state = g.state
        cot = reasoning_mode(spec) == "cot"
        history = g.reports[ask.seat]
        if state.game == "goods":
            history = history[-prompts.GOODS_WINDOW:]
        text = words_request(c, state, ask.seat, cot, ask.plan)
        messages = (("system", words_description(c, state, ask.seat)),
                    *(m for rnd in history for m in rnd), ("user", text))
        bound = prompts.answer_bound(state, proposer=ask.proposer)
        completion = spec.style == "completion" and not cot
        if completion:  # a base model continues the transcript after an answer cue
            text, messages = render_transcript(messages) + " " + ANSWER_CUE, None
        return Request(
            prompt=text, messages=messages, stop=("\n",) if completion else None,
            seed=derive_seed(c.llm_seed, g.game_id, state.round + 1, ask.seat, step, attempt),
            task=f"gama.{state.game}@"
                 f"{record_path(state, ask.seat, ask.proposer, self.record)}:{bound}",
            max_tokens=c.max_tokens or (reasoning_budget(spec) if cot else 256),
            temperature=c.temperature)

    async def answer(self, asks: list[_Ask], step: str) -> None:
        """Fills every ask's parsed answer: scripted seats at once, the models' in one batch
        each (concurrently), invalid ones re-asked up to the configured count."""
        pending = []
        for ask in asks:
            player = ask.game.config.seats[ask.seat]
            if isinstance(player, str):
                ask.text = scripted_answer(player, ask.game.state, ask.seat, ask.game.game_id,
                                           proposer=ask.proposer, plan=ask.plan)
                self._parse(ask)
            else:
                pending.append(ask)
        for attempt in range(max((a.game.config.reask for a in asks), default=0) + 1):
            if not pending:
                break
            groups: dict[BackendSpec, list[_Ask]] = {}
            for ask in pending:
                groups.setdefault(ask.game.config.seats[ask.seat], []).append(ask)
            requests = {spec: [self.request(a, spec, step, attempt) for a in group]
                        for spec, group in groups.items()}
            answers = await self._generate(requests)
            retry = []
            for spec, group in groups.items():
                for i, (ask, req, resp) in enumerate(zip(group, requests[spec], answers[spec],
                                                         strict=True)):
                    self.calls += 1
                    ask.reasks = attempt
                    g = ask.game
                    cid = f"{g.game_id}/r{g.state.round + 1}/s{ask.seat}/{step}/a{attempt}"
                    if spec.provider != "dummy":
                        ask.call_id = cid
                        key = (g.state.round, step, attempt, self.order.get(g.game_id, 0), i)
                        self.log.setdefault(spec, []).append((key, (req, resp, cid,
                                                                    g.game_id)))
                    ask.text = resp.text
                    if resp.status != "ok" or resp.text is None:
                        ask.parsed = Parsed(None, FAILED, resp.error or "call failed")
                        continue
                    self._parse(ask, completion=spec.style == "completion"
                                and reasoning_mode(spec) != "cot")
                    if not ask.parsed.ok and attempt < g.config.reask:
                        retry.append(ask)
            pending = retry

    async def _generate(self, requests: dict[BackendSpec, list[Request]]
                        ) -> dict[BackendSpec, list[Response]]:
        """The answers to ``requests``: a model over HTTP's at once (each call returns on its
        own), another's with the other games' requests of this turn of the loop as one batch."""
        loop = asyncio.get_running_loop()
        futures: dict[BackendSpec, Any] = {}
        for spec, reqs in requests.items():
            if spec in self.alone:
                futures[spec] = loop.create_task(self.backends[spec].generate(reqs))
                continue
            futures[spec] = loop.create_future()
            if spec not in self._waiting:
                self._waiting[spec] = []
                loop.create_task(self._send(spec))
            self._waiting[spec].append((reqs, futures[spec]))
        return {spec: await future for spec, future in futures.items()}

    async def _send(self, spec: BackendSpec) -> None:
        """Sends one model's waiting requests as one batch, once the games that were ready in
        the same turn of the loop have added theirs, and hands each its answers."""
        for _ in range(_GATHER_TURNS):
            await asyncio.sleep(0)
        waiting = self._waiting.pop(spec)
        try:
            answers = await self.backends[spec].generate([r for reqs, _ in waiting
                                                          for r in reqs])
        except asyncio.CancelledError:
            for _, future in waiting:
                future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - each waiting game raises it
            for _, future in waiting:
                future.set_exception(exc)
            return
        start = 0
        for reqs, future in waiting:
            future.set_result(answers[start:start + len(reqs)])
            start += len(reqs)

    def sorted_log(self, spec: BackendSpec) -> list[tuple[Request, Response, str, str]]:
        """``spec``'s calls in the order of round, step, attempt, game and seat."""
        return [entry for _, entry in sorted(self.log[spec], key=lambda e: e[0])]

    @staticmethod
    def _parse(ask: _Ask, completion: bool = False) -> None:
        text = ask.text
        if completion and text is not None and not text.lstrip().lower().startswith("answer"):
            text = f"{ANSWER_CUE} {text}"
        ask.parsed = prompts.parse_answer(ask.game.state, ask.seat, text,
                                          proposer=ask.proposer, plan=ask.plan)


def _answers_call_by_call(spec: BackendSpec) -> bool:
    """Whether ``spec``'s model is asked over HTTP, one call per request (a game need not wait
    for the others' answers); the local model, in contrast, answers a batch in one pass.
    The backend class declares it (:attr:`Backend.call_by_call`)."""
    from distbench.llm.registry import backend_class

    try:
        return bool(backend_class(spec.provider).call_by_call)
    except Exception:  # noqa: BLE001 - an unknown provider: batched as before
        return False


def _templates(config: GamaRunConfig) -> Any:
    from distbench.games.gama.templates import open_templates

    return open_templates(config.templates, config.version)


def words_description(config: GamaRunConfig, state: rules.GameState, seat: int) -> str:
    """The system message: distbench's words, or GAMA's from its templates."""
    if not config.templates:
        return prompts.describe(state, seat)
    from distbench.games.gama import templates

    return templates.description(_templates(config), state, seat, config.role)


def words_request(config: GamaRunConfig, state: rules.GameState, seat: int, cot: bool,
                  plan: list[int] | None) -> str:
    """This round's request: distbench's words, or GAMA's (``cot``: its step-by-step prompt)."""
    if not config.templates:
        return prompts.request(state, seat, cot=cot, plan=plan)
    from distbench.games.gama import templates

    return templates.request(_templates(config), state, seat, 1 if cot else None, plan)


def words_report(config: GamaRunConfig, before: rules.GameState,
                 outcome: rules.RoundOutcome, seat: int, answer: Any) -> list[tuple[str, str]]:
    """The round's report as messages: distbench's, or GAMA's parts (the second of each three
    the assistant's canonical echo, as GAMA builds them)."""
    if not config.templates:
        return prompts.report(before, outcome, seat, answer)
    from distbench.games.gama import templates

    parts = templates.report(_templates(config), before, outcome, seat)
    return [("assistant" if i % 3 == 1 else "user", text) for i, text in enumerate(parts)]


def record_path(state: rules.GameState, seat: int, proposer: bool,
                record: Any = None) -> str:
    """Where a GAMA-Bench record keeps this answer (the replay backend's JSON path): the
    seat's own ``player_data`` records of a simultaneous game when ``record`` (the replayed
    JSON) has them (GAMA shuffles some rounds' ``responses`` in place when it reports them, so
    their order is not the seats'), else the round's ``responses`` by seat (Battle Royale: the
    one shot; the Pirate Game: by rank among the living) and the proposer's
    ``gold_distribution``."""
    base = f"round_records.{state.round}"
    if state.game not in ("battle", "pirate") and _holds(record, seat, state.round):
        return f"player_data.{seat}.records.{state.round}"
    if state.game == "battle":
        return f"{base}.responses.0"
    if state.game == "pirate":
        return (f"{base}.gold_distribution" if proposer
                else f"{base}.responses.{list(state.alive).index(seat)}")
    return f"{base}.responses.{seat}"


def _holds(record: Any, seat: int, index: int) -> bool:
    """Whether ``record`` has seat ``seat``'s answer of round ``index`` in its player data."""
    try:
        return index < len(record["player_data"][seat]["records"])
    except (KeyError, IndexError, TypeError):
        return False


def recorded_hit(record: Any, state: rules.GameState) -> bool | None:
    """Battle Royale in replay: whether the record's shot of this round hit (None: draw it)."""
    if record is None or state.game != "battle":
        return None
    try:
        return bool(record["round_records"][state.round]["out"])
    except (KeyError, IndexError, TypeError):
        return None


def _end_if_invalid(game: _Game, asks: list[_Ask]) -> bool:
    """Ends ``game`` when one of its asks has no valid answer (failed call: ``failed``;
    otherwise ``forfeit``, the seats named); True when it ended."""
    bad = [a for a in asks if not a.parsed.ok]
    if not bad:
        return False
    failed = [a for a in bad if a.parsed.status == FAILED]
    if failed:
        game.status, game.detail = "failed", f"seat {failed[0].seat}: {failed[0].parsed.detail}"
    else:
        game.status = "forfeit"
        game.forfeits = {a.seat for a in bad}
        game.detail = "; ".join(f"seat {a.seat}: {a.parsed.status} ({a.parsed.detail})"
                                for a in bad)
    return True


def _move_row(game: _Game, ask: _Ask, role: str,
              outcome: rules.RoundOutcome | None) -> dict[str, Any]:
    player = game.config.seats[ask.seat]
    value = ask.parsed.value if ask.parsed.ok else None
    distance = None
    if ask.parsed.ok:
        distance = rules.move_distance(game.state, ask.seat, value, outcome)
    if ask.parsed.ok and isinstance(value, list):
        answer = str(value).replace(" ", "")
    elif ask.parsed.ok:
        answer = "null" if value is None else str(value)
    else:
        answer = None
    number = (float(value) if ask.parsed.ok and isinstance(value, (int, np.integer))
              and not isinstance(value, bool) else None)
    if game.state.game == "battle":
        number = None
    return {"game": game.state.game, "round": game.state.round + 1, "seat": ask.seat,
            "player": seat_label(player),
            "model": player if isinstance(player, str) else player.model, "role": role,
            "answer_raw": ask.text or "", "answer": answer, "answer_number": number,
            "status": ask.parsed.status, "reasks": ask.reasks,
            "payoff": outcome.payoffs.get(ask.seat) if outcome is not None else None,
            "equilibrium_distance": distance, "call_id": ask.call_id}


def _role(game: str, ask: _Ask) -> str:
    if game == "battle":
        return "shoot"
    if game == "pirate":
        return "propose" if ask.proposer else "vote"
    return "answer"


def _finish_keys(game: _Game) -> list[float]:
    """Each seat's finishing key (higher finishes ahead): the total payoff; Battle Royale and
    the Pirate Game: later eliminations ahead of earlier ones, those still in the game first;
    forfeiting seats last."""
    p = game.state.params
    keys = []
    for seat in range(p.players):
        if seat in game.forfeits:
            keys.append(-np.inf)
        elif game.state.game == "battle":
            keys.append(float(game.out_round.get(seat, p.rounds + 1)))
        elif game.state.game == "pirate" and seat in game.out_round:
            keys.append(-1e9 + game.out_round[seat])
        else:
            keys.append(game.payoff[seat])
    return keys


async def _play_round(caller: _Caller, live: list[_Game]
                ) -> dict[str, tuple[rules.GameState, rules.RoundOutcome]]:
    """Asks and resolves one round of every live game; returns, by game id, the state before
    the round and its outcome for the games that resolved it."""
    first: list[_Ask] = []
    for g in live:
        actors = rules.actors(g.state)
        if g.state.game == "pirate":
            first.append(_Ask(g, actors[0], proposer=True))
        else:
            first.extend(_Ask(g, s) for s in actors)
    await caller.answer(first, "a")
    by_game: dict[str, list[_Ask]] = {}
    for ask in first:
        by_game.setdefault(ask.game.game_id, []).append(ask)
    voters: list[_Ask] = []
    for g in live:
        if g.state.game == "pirate" and by_game[g.game_id][0].parsed.ok:
            plan = by_game[g.game_id][0].parsed.value
            voters.extend(_Ask(g, s, plan=plan) for s in rules.actors(g.state)[1:])
    if voters:
        await caller.answer(voters, "v")
        for ask in voters:
            by_game[ask.game.game_id].append(ask)
    resolved = {}
    for g in live:
        asks = by_game[g.game_id]
        roles = [_role(g.state.game, a) for a in asks]
        if _end_if_invalid(g, asks):
            g.moves.extend(_move_row(g, a, r, None)
                           for a, r in zip(asks, roles, strict=True))
            continue
        before = g.state
        after, outcome = rules.resolve_round(before, {a.seat: a.parsed.value for a in asks},
                                             hits=recorded_hit(caller.record, before))
        g.moves.extend(_move_row(g, a, r, outcome)
                       for a, r in zip(asks, roles, strict=True))
        for seat, value in outcome.payoffs.items():
            g.payoff[seat] += value
            g.paid = True
        for seat in set(before.alive) - set(outcome.survivors):
            g.out_round[seat] = outcome.round
        answers = {a.seat: a.parsed.value for a in asks}
        for seat in before.alive:
            g.reports[seat].append(words_report(g.config, before, outcome, seat,
                                                answers.get(seat)))
        g.state = after
        resolved[g.game_id] = (before, outcome)
    return resolved


def _round_row(outcome: rules.RoundOutcome, before: rules.GameState) -> dict[str, Any]:
    rec = outcome.record
    numbers = [v for v in outcome.answers.values()
               if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
    name = before.game
    target = {"guessing": rec.get("mean_ratio"), "bar": rec.get("go_ratio"),
              "dollar": rec.get("total_proposal"), "goods": rec.get("total_tokens"),
              "auction": rec.get("bid_winner_proposed"),
              "pirate": outcome.extra.get("accept_share")}.get(name)
    if name == "diner":
        target = rec["cheap_player"] / before.params.players
    return {"game": name, "round": outcome.round, "actors": list(outcome.actors),
            "aggregates_json": json.dumps(rec, default=str),
            "mean_answer": float(np.mean(numbers)) if numbers and name != "battle" else None,
            "target": None if target is None else float(target),
            "winners": list(outcome.winners), "survivors": list(outcome.survivors),
            "round_score": scoring.round_score(name, before.params, rec)}


def _table_rows(run_id: str, shard_id: str, g: _Game, rounds: list[dict[str, Any]],
                tables: dict[str, Rows]) -> None:
    """Adds one game's rows to the four tables."""
    c, p = g.config, g.config.params
    ids = {"run_id": run_id, "shard_id": shard_id, "game_id": g.game_id, "game": c.game}
    for m in g.moves:
        tables["gama_moves"].add({**ids, **m})
    for r in rounds:
        tables["gama_rounds"].add({**ids, **r})
    models = [seat_label(s) for s in c.seats]
    keys = _finish_keys(g)
    for seat in range(p.players):
        mine = [m for m in g.moves if m["seat"] == seat]
        dist = [m["equilibrium_distance"] for m in mine if m["equilibrium_distance"] is not None]
        player = c.seats[seat]
        tables["gama_players"].add({
            **ids, "seat": seat, "player": models[seat],
            "model": player if isinstance(player, str) else player.model,
            "moves": len(mine), "valid_moves": sum(m["status"] == "ok" for m in mine),
            "total_payoff": g.payoff[seat] if g.paid or c.game != "battle" else None,
            "mean_distance": float(np.mean(dist)) if dist else None,
            "survived": seat not in g.out_round and seat not in g.forfeits,
            "rank": 1 + sum(k > keys[seat] for k in keys)})
    records = list(g.state.records)
    dist = [m["equilibrium_distance"] for m in g.moves if m["equilibrium_distance"] is not None]
    tables["gama_games"].add({
        **ids, "variant": p.variant, "version": c.version, "run_index": None,
        "run_tag": str(g.index), "source": "play", "params_json": p.to_json(),
        "players": p.players, "rounds": len(records), "model": table_label(c.seats),
        "models": models, "model_label": None, "seed": g.seed,
        "gama_score": scoring.gama_score(c.game, p, records) if records else None,
        "equilibrium_distance": float(np.mean(dist)) if dist else None,
        "invalid_answers": sum(m["status"] != "ok" for m in g.moves),
        "reasks": sum(m["reasks"] for m in g.moves),
        "status": g.status, "detail": g.detail, "harness": HARNESS})


async def _play(caller: _Caller, games: list[_Game],
                round_rows: dict[str, list[dict[str, Any]]]) -> None:
    """Plays ``games`` to their end in one event loop (so an endpoint's client and its
    kept-alive connections serve every round), each game on its own, adding each resolved
    round's row."""
    caller.order = {g.game_id: i for i, g in enumerate(games)}
    await asyncio.gather(*(_play_game(caller, g, round_rows[g.game_id]) for g in games))


async def _play_game(caller: _Caller, game: _Game, rows: list[dict[str, Any]]) -> None:
    """Plays one game's rounds in order until it ends."""
    while game.status == "ok" and not game.state.done:
        for before, outcome in (await _play_round(caller, [game])).values():
            rows.append(_round_row(outcome, before))


@contextmanager
def _fewer_collections() -> Any:
    """Python's garbage collector run less often while a shard plays: its conversations make
    many small objects that live to the end, and each full collection walks them all (about a
    sixth of the shard's CPU with the default thresholds; the thresholds come back after)."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], _GC_YOUNG), before[1], max(before[2], _GC_OLD))
    try:
        yield
    finally:
        gc.set_threshold(*before)


_GC_YOUNG, _GC_OLD = 50_000, 100
"""The collector's thresholds while a shard plays (allocations before a young collection;
middle collections before a full one)."""


def run_shard(shard: GamaShard | GamaSuiteShard,
              backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard``'s games, every part's together (see the module docstring)."""
    with _fewer_collections():
        return _run_shard(shard, backends)


def _run_shard(shard: GamaShard | GamaSuiteShard,
               backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    games = []
    for c, seed, start, stop in shard.parts:
        for i in range(start, stop):
            state = rules.new_game(c.game, c.params, seed=derive_seed(NAME, c.game, seed, i))
            games.append(_Game(c, seed, i, c.game_id(seed, i), state,
                               [[] for _ in range(c.params.players)],
                               payoff=[0.0] * c.params.players))
    caller = _Caller(shard, backends)
    round_rows: dict[str, list[dict[str, Any]]] = {g.game_id: [] for g in games}
    asyncio.run(_play(caller, games, round_rows))
    tables = {name: Rows(schema) for name, schema in (
        ("gama_games", GAMA_GAMES), ("gama_rounds", GAMA_ROUNDS), ("gama_moves", GAMA_MOVES),
        ("gama_players", GAMA_PLAYERS))}
    for g in games:
        _table_rows(shard.run_id, shard.shard_id, g, round_rows[g.game_id], tables)
    out = {name: (shard.shard_id, rows.table()) for name, rows in tables.items()}
    calls = [calls_table(shard.run_id, shard.shard_id, spec, "gama",
                         *map(list, zip(*caller.sorted_log(spec), strict=True)))
             for spec in caller.log]
    if calls:
        out["calls"] = (shard.shard_id, pa.concat_tables(calls))
    statuses = [g.status for g in games]
    stats = {"games": len(games), "forfeits": statuses.count("forfeit"),
             "call_failed": statuses.count("failed"), "calls": caller.calls}
    return ShardResult(shard_id=shard.shard_id, tables=out, stats=stats)
