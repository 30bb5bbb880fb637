"""Who sits at a ``gama`` table: models of any provider and scripted players, and how the
seats are given (``--players``).

Scripted players answer in text, through the same parser as a model (so a scripted answer is
a row like any other, ``call_id`` NULL):

- ``scripted:equilibrium``: the equilibrium move where the game has one (Guess: the minimum
  for a ratio below 1, the maximum above; Public Goods: nothing, or everything when the
  multiplier is at least the number of players; Divide the Dollar: ``golds // n``, the
  symmetric split rounded down; Diner: the dominant dish; Pirate: the plan
  ``[gold - floor((n-1)/2), 0, 1, 0, 1, ...]`` and GAMA's vote rule; second-price Auction:
  the valuation), and otherwise the game's reference play: El Farol: go with probability equal
  to the capacity (the symmetric mixed equilibrium); first-price Auction: ``v (n-1)/n`` (the
  symmetric equilibrium with valuations uniform); Battle Royale: shoot the living opponent with
  the highest hit rate (what GAMA's score counts as correct);
- ``scripted:random``: uniformly random among the valid answers (a pirate plan: a uniformly
  random split of the golds);
- ``scripted:fixed=A/B/...``: GAMA's "specified" player: answer ``A`` in round 1, ``B`` in
  round 2, ... cyclically (a pirate plan with ``;`` between golds).

A scripted player draws from ``derive_seed("gama-scripted", game_id, round, seat)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from distbench.games.base import derive_seed, parse_player, seat_label
from distbench.games.gama import rules
from distbench.games.gama.prompts import echo
from distbench.llm.base import BackendSpec

SCRIPTED = ("scripted:equilibrium", "scripted:random")
"""The scripted players without a parameter (``scripted:fixed=...`` takes one)."""

Player = BackendSpec | str


def parse_seat(text: str, base: BackendSpec) -> Player:
    """One ``--players`` entry: a scripted player, the run's model (its provider alone, or
    ``self``), or a model ``PROVIDER[:MODEL]`` (ValueError: one line)."""
    text = text.strip()
    if text == "self":
        return base
    if text.startswith("scripted:fixed="):
        if not text.partition("=")[2]:
            raise ValueError("--players scripted:fixed=A/B/...: give the answers")
        return text
    if text.startswith("scripted:") and text not in SCRIPTED:
        raise ValueError(f"--players {text!r}: scripted players are "
                         f"{', '.join(SCRIPTED)} and scripted:fixed=A/B/...")
    try:
        return parse_player(text, base, scripted=SCRIPTED)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--opponent/--agent", "--players")) from None


def table_seats(entries: Sequence[Player], players: int) -> tuple[Player, ...]:
    """The player of each of ``players`` seats: the entries in order, repeated when fewer
    (``A,B`` at ten seats: A, B, A, B, ...); more entries than seats is an error."""
    if not entries:
        raise ValueError("--players: at least one player")
    if len(entries) > players:
        raise ValueError(f"--players: {len(entries)} players for {players} seats (set "
                         f"--option players={len(entries)})")
    return tuple(entries[i % len(entries)] for i in range(players))


def table_label(seats: Sequence[Player]) -> str:
    """The table as the tables name it: the one player of every seat, or ``mixed``."""
    labels = {seat_label(s) for s in seats}
    return labels.pop() if len(labels) == 1 else "mixed"


def scripted_answer(name: str, state: rules.GameState, seat: int, game_id: str, *,
                    proposer: bool = False, plan: list[int] | None = None) -> str:
    """The text a scripted player answers this round (parsed like a model's)."""
    t = state.round + 1
    rng = np.random.default_rng(derive_seed("gama-scripted", game_id, t, seat))
    if name.startswith("scripted:fixed="):
        choices = name.partition("=")[2].split("/")
        return "Answer: " + choices[(t - 1) % len(choices)].replace(";", ", ")
    if name == "scripted:random":
        return _random(state, seat, rng, proposer=proposer)
    return _reference(state, seat, rng, proposer=proposer, plan=plan)


def _random(state: rules.GameState, seat: int, rng: np.random.Generator, *,
            proposer: bool) -> str:
    p = state.params
    game = state.game
    if game == "guessing":
        value: Any = int(rng.integers(p.min, p.max + 1))
    elif game == "bar":
        value = "go" if rng.random() < 0.5 else "stay"
    elif game == "dollar":
        value = int(rng.integers(0, p.golds + 1))
    elif game == "goods":
        value = int(rng.integers(0, p.tokens + 1))
    elif game == "diner":
        value = "cheap" if rng.random() < 0.5 else "costly"
    elif game == "auction":
        value = int(rng.integers(0, p.valuation_max + 1))
    elif game == "battle":
        options = [s for s in state.alive if s != seat] + [None]
        value = options[int(rng.integers(0, len(options)))]
        return echo(game, value)
    elif proposer:  # pirate plan: a uniformly random split
        n = len(state.alive)
        cuts = np.sort(rng.integers(0, p.gold + 1, size=n - 1))
        edges = np.concatenate([[0], cuts, [p.gold]])
        return echo(game, np.diff(edges).astype(int).tolist(), proposer=True)
    else:
        value = "accept" if rng.random() < 0.5 else "reject"
    return echo(game, value)


def _reference(state: rules.GameState, seat: int, rng: np.random.Generator, *,
               proposer: bool, plan: list[int] | None) -> str:
    p = state.params
    game = state.game
    eq = rules.equilibrium(game, p)
    if game == "guessing":
        value: Any = eq["answer"] if eq else p.min
    elif game == "bar":
        value = "go" if rng.random() < p.ratio else "stay"
    elif game == "dollar":
        value = p.golds // p.players
    elif game == "goods":
        value = eq["answer"]
    elif game == "diner":
        value = eq["answer"] if eq else "cheap"
    elif game == "auction":
        own = rules.valuations(p, state.round + 1)[seat]
        value = own if p.mode == "second" else own * (p.players - 1) // p.players
    elif game == "battle":
        others = [s for s in state.alive if s != seat]
        value = max(others, key=lambda s: rules.hit_rate(p, s)) if others else None
    elif proposer:
        return echo(game, rules.ne_plan(len(state.alive), p.gold), proposer=True)
    else:
        position = list(state.alive).index(seat)
        value = "accept" if rules.vote_is_correct(plan or [], position, "accept") else "reject"
    return echo(game, value)
