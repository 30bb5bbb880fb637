"""GAMA-Bench's eight games as pure, deterministic state machines.

The rules and default parameters are GAMA-Bench's (Huang et al., ICLR 2025; GAMES.md §8),
written here from their description; nothing here asks a model or parses text. A game is:

- ``new_game(name, params=None, seed=0) -> GameState``;
- ``actors(state) -> list[int]``: the seats asked this round, in GAMA's asking order (every
  seat; Battle Royale: the shooter; Pirate Game: the proposer, then the living voters, who
  need the plan first: ask ``actors(state)[0]`` then the rest);
- ``resolve_round(state, answers, hits=None) -> (GameState, RoundOutcome)``: the round
  resolved from one parsed, valid answer per actor (``answers[seat]``), returning the new state
  (the old one is unchanged) and the outcome: GAMA's round record (``outcome.record``, the
  same keys GAMA stores), payoffs, winners, survivors;
- ``equilibrium(name, params)`` and ``move_distance(state, seat, answer)``: what distbench adds.

Answers per game: guessing, dollar, goods, auction: an int; bar: ``'go'``/``'stay'``; diner:
any string (GAMA: only exactly ``'cheap'`` is the cheap dish); battle: the target seat (int)
or None for a deliberate miss; pirate: the proposer's plan (a list of golds from the proposer
to the most junior living pirate) and the voters' ``'accept'``/``'reject'``.

Randomness: the auction's valuations and tie-break come from ``random.Random(seed0 + t - 1)``
as GAMA draws them (``seed0`` = 42); Battle Royale's hits come from ``hits`` (injected, e.g.
from a record) or else a numpy Generator from ``SeedSequence([state.seed, round])``.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, fields, replace
from fractions import Fraction
from typing import Any

import numpy as np

GAME_NAMES: tuple[str, ...] = ("guessing", "bar", "dollar", "goods", "diner", "auction",
                               "battle", "pirate")
"""distbench's names of the eight games, in GAMA's leaderboard order."""

GAMA_LABELS: dict[str, str] = {
    "guessing": "Guessing", "bar": "Bar", "dollar": "Dollar", "goods": "Goods",
    "diner": "Diner", "auction": "Auction", "battle": "Battle", "pirate": "Pirate"}
"""The game's column on GAMA's leaderboard."""

GAMA_FOLDERS: dict[str, str] = {
    "guessing": "guessing_game", "bar": "bar_game", "dollar": "divide_dollar",
    "goods": "public_goods", "diner": "diner_dilemma", "auction": "sealed_bid_auction",
    "battle": "battle_royale", "pirate": "pirate_game"}
"""The game's folder in GAMA's ``prompt_template/`` (and, with a variant, ``raw_results/``)."""


@dataclass(frozen=True)
class Params:
    """Parameters every game has: seats and rounds (GAMA: 10 and 20)."""

    players: int = 10
    rounds: int = 20

    def to_json(self) -> str:
        """The parameters as JSON (sorted keys), for ``gama_games.params_json``."""
        return json.dumps(asdict(self), sort_keys=True)

    @property
    def variant(self) -> str:
        """The game's mode for ``gama_games.variant`` ('' when the game has none)."""
        return ""


@dataclass(frozen=True)
class GuessingParams(Params):
    """Guess ``ratio`` of the average: integers ``min``..``max``."""

    min: int = 0
    max: int = 100
    ratio: float = 2 / 3
    ratio_str: str = "2/3"


@dataclass(frozen=True)
class BarParams(Params):
    """El Farol Bar: going pays ``max`` if the go share is at most ``ratio`` (capacity), else
    ``min``; staying home pays ``home``. ``mode``: 'implicit' (those who stayed learn only their
    own payoff) or 'explicit'."""

    min: int = 0
    max: int = 10
    home: int = 5
    ratio: float = 0.6
    ratio_str: str = "60%"
    mode: str = "implicit"

    @property
    def variant(self) -> str:
        return self.mode


@dataclass(frozen=True)
class DollarParams(Params):
    """Divide the Dollar: each gets its bid iff the bids sum to at most ``golds``."""

    golds: int = 100


