"""GAMA-Bench's 520 leaderboard records played again through distbench's rules and engine.

For every leaderboard record (13 models x 8 games x 5 runs; Bar implicit, Auction first price)
two replays, each compared with the stored round records key by key
(``distbench.games.gama.recheck.round_difference``: Guessing's and Divide the Dollar's
``responses`` as multisets, since GAMA shuffles them in place when it reports a round):

- **rules**: the recorded answers of every round fed to
  ``distbench.games.gama.rules.resolve_round`` (Battle Royale's hits taken from the record, the
  auction's valuations and tie-breaks drawn as GAMA draws them);
- **engine**: a ``gama`` game played by the family's shard runner with every seat the replay
  provider (``--llm-type replay:PATH`` on the record): the requests, the parser, the rules and
  the rows of any run, the answers the record's (``distbench.games.gama.recheck``).

Prints the records that differ, with the first difference, and ``records reproduced: k/520``
for each replay (``--rules-only`` skips the engine's, about a minute).

Usage::

    python benchmarks/bench_gama_replay.py /path/to/GAMABench
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from distbench.games.gama.recheck import replay_record, round_difference
from distbench.games.gama.records import GamaRecord, find_records, read_record, recorded_answers
from distbench.games.gama.rules import GameState, RoundOutcome, actors, new_game, resolve_round


def on_board(rec: GamaRecord) -> bool:
    """A record of a leaderboard cell."""
    return bool(rec.name.model_label and rec.run_index and rec.version == "v1"
                and rec.variant in ("", "implicit", "first"))


def replay_rounds(rec: GamaRecord) -> list[dict]:
    """The record's rounds played again through the rules: the round records they produce."""
    return [outcome.record for _, outcome in replay(rec)]


def replay(rec: GamaRecord) -> list[tuple[GameState, RoundOutcome]]:
    """The record's rounds played again through the rules: (state before, outcome) each."""
    state = new_game(rec.game, rec.params)
    played = []
    for index in range(len(rec.rounds)):
        answers, hits = recorded_answers(rec, index, actors(state))
        after, outcome = resolve_round(state, answers, hits=hits)
        played.append((state, outcome))
        state = after
    return played


def engine_difference(rec: GamaRecord) -> str | None:
    """The engine's replay of ``rec`` through the replay provider, compared."""
    produced, game = replay_record(rec)
    diff = round_difference(rec, produced)
    if game["status"] != "ok":
        return f"game {game['status']} ({game['detail'][:200]}); {diff or 'rounds equal'}"
    return diff


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a GAMA-Bench checkout (commit 41ebccf)")
    parser.add_argument("--rules-only", action="store_true", help="skip the engine's replay")
    args = parser.parse_args(argv)
    records = [r for r in map(read_record, find_records(args.checkout / "raw_results")) if on_board(r)]
    checks = {"rules": lambda r: round_difference(r, replay_rounds(r))}
    if not args.rules_only:
        from distbench.games.registry import load_families

        load_families()
        checks["engine"] = engine_difference
    for name, check in checks.items():
        same = 0
        for rec in records:
            try:
                diff = check(rec)
            except ValueError as exc:
                diff = f"not playable: {exc}"
            if diff is None:
                same += 1
            else:
                print(f"{name} differs: {rec.path.relative_to(args.checkout)}: {diff}")
        print(f"{name} replay, records reproduced: {same}/{len(records)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
