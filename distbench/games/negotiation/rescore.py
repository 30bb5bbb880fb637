"""Re-reading a negotiation run's stored answers (``distbench rescore``): the family's hook.

Every stored episode is played again by today's game master (:mod:`.game`), each player's
answer taken from the stored turn of the same number instead of a model, and read by today's
parser (:func:`.parse.parse_message`); its scores are computed again (Pareto frontier,
main score...). No model is called.

**Divergence.** A re-read answer can change the rest of the game: a message read as a proposal
now makes the game master ask the other player to propose, an answer rejected before and
accepted now lets the game go on. When the game master asks for an answer the stored episode
does not hold (no stored turn of that number, or one by another seat or of another kind), the
rest of the episode cannot be known without asking the model: the episode is **kept as stored**
(its rows unchanged, parsed by the version they carry) and marked with the turn where it
diverged (``episodes.diverged_at``). Its turns count as unchanged in the transitions, and the
episode as ``diverged``. An episode that now ends earlier (an answer accepted before is
rejected now, which aborts it) is re-scored: every answer it asked for is stored; its later
turns are dropped (counted as ``dropped``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from distbench.games.answers.replay import stored_calls
from distbench.games.base import Rescored, ShardResult, StoredShard
from distbench.games.negotiation import parse as P
from distbench.games.negotiation.game import Episode
from distbench.games.negotiation.instances import Instance, generate_instance
from distbench.games.negotiation.players import Reply
from distbench.games.negotiation.runner import episode_rows
from distbench.games.negotiation.schema import STORED_EPISODES, TURNS
from distbench.store.fields import Rows


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook: today's parser (see the module docstring)."""
    return rescore_shard(stored)


@dataclass
class _Replay(Episode):
    """An episode driven by stored answers: the game master's rules and parser, without the
    players' transcripts (nothing is sent to anyone)."""

    read: Callable[..., P.Parsed] = P.parse_message

    def __post_init__(self) -> None:
        self._forms = list(self.instance.forms(self.lang))
        self._pending = [("a", "message")]

    def _tell(self, seat: str, message: str | None) -> None:
        return None

    def _text(self, key: str, **fields: str) -> str | None:
        return None

    def _parse(self, text: str) -> P.Parsed:
        return self.read(text, self._forms, self.instance.counts, self.lang)


def _instance(row: Mapping[str, Any], shard: Mapping[str, Any]) -> Instance:
    """The episode's instance: generated again from its seed and index, or the clembench
    file's as the shard recorded it."""
    if row["seed"] >= 0:
        return generate_instance(int(row["seed"]), int(row["instance_index"]))
    for item in shard.get("instances") or []:
        inst = item.get("instance") or {}
        if inst.get("instance_id") == row["instance_id"]:
            words = inst.get("words")
            return Instance(
                instance_id=inst["instance_id"], seed=int(inst["seed"]),
                index=int(inst["index"]), items=tuple(inst.get("items") or ()),
                counts=tuple(inst["counts"]), values_a=tuple(inst["values_a"]),
                values_b=tuple(inst["values_b"]),
                words=tuple(tuple(w) for w in words) if words is not None else None)
    raise ValueError(f"episode {row['episode_id']}: its instance is not in the shard's record")


def _outcome(row: Mapping[str, Any]) -> str:
    if row.get("aborted"):
        return f"aborted:{row.get('abort_reason')}"
    return "success" if row.get("success") else "lose"