@dataclass(frozen=True)
class GoodsParams(Params):
    """Public Goods: ``tokens`` a round (``reset``: refilled each round), the pot multiplied by
    ``multiplier`` (GAMA's ``ratio``) and split equally."""

    tokens: int = 20
    multiplier: float = 2.0
    reset: bool = True


@dataclass(frozen=True)
class DinerParams(Params):
    """Diner's Dilemma: a cheap and a costly dish (price, utility); the bill split equally."""

    cheap_cost: int = 10
    cheap_utility: int = 15
    exp_cost: int = 20
    exp_utility: int = 20


@dataclass(frozen=True)
class AuctionParams(Params):
    """Sealed-bid auction: valuations ``random.sample(range(valuation_min, valuation_max +
    interval, interval), players)`` after ``random.seed(seed + t - 1)``; ``mode`` 'first' (the
    winner pays its bid) or 'second' (the second-highest bid)."""

    valuation_min: int = 0
    valuation_max: int = 200
    interval: int = 10
    mode: str = "first"
    seed: int = 42

    @property
    def variant(self) -> str:
        return self.mode


@dataclass(frozen=True)
class BattleParams(Params):
    """Battle Royale: seat i hits with probability ``base_hit_rate + interval * i`` percent;
    seats shoot in that order (lowest first), one shot a round, until one survives or
    ``rounds`` rounds are played."""

    base_hit_rate: int = 35
    interval: int = 5


@dataclass(frozen=True)
class PirateParams(Params):
    """Pirate Game: ``gold`` coins, pirates by seniority (seat 0 most senior); a plan passes when
    at least half the living pirates accept. ``rounds`` bounds the proposals (at most
    ``players``)."""

    gold: int = 100


PARAMS: dict[str, type[Params]] = {
    "guessing": GuessingParams, "bar": BarParams, "dollar": DollarParams,
    "goods": GoodsParams, "diner": DinerParams, "auction": AuctionParams,
    "battle": BattleParams, "pirate": PirateParams}
"""The parameter class of each game."""


ALIASES: dict[str, dict[str, str]] = {
    "bar": {"capacity": "ratio", "feedback": "mode", "go_payoff": "max", "crowded_payoff": "min",
            "home_payoff": "home"},
    "goods": {"ratio": "multiplier"},
    "auction": {"price": "mode", "valuation_seed": "seed"},
    "battle": {"hit_rate": "base_hit_rate", "hit_step": "interval"},
    "diner": {"cheap_price": "cheap_cost", "costly_price": "exp_cost",
              "costly_utility": "exp_utility"},
}
"""Option names accepted beside the parameters' own (the issue's and GAMA's words): e.g. Bar's
``capacity`` is its ``ratio``, Public Goods' GAMA ``ratio`` its ``multiplier``."""


def make_params(name: str, overrides: dict[str, Any] | None = None) -> Params:
    """The game's default parameters with ``overrides`` (option values, e.g. from
    ``--option ratio=1/2``; strings are converted to the field's type; names of
    :data:`ALIASES` accepted). A Guessing ratio also sets ``ratio_str`` as written (``1/2``);
    a Bar capacity sets it as a percentage (``0.7`` or ``70%`` -> ``70%``). ValueError (one
    line naming the option) on an unknown name, key or value."""
    cls = _params_class(name)
    known = {f.name: f for f in fields(cls)}
    aliases = ALIASES.get(name, {})
    values: dict[str, Any] = {}
    for given, raw in (overrides or {}).items():
        key = aliases.get(given, given)
        if key not in known:
            raise ValueError(f"--option {given}: not a parameter of {name} (one of "
                             f"{', '.join(sorted(set(known) | set(aliases)))})")
        default = getattr(cls(), key)
        try:
            values[key] = _convert(raw, default)
        except (TypeError, ValueError):
            raise ValueError(f"--option {given}={raw}: not a valid {type(default).__name__}") from None
        if key == "mode" and isinstance(values[key], str):
            values[key] = values[key].lower().replace("_price", "").replace("-price", "")
        if key == "ratio" and "ratio_str" in known and "ratio_str" not in (overrides or {}):
            text = str(raw).strip()
            values["ratio_str"] = f"{values[key] * 100:g}%" if name == "bar" else text
    params = cls(**values)
    check_params(name, params)
    return params


