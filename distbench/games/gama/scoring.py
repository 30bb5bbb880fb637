"""GAMA-Bench's score of each game (0-100), computed from the game's round records exactly as
GAMA's ``compute_score`` does (GAMES.md §8), so the published leaderboard reproduces.

Pure functions over plain data: ``rounds`` is the list of GAMA round records (dicts with GAMA's
keys, as stored in its ``raw_results`` files or made by :func:`rules.resolve_round`). The
arithmetic follows GAMA's (``statistics.mean`` for Guessing, numpy means elsewhere) so that
scores agree to the last bits, not only at one decimal.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from distbench.games.gama.rules import (
    AuctionParams,
    BarParams,
    BattleParams,
    DinerParams,
    DollarParams,
    GoodsParams,
    GuessingParams,
    Params,
    PirateParams,
    l1_to_ne,
    vote_is_correct,
)

Rounds = Sequence[dict[str, Any]]


def guessing_score(rounds: Rounds, params: GuessingParams) -> float:
    """S = mean over rounds of (average answer - min), D = max - min; ratio < 1:
    100 (max - S) / D; ratio = 1: 100 (1 - |2S - D| / D); ratio > 1: 100 S / D."""
    s = statistics.mean([statistics.mean(r["responses"]) - params.min for r in rounds])
    d = params.max - params.min
    if params.ratio < 1:
        return (params.max - s) / d * 100
    if params.ratio == 1:
        return (1 - abs(2 * s - d) / d) * 100
    return s / d * 100


def go_share(record: dict[str, Any], players: int) -> float:
    """El Farol: the round's share of players who went."""
    return list(record["responses"]).count("go") / players


def bar_score(rounds: Rounds, params: BarParams) -> float:
    """S = mean |go share - capacity|, R = max(capacity, 1 - capacity); 100 (R - S) / R."""
    shares = np.array([go_share(r, params.players) for r in rounds])
    s = np.mean(np.abs(shares - params.ratio))
    r = max(params.ratio, 1 - params.ratio)
    return float((r - s) / r * 100)


def dollar_score(rounds: Rounds, params: DollarParams) -> float:
    """G = golds / n; S = mean |sum of bids / n - G|; max(0, 100 (G - S) / G)."""
    g = params.golds / params.players
    s = np.mean(np.abs(np.array([sum(r["responses"]) / params.players for r in rounds]) - g))
    return float(max((g - s) / g * 100, 0))


def goods_score(rounds: Rounds, params: GoodsParams) -> float:
    """S = mean over rounds of the mean contribution; 100 (tokens - S) / tokens."""
    s = np.mean([sum(r["responses"]) / params.players for r in rounds], axis=0)
    return float((params.tokens - s) / params.tokens * 100)


def diner_score(rounds: Rounds, params: DinerParams) -> float:
    """100 x the share of answers that are not exactly ``"cheap"`` (mean over rounds)."""
    cheap = np.array([list(r["responses"]).count("cheap") / params.players for r in rounds])
    return float(np.mean(1 - cheap) * 100)


def auction_round_scores(rounds: Rounds) -> list[float]:
    """Per round: the mean over players of max(0, (v - b) / (v or 1))."""
    values = np.array([r["valuations"] for r in rounds])
    bids = np.array([r["responses"] for r in rounds])
    adjusted = (values - bids) / np.where(values == 0, 1, values)
    adjusted = np.where(adjusted < 0, 0, adjusted)
    return [float(np.mean(row)) for row in adjusted]


def auction_score(rounds: Rounds, params: AuctionParams) -> float:
    """100 x the mean over rounds of :func:`auction_round_scores` (both price rules)."""
    return float(np.mean(auction_round_scores(rounds)) * 100)


def battle_correct_aims(rounds: Rounds, players: int) -> list[int]:
    """Battle Royale: after each round, how many shots so far aimed at the living player with
    the highest hit rate other than the shooter (GAMA's count: a deliberate miss or a shot at
    an eliminated player is not correct; the highest hit rate is the highest seat)."""
    living = list(range(1, players + 1))
    counts, correct = [], 0
    for r in rounds:
        if r["action"] != "miss" and r["shot_player"] != "null":
            shot = int(r["shot_player"]) + 1
            if shot in living:
                best = living[-2] if living[-1] == int(r["player_shooting"]) + 1 else living[-1]
                if shot == best:
                    correct += 1
            if r["out"]:
                living.remove(shot)
        counts.append(correct)
    return counts


def battle_score(rounds: Rounds, params: BattleParams, round_id: int | None = None) -> float:
    """100 x correct aims / rounds. GAMA divides the count after round k by k, k = the last of
    its ``range(1, round_id)`` (``round_id`` the record's meta: the next round to play),
    bounded by the rounds stored; None: every stored round."""
    counts = battle_correct_aims(rounds, params.players)
    k = len(counts) if round_id is None else min(len(counts), round_id - 1)
    if k < 1:
        raise ValueError("battle: no round to score")
    return counts[k - 1] / k * 100


def pirate_parts(rounds: Rounds, params: PirateParams) -> tuple[list[float], float]:
    """Pirate Game: the L1 distance of each round's plan from the equilibrium plan, and the
    share of correct votes over all rounds (GAMA's vote rule, the proposer not counted)."""
    distances, correct, total = [], 0, 0
    for index, r in enumerate(rounds):
        plan = list(r["gold_distribution"])
        distances.append(l1_to_ne(plan, params.gold, params.players, index))
        votes = list(r["responses"])
        correct += sum(vote_is_correct(plan, i, votes[i]) for i in range(1, len(plan)))
        total += len(plan) - 1
    if total == 0:
        raise ValueError("pirate: no vote to score")
    return distances, correct / total


def pirate_score(rounds: Rounds, params: PirateParams) -> float:
    """50 (200 - mean L1) / 200 + 50 x the share of correct votes."""
    distances, votes = pirate_parts(rounds, params)
    return float((2 * 100 - np.mean(distances, axis=0)) / (2 * 100) * 50 + votes * 50)


def gama_score(game: str, params: Params, rounds: Rounds, round_id: int | None = None) -> float:
    """GAMA's score of one game run from its round records (``round_id``: Battle Royale's
    meta, see :func:`battle_score`). ValueError when there is no round or a record lacks a
    key the score needs (the message names it)."""
    if not rounds:
        raise ValueError(f"{game}: no round to score")
    try:
        if game == "battle":
            return battle_score(rounds, params, round_id)
        return _SCORERS[game](rounds, params)
    except KeyError as exc:
        raise ValueError(f"{game}: a round record has no {exc.args[0]!r}") from None


def round_score(game: str, params: Params, record: dict[str, Any]) -> float | None:
    """The round's term of GAMA's score where the score is a mean over rounds (Bar: |go share
    - capacity|; Dollar: |sum/n - golds/n|; Goods: the mean contribution; Diner: the costly
    share; Auction: the mean (v - b)/v; Guessing: the mean answer - min); None otherwise."""
    if game == "guessing":
        return float(statistics.mean(record["responses"]) - params.min)
    if game == "bar":
        return abs(go_share(record, params.players) - params.ratio)
    if game == "dollar":
        return abs(sum(record["responses"]) / params.players - params.golds / params.players)
    if game == "goods":
        return sum(record["responses"]) / params.players
    if game == "diner":
        return 1 - list(record["responses"]).count("cheap") / params.players
    if game == "auction":
        return auction_round_scores([record])[0]
    return None


_SCORERS = {"guessing": guessing_score, "bar": bar_score, "dollar": dollar_score,
            "goods": goods_score, "diner": diner_score, "auction": auction_score,
            "pirate": pirate_score}