def rescore_shard(stored: StoredShard, *, read: Callable[..., P.Parsed] = P.parse_message,
                  parser_version: str = P.PARSER_VERSION) -> Rescored:
    """Re-reads and re-scores one stored negotiation shard.

    Args:
        stored: The shard's stored tables (``episodes``, ``turns``, maybe ``calls``).
        read: The proposal parser, ``(text, forms, counts, lang) -> Parsed``.
        parser_version: What the re-read rows' ``parser_version`` says.
    """
    episodes = stored.table("episodes").to_pylist()
    turns_by_episode: dict[str, list[dict]] = defaultdict(list)
    for t in stored.table("turns").to_pylist():
        turns_by_episode[t["episode_id"]].append(t)
    transitions: Counter[tuple[str, str, str]] = Counter()
    ep_rows, turn_rows = Rows(STORED_EPISODES), Rows(TURNS)
    diverged = 0
    for row in episodes:
        stored_turns = sorted(turns_by_episode.get(row["episode_id"], []), key=lambda t: t["turn"])
        replay, at = _replay(row, stored_turns, stored.shard, read)
        if at is not None:
            diverged += 1
            transitions[("episodes", _outcome(row), "diverged")] += 1
            for t in stored_turns:
                transitions[("turns", t["parse_status"], t["parse_status"])] += 1
                turn_rows.add({**_fill(t, TURNS), "run_id": stored.run_id})
            ep_rows.add({**_fill(row, STORED_EPISODES), "run_id": stored.run_id,
                         "diverged_at": at})
            continue
        seats = [(row["player_a"], row["player_b"], row["seat_order"])]
        latency = {t["call_id"]: t["latency_ms"] for t in stored_turns}
        new_eps, new_turns = episode_rows(stored.run_id, stored.shard_id, [replay], seats,
                                          latency, {row["episode_id"]: row.get("reasoning") or "direct"})
        new_ep = new_eps.table().to_pylist()[0]
        new_ep["parser_version"] = parser_version
        ep_rows.add(new_ep)
        transitions[("episodes", _outcome(row), _outcome(new_ep))] += 1
        new_list = new_turns.table().to_pylist()
        for k, t in enumerate(stored_turns):
            new = new_list[k]["parse_status"] if k < len(new_list) else "dropped"
            transitions[("turns", t["parse_status"], new)] += 1
        for t in new_list:
            if t["raw_text"] is not None:
                t["parser_version"] = parser_version
            turn_rows.add(t)
    tables: dict[str, tuple[str, Any]] = {
        "episodes": (stored.tables["episodes"][0], ep_rows.table()),
        "turns": (stored.tables["turns"][0], turn_rows.table()),
    }
    tables |= stored_calls(stored)
    calls = tables["calls"][1].num_rows if "calls" in tables else 0
    new_rows = ep_rows.table()
    stats = {"episodes": new_rows.num_rows,
             "success": sum(bool(x) for x in new_rows["success"].to_pylist()),
             "aborted": sum(bool(x) for x in new_rows["aborted"].to_pylist()),
             "turns": len(turn_rows), "calls": calls}
    return Rescored(ShardResult(stored.shard_id, tables, stats), dict(transitions), diverged)


def _fill(row: Mapping[str, Any], schema: pa.Schema) -> dict[str, Any]:
    """A stored row with exactly the schema's columns (a column an older run lacks: NULL)."""
    return {name: row.get(name) for name in schema.names}


def _replay(row: Mapping[str, Any], stored_turns: list[dict], shard: Mapping[str, Any],
            read: Callable[..., P.Parsed]) -> tuple[_Replay, int | None]:
    """Plays the episode again on its stored answers: (the episode, None), or (the episode so
    far, the turn it diverged at)."""
    by_turn = {t["turn"]: t for t in stored_turns}
    ep = _Replay(episode_id=row["episode_id"], instance=_instance(row, shard), mode=row["mode"],
                 lang=row["lang"], max_messages=int(row["max_messages"]),
                 seed_of=lambda *_: 0, read=read)
    while not ep.done:
        asks = ep.asks()
        replies, call_ids = [], []
        for ask in asks:
            t = by_turn.get(ask.turn)
            if t is None or t["player"] != ask.seat or t["kind"] != ask.kind:
                return ep, ask.turn
            text = t["raw_text"]
            replies.append(Reply(text=text, failed=text is None,
                                 error=t["parse_detail"] if text is None else "",
                                 reasoning=t.get("reasoning_text")))
            call_ids.append(t["call_id"])
        ep.receive_round(asks, replies, call_ids)
    return ep, None
