"""Plays one shard of beauty games: one model call per game, all in one batch.

Deterministic by seed: the opponents of game i of seed s come from ``derive_seed(s, i)``,
the model's sampling seed from ``derive_seed(llm_seed, game_id)``, so the rows do not
depend on sharding or batching.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from distbench.games.base import Rescored, ShardResult, StoredShard, derive_seed
from distbench.llm.base import Backend, BackendSpec, Request
from distbench.llm.calls import calls_table
from distbench.store.fields import Rows
from distbench_beauty.family import NAME, BeautyShard, level_guess
from distbench_beauty.schema import BEAUTY_GAMES

MAX_LEVEL = 3
_ANSWER = re.compile(r"answer\s*[:=]?\s*(-?\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+")


def opponents(seed: int, index: int, num_players: int, fraction: float) -> tuple[list[int], list[int]]:
    """The levels and picks of game ``index``'s scripted opponents."""
    rng = np.random.default_rng(derive_seed("beauty", seed, index))
    levels = rng.integers(0, MAX_LEVEL + 1, size=num_players - 1).tolist()
    randoms = rng.integers(0, 101, size=num_players - 1).tolist()
    picks = [r if k == 0 else level_guess(k, fraction) for k, r in zip(levels, randoms, strict=True)]
    return levels, picks


def prompt(num_players: int, fraction: float, style: str) -> str:
    """The question; a base model (completion style) continues after ``Answer:``."""
    text = (f"You are playing a guessing game with {num_players - 1} other players. Each "
            f"player secretly picks a whole number from 0 to 100. The target is {fraction:.4g} "
            f"times the average of all the numbers picked, and the player whose number is "
            f"closest to the target wins.\n")
    if style == "completion":
        return text + "My pick, as a single number:\nAnswer:"
    return text + "Which number do you pick? Reply with 'Answer: <number>' and nothing else."


def parse(text: str | None) -> tuple[int | None, str]:
    """(pick, parse_status) of an answer: ``Answer: k`` or else the first integer."""
    if text is None:
        return None, "call_failed"
    found = _ANSWER.search(text) or _NUMBER.search(text)
    if not found:
        return None, "no_answer"
    value = int(found.group(1) if found.re is _ANSWER else found.group(0))
    return (value, "ok") if 0 <= value <= 100 else (None, "out_of_range")


def best_response(others: list[int], num_players: int, fraction: float) -> tuple[int, float]:
    """The integer pick closest to its own resulting target, and that distance."""
    picks = np.arange(101)
    targets = fraction * (picks + sum(others)) / num_players
    gaps = np.abs(picks - targets)
    best = int(np.argmin(gaps))
    return best, float(gaps[best])


def score(seed: int, index: int, num_players: int, fraction: float,
          answer: str | None) -> dict:
    """The scored fields of one game from the model's answer (None: the call failed): what
    a run writes and what a rescore writes again from the stored answer."""
    levels, others = opponents(seed, index, num_players, fraction)
    guess, status = parse(answer)
    valid = [*others, guess] if guess is not None else others
    target = fraction * sum(valid) / len(valid)
    best, best_gap = best_response(others, num_players, fraction)
    distance = None if guess is None else abs(guess - target)
    return {"opponent_levels": levels, "opponent_guesses": others, "guess": guess,
            "parse_status": status, "target": target, "distance": distance,
            "best_guess": best, "regret": None if distance is None else distance - best_gap,
            "won": None if guess is None else all(distance <= abs(o - target) for o in others)}


def rescore(stored: StoredShard) -> Rescored:
    """Re-reads one stored shard's answers with today's :func:`parse` and scores them again,
    calling no model (``distbench rescore``); a failed call stays failed."""
    from collections import Counter

    stem, table = stored.tables["beauty_games"]
    rows = Rows(BEAUTY_GAMES)
    moved: Counter[tuple[str, str, str]] = Counter()
    for old in table.to_pylist():
        failed = old["parse_status"] == "call_failed"
        row = score(old["seed"], old["game_index"], old["num_players"], old["fraction"],
                    None if failed else old["raw_text"])
        moved[("games", old["parse_status"], row["parse_status"])] += 1
        rows.add({**old, **row, "run_id": stored.run_id})
    tables = {"beauty_games": (stem, rows.table())}
    if "calls" in stored.tables:
        calls_stem, calls = stored.tables["calls"]
        tables["calls"] = (calls_stem, calls.set_column(
            calls.schema.get_field_index("run_id"), "run_id",
            pa.array([stored.run_id] * calls.num_rows, pa.string())))
    statuses = [r["parse_status"] for r in rows.table().to_pylist()]
    stats = {"games": table.num_rows, "calls": 0, "valid": statuses.count("ok"),
             "call_failed": statuses.count("call_failed")}
    return Rescored(ShardResult(stored.shard_id, tables, stats), dict(moved))


def run_shard(shard: BeautyShard, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard`` with ``backends[shard.llm]``."""
    backend = backends[shard.llm]
    indices = range(shard.start, shard.stop)
    game_ids = [f"beauty/s{shard.seed}/g{i}/n{shard.num_players}/p{shard.fraction:.6g}"
                for i in indices]
    text = prompt(shard.num_players, shard.fraction, shard.llm.style)
    requests = [Request(prompt=text, seed=derive_seed(shard.llm_seed, gid), task="beauty.guess:100",
                        max_tokens=shard.max_tokens, temperature=shard.temperature,
                        stop=("\n",) if shard.llm.style == "completion" else None)
                for gid in game_ids]
    responses = asyncio.run(backend.generate(requests))

    player = f"{shard.llm.provider}:{shard.llm.model}"
    rows = Rows(BEAUTY_GAMES)
    statuses = []
    for index, gid, resp in zip(indices, game_ids, responses, strict=True):
        row = score(shard.seed, index, shard.num_players, shard.fraction,
                    resp.text if resp.status == "ok" else None)
        statuses.append(row["parse_status"])
        rows.add({"run_id": shard.run_id, "shard_id": shard.shard_id, "family": NAME,
                  "game_id": gid, "seed": shard.seed, "game_index": index, "player": player,
                  "num_players": shard.num_players, "fraction": shard.fraction,
                  **row, "raw_text": resp.text})
    games = rows.table()
    calls = calls_table(shard.run_id, shard.shard_id, shard.llm, "guess", requests, responses,
                        [f"{gid}/c0" for gid in game_ids], game_ids)
    return ShardResult(
        shard_id=shard.shard_id,
        tables={"beauty_games": (shard.shard_id, games), "calls": (shard.shard_id, calls)},
        stats={"games": len(game_ids), "calls": len(requests),
               "valid": statuses.count("ok"), "call_failed": statuses.count("call_failed")})