def _convert(raw: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(raw, str):
            if raw.lower() in ("true", "1", "yes"):
                return True
            if raw.lower() in ("false", "0", "no"):
                return False
            raise ValueError(raw)
        return bool(raw)
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        if isinstance(raw, str):
            text = raw.strip()
            if text.endswith("%"):
                return float(text[:-1]) / 100
            return float(Fraction(text))
        return float(raw)
    return str(raw)


def check_params(name: str, params: Params) -> None:
    """ValueError (one line naming the parameter) when the parameters make no game."""
    if params.players < 2:
        raise ValueError(f"--option players={params.players}: a game needs at least 2 players")
    if params.rounds < 1:
        raise ValueError(f"--option rounds={params.rounds}: at least 1 round")
    if isinstance(params, GuessingParams) and params.max <= params.min:
        raise ValueError(f"--option max={params.max}: must exceed min={params.min}")
    if isinstance(params, BarParams) and params.mode not in ("implicit", "explicit"):
        raise ValueError(f"--option mode={params.mode}: 'implicit' or 'explicit'")
    if isinstance(params, AuctionParams):
        if params.mode not in ("first", "second"):
            raise ValueError(f"--option mode={params.mode}: 'first' or 'second'")
        count = len(range(params.valuation_min, params.valuation_max + params.interval,
                          params.interval)) if params.interval > 0 else 0
        if count < params.players:
            raise ValueError(f"--option interval={params.interval}: fewer valuations than "
                             f"players ({count} < {params.players})")
    if isinstance(params, BattleParams) and params.base_hit_rate + params.interval * (params.players - 1) > 100:
        raise ValueError("--option base_hit_rate/interval: a hit rate would exceed 100%")
    if isinstance(params, PirateParams) and params.gold < 0:
        raise ValueError(f"--option gold={params.gold}: must be at least 0")


def _params_class(name: str) -> type[Params]:
    try:
        return PARAMS[name]
    except KeyError:
        raise ValueError(f"--game {name}: not a gama game (one of {', '.join(GAME_NAMES)})") from None


@dataclass(frozen=True)
class GameState:
    """Where a game stands.

    Attributes:
        game: The game's name.
        params: Its parameters.
        seed: The seed of its own randomness (Battle Royale hits when not injected).
        round: Rounds resolved so far (the next round is ``round + 1``).
        alive: Seats still in the game (Battle Royale, Pirate Game; every seat otherwise).
        shooter: Battle Royale: the seat to shoot next.
        tokens: Public Goods: each seat's tokens before the next round.
        done: The game is over.
        records: GAMA's round records so far (``RoundOutcome.record`` of each round).
    """

    game: str
    params: Params
    seed: int = 0
    round: int = 0
    alive: tuple[int, ...] = ()
    shooter: int = 0
    tokens: tuple[float, ...] = ()
    done: bool = False
    records: tuple[dict, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class RoundOutcome:
    """One resolved round.

    Attributes:
        round: The round (1-based).
        actors: The seats that answered.
        answers: seat -> the answer used.
        record: GAMA's round record of the round (its keys and values), e.g. guessing
            ``{"responses", "mean", "mean_ratio", "winner", "winner_num"}``.
        payoffs: seat -> what it earned this round (GAMA's utility; the actors' and, where the
            game pays everyone, every seat's).
        winners: Seats that won the round.
        survivors: Seats in the game after the round.
        done: The game ended with this round.
        extra: Facts GAMA does not store but reports or viewers use (valuations per seat, the
            hit drawn, the pirates' accept share, ...).
    """

    round: int
    actors: tuple[int, ...]
    answers: dict[int, Any]
    record: dict[str, Any]
    payoffs: dict[int, float]
    winners: tuple[int, ...]
    survivors: tuple[int, ...]
    done: bool
    extra: dict[str, Any] = field(default_factory=dict)


def new_game(name: str, params: Params | None = None, seed: int = 0) -> GameState:
    """A game at its start (``params`` None: GAMA's defaults). ValueError on a bad name or
    parameters."""
    cls = _params_class(name)
    params = params if params is not None else cls()
    if not isinstance(params, cls):
        raise ValueError(f"{name}: parameters of type {type(params).__name__}, expected {cls.__name__}")
    check_params(name, params)
    seats = tuple(range(params.players))
    tokens = tuple(float(params.tokens) for _ in seats) if isinstance(params, GoodsParams) else ()
    return GameState(game=name, params=params, seed=int(seed), alive=seats, tokens=tokens)


def actors(state: GameState) -> list[int]:
    """The seats asked in the next round, in GAMA's order ([] when the game is over)."""
    if state.done:
        return []
    if state.game == "battle":
        return [state.shooter]
    if state.game == "pirate":
        return list(state.alive)
    return list(range(state.params.players))


def valuations(params: AuctionParams, round_: int) -> list[int]:
    """The auction's valuations of round ``round_`` (1-based), seat by seat, as GAMA draws them:
    ``random.seed(seed + round_ - 1); random.sample(range(min, max + interval, interval), n)``."""
    rng = random.Random(params.seed + round_ - 1)
    return _draw_valuations(rng, params)


def _draw_valuations(rng: random.Random, params: AuctionParams) -> list[int]:
    pool = range(params.valuation_min, params.valuation_max + params.interval, params.interval)
    return rng.sample(pool, params.players)


def hit_rate(params: BattleParams, seat: int) -> int:
    """Battle Royale: the seat's hit rate in percent (35 + 5 i by default)."""
    return params.base_hit_rate + params.interval * seat


def resolve_round(state: GameState, answers: dict[int, Any],
                  hits: bool | None = None) -> tuple[GameState, RoundOutcome]:
    """The next round resolved from the actors' valid answers.

    Args:
        state: The game (not changed).
        answers: seat -> parsed answer, for every seat of ``actors(state)``.
        hits: Battle Royale: whether the shot hits (e.g. from a record); None draws it.

    Returns:
        The new state and the round's outcome.

    Raises:
        ValueError: the game is over, an actor has no answer, or an answer is not of the
            game's kind (a pirate plan of the wrong length or sum included).
    """
    if state.done:
        raise ValueError(f"{state.game}: the game is over")
    who = actors(state)
    missing = [s for s in who if s not in answers]
    if missing:
        raise ValueError(f"{state.game}: no answer for seats {missing}")
    t = state.round + 1
    resolve = _RESOLVERS[state.game]
    new, outcome = resolve(state, {s: answers[s] for s in who}, t, hits)
    if not new.done and t >= _max_rounds(state):
        new = replace(new, done=True)
        outcome = replace(outcome, done=True)
    return replace(new, round=t, records=state.records + (outcome.record,)), outcome


def _max_rounds(state: GameState) -> int:
    if state.game == "pirate":
        return min(state.params.rounds, state.params.players)
    return state.params.rounds


def _simultaneous(state: GameState, answers: dict[int, Any], t: int, record: dict,
                  payoffs: dict[int, float], winners: tuple[int, ...] = (),
                  extra: dict | None = None, **changes: Any) -> tuple[GameState, RoundOutcome]:
    seats = tuple(range(state.params.players))
    outcome = RoundOutcome(round=t, actors=seats, answers=dict(answers), record=record,
                           payoffs=payoffs, winners=winners, survivors=seats, done=False,
                           extra=extra or {})
    return replace(state, **changes), outcome


def _numbers(state: GameState, answers: dict[int, Any]) -> list[int]:
    out = []
    for seat in range(state.params.players):
        value = answers[seat]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{state.game}: seat {seat}'s answer {value!r} is not an integer")
        out.append(int(value))
    return out


def _guessing(state, answers, t, hits):
    p: GuessingParams = state.params
    responses = _numbers(state, answers)
    from statistics import mean

    avg = mean(responses)
    target = avg * p.ratio
    winner = min(responses, key=lambda x: abs(x - target))
    record = {"responses": responses, "mean": avg, "mean_ratio": target, "winner": winner,
              "winner_num": responses.count(winner)}
    winners = tuple(s for s, r in enumerate(responses) if r == winner)
    payoffs = {s: (1.0 if s in winners else 0.0) for s in range(p.players)}
    return _simultaneous(state, answers, t, record, payoffs, winners)


def _bar(state, answers, t, hits):
    p: BarParams = state.params
    responses = []
    for seat in range(p.players):
        value = answers[seat]
        if value not in ("go", "stay"):
            raise ValueError(f"bar: seat {seat}'s answer {value!r} is not 'go' or 'stay'")
        responses.append(value)
    go = responses.count("go")
    share = go / p.players
    winner = "go" if share <= p.ratio else "stay"
    record = {"responses": responses, "go_num": go, "go_ratio": share, "winner": winner,
              "utility": p.max if winner == "go" else p.min}
    payoffs = {s: float(p.home if r == "stay" else (p.max if winner == "go" else p.min))
               for s, r in enumerate(responses)}
    winners = tuple(s for s, r in enumerate(responses) if r == winner)
    return _simultaneous(state, answers, t, record, payoffs, winners)


def _dollar(state, answers, t, hits):
    p: DollarParams = state.params
    bids = _numbers(state, answers)
    total = sum(bids)
    record = {"responses": bids, "total_proposal": total}
    ok = total <= p.golds
    payoffs = {s: float(b if ok else 0) for s, b in enumerate(bids)}
    winners = tuple(range(p.players)) if ok else ()
    return _simultaneous(state, answers, t, record, payoffs, winners)


def _goods(state, answers, t, hits):
    p: GoodsParams = state.params
    gifts = _numbers(state, answers)
    total = sum(gifts)
    record = {"responses": gifts, "total_tokens": total}
    share = total * p.multiplier / p.players
    after = [state.tokens[s] - g + share for s, g in enumerate(gifts)]
    payoffs = {s: float(x) for s, x in enumerate(after)}
    tokens = tuple(float(p.tokens) for _ in gifts) if p.reset else tuple(round(x, 2) for x in after)
    extra = {"tokens_after": [round(x, 2) for x in after], "share": share}
    return _simultaneous(state, answers, t, record, payoffs, extra=extra, tokens=tokens)


def _diner(state, answers, t, hits):
    p: DinerParams = state.params
    responses = [str(answers[s]) for s in range(p.players)]
    cheap = responses.count("cheap")
    total = cheap * p.cheap_cost + (p.players - cheap) * p.exp_cost
    avg = total / p.players
    record = {"responses": responses, "cheap_player": cheap, "total_cost": total,
              "cost_msg": f"{p.players - cheap} * {p.exp_cost} + {cheap} * {p.cheap_cost} = {total}",
              "avg_cost": avg}
    payoffs = {s: float((p.cheap_utility if r == "cheap" else p.exp_utility) - avg)
               for s, r in enumerate(responses)}
    return _simultaneous(state, answers, t, record, payoffs)


def _auction(state, answers, t, hits):
    p: AuctionParams = state.params
    bids = _numbers(state, answers)
    rng = random.Random(p.seed + t - 1)
    values = _draw_valuations(rng, p)
    top = max(bids)
    pay = sorted(bids)[-2] if p.mode == "second" else top
    tied = [s for s, b in enumerate(bids) if b == top]
    winner = tied[rng.randint(0, len(tied) - 1)] if len(tied) > 1 else tied[0]
    utility = [values[s] - pay if s == winner else 0 for s in range(p.players)]
    record = {"responses": bids, "bid_winner": f"player_{winner}", "bid_winner_proposed": top,
              "bid_winner_payment": pay, "utility": utility, "valuations": values}
    payoffs = {s: float(u) for s, u in enumerate(utility)}
    return _simultaneous(state, answers, t, record, payoffs, (winner,),
                         extra={"valuations": values})


def _battle(state, answers, t, hits):
    p: BattleParams = state.params
    shooter = state.shooter
    target = answers[shooter]
    if target is not None and (isinstance(target, bool) or not isinstance(target, (int, np.integer))):
        raise ValueError(f"battle: seat {shooter}'s target {target!r} is not a seat or None")
    alive = list(state.alive)
    out = False
    rate = hit_rate(p, shooter)
    if target is None:
        action, shot = "miss", "null"
    else:
        action, shot = "shoot", str(int(target))
        if int(target) in alive:
            if hits is None:
                rng = np.random.default_rng(np.random.SeedSequence([state.seed, t]))
                hits = bool(rng.random() < rate / 100)
            out = bool(hits)
            if out:
                alive.remove(int(target))
    record = {"responses": [shot], "player_shooting": str(shooter),
              "initial_players": [[f"player_{s}", hit_rate(p, s)] for s in state.alive],
              "shot_player": shot, "action": action, "out": out}
    nxt = _next_shooter(p.players, alive, shooter)
    done = len(alive) <= 1
    outcome = RoundOutcome(round=t, actors=(shooter,), answers=dict(answers), record=record,
                           payoffs={}, winners=tuple(alive) if done else (),
                           survivors=tuple(alive), done=done,
                           extra={"hit_rate": rate, "hit": out, "target": target})
    return replace(state, alive=tuple(alive), shooter=nxt, done=done), outcome


def _next_shooter(players: int, alive: list[int], current: int) -> int:
    """The next living seat after ``current`` in the shooting order, cyclically (GAMA:
    ``find_next_in_current_order``); ``current`` itself when nobody else lives."""
    for step in range(1, players):
        seat = (current + step) % players
        if seat in alive:
            return seat
    return current


def ne_plan(pirates: int, gold: int = 100) -> list[int]:
    """The Pirate Game's equilibrium plan for ``pirates`` living pirates, proposer first:
    ``[gold - floor((n - 1) / 2), 0, 1, 0, 1, ...]`` (GAMA's ``return_NE_plan``)."""
    plan = [0] * pirates
    ones = [i for i in range(2, pirates, 2)]
    for i in ones:
        plan[i] = 1
    plan[0] = gold - len(ones)
    return plan


def check_plan(state: GameState, plan: Any) -> list[int]:
    """A pirate proposer's plan as golds per living pirate (proposer first); ValueError when
    it is not one integer per living pirate summing to the gold (GAMA re-asks then)."""
    living = len(state.alive)
    if not isinstance(plan, (list, tuple)) or any(
            isinstance(g, bool) or not isinstance(g, (int, np.integer)) for g in plan):
        raise ValueError(f"pirate: the plan {plan!r} is not a list of integers")
    if len(plan) != living or sum(plan) != state.params.gold:
        raise ValueError(f"pirate: the plan must give {living} pirates {state.params.gold} "
                         f"golds in all, not {list(plan)}")
    return [int(g) for g in plan]


def _pirate(state, answers, t, hits):
    alive = list(state.alive)
    proposer = alive[0]
    plan = check_plan(state, answers[proposer])
    votes = ["accept"]
    for seat in alive[1:]:
        vote = answers[seat]
        if vote not in ("accept", "reject"):
            raise ValueError(f"pirate: seat {seat}'s vote {vote!r} is not accept or reject")
        votes.append(vote)
    accepted = votes.count("accept")
    share = accepted / len(alive)
    passed = share >= 0.5
    record = {"gold_distribution": plan, "responses": votes}
    if passed:
        payoffs = {s: float(g) for s, g in zip(alive, plan, strict=False)}
        survivors = tuple(alive)
    else:
        payoffs = {}
        survivors = tuple(alive[1:])
    done = passed or not survivors
    outcome = RoundOutcome(round=t, actors=tuple(alive), answers=dict(answers), record=record,
                           payoffs=payoffs, winners=tuple(alive) if passed else (),
                           survivors=survivors, done=done,
                           extra={"accepted": accepted, "accept_share": share, "passed": passed,
                                  "proposer": proposer})
    return replace(state, alive=survivors, done=done), outcome


_RESOLVERS = {"guessing": _guessing, "bar": _bar, "dollar": _dollar, "goods": _goods,
              "diner": _diner, "auction": _auction, "battle": _battle, "pirate": _pirate}


def equilibrium(name: str, params: Params | None = None) -> dict[str, Any] | None:
    """The game's equilibrium where one exists, as plain data ``{"kind", "answer", "note"}``;
    None where GAMA's setting has none distbench states (Bar, first-price Auction, Battle
    Royale).

    Guess: everyone picks ``min`` when ratio < 1 (``max`` when > 1; none at 1); Public Goods:
    contribute 0; Divide the Dollar: bids summing to the golds (the symmetric one: golds/n each);
    Diner: the dominant dish when one dominates; second-price Auction: bid the valuation;
    Pirate: the plan of :func:`ne_plan`.
    """
    p = params if params is not None else _params_class(name)()
    if name == "guessing":
        if p.ratio < 1:
            return {"kind": "pure", "answer": p.min, "note": "everyone picks the minimum"}
        if p.ratio > 1:
            return {"kind": "pure", "answer": p.max, "note": "everyone picks the maximum"}
        return None
    if name == "goods":
        if p.multiplier < p.players:
            return {"kind": "dominant", "answer": 0, "note": "contribute nothing"}
        return {"kind": "dominant", "answer": p.tokens, "note": "contribute everything"}
    if name == "dollar":
        return {"kind": "pure", "answer": p.golds / p.players,
                "note": "any bids summing to the golds; the symmetric one shown"}
    if name == "diner":
        gain = p.exp_utility - p.cheap_utility
        cost = (p.exp_cost - p.cheap_cost) / p.players
        if gain > cost:
            return {"kind": "dominant", "answer": "costly", "note": "the costly dish dominates"}
        if gain < cost:
            return {"kind": "dominant", "answer": "cheap", "note": "the cheap dish dominates"}
        return None
    if name == "auction":
        if p.mode == "second":
            return {"kind": "dominant", "answer": "valuation", "note": "bid your valuation"}
        return None
    if name == "pirate":
        return {"kind": "subgame-perfect", "answer": ne_plan(p.players, p.gold),
                "note": "plans [gold - floor((n-1)/2), 0, 1, 0, 1, ...]; vote by GAMA's rule"}
    return None


def vote_is_correct(plan: list[int], position: int, vote: str) -> bool:
    """Whether a vote counts as correct under GAMA's rule (``pirate_game.py``, kept as is)
    for the voter at ``position`` (1 = the pirate just below the proposer): with 2 or more
    golds accepting is correct; with 1 gold accepting is correct at even positions only (at
    odd positions no vote is); with 0 golds rejecting is correct."""
    gold = plan[position]
    if gold >= 2:
        return vote == "accept"
    if gold == 1:
        return position % 2 == 0 and vote == "accept"
    if gold == 0:
        return vote == "reject"
    return False


def l1_to_ne(plan: list[int], gold: int, players: int, round_index: int) -> float:
    """GAMA's L1 distance of a plan from the equilibrium plan: golds scaled to 100, against
    ``ne_plan(players - round_index, 100)`` (``round_index`` 0-based)."""
    ne = ne_plan(players - round_index, 100)
    return float(sum(abs(g / gold * 100 - ne[i]) for i, g in enumerate(plan)))


def move_distance(state: GameState, seat: int, answer: Any,
                  outcome: RoundOutcome | None = None) -> float | None:
    """Distance of one valid move from the game's equilibrium, in the game's units (None
    where the game has none): Guess |x - equilibrium|; Goods the contribution; Dollar
    |bid - golds/n|; Diner 0/1 (not the dominant dish); second-price Auction
    |bid - valuation| (needs ``outcome`` for the valuation); Pirate: the proposer's L1 to the
    equilibrium plan (GAMA's, scaled to 100 golds), a voter's 0/1 by GAMA's vote rule (needs
    ``outcome``). ``state`` is the state the round was played from."""
    p = state.params
    eq = equilibrium(state.game, p)
    if eq is None:
        return None
    if state.game in ("guessing", "goods", "dollar"):
        return float(abs(int(answer) - eq["answer"]))
    if state.game == "diner":
        cheap = answer == "cheap"
        return float(cheap if eq["answer"] == "costly" else not cheap)
    if state.game == "auction":
        if outcome is None:
            return None
        return float(abs(int(answer) - outcome.extra["valuations"][seat]))
    if state.game == "pirate":
        alive = list(state.alive)
        if seat == alive[0]:
            return l1_to_ne(list(answer), p.gold, p.players, state.round)
        if outcome is None:
            return None
        plan = outcome.record["gold_distribution"]
        return 0.0 if vote_is_correct(plan, alive.index(seat), answer) else 1.0
    return None
