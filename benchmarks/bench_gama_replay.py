"""GAMA-Bench's 520 leaderboard records played again through distbench's rules.

For every leaderboard record (13 models x 8 games x 5 runs; Bar implicit, Auction first price)
the recorded answers of every round are fed to ``distbench.games.gama.rules.resolve_round``
(Battle Royale's hits taken from the record, the auction's valuations and tie-breaks drawn as
GAMA draws them) and the round records the rules produce are compared with the stored ones,
key by key (Guessing's and Divide the Dollar's ``responses`` as multisets: GAMA shuffles them
in place when it reports a round). Prints the records that differ, with the first difference,
and ``records reproduced: k/520``. The engine's own replay (the replay provider) is checked
by the playing side; this checks the rules it plays by.

Usage::

    python benchmarks/bench_gama_replay.py /path/to/GAMABench
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from distbench.games.gama.records import GamaRecord, find_records, read_record, recorded_answers
from distbench.games.gama.rules import GameState, RoundOutcome, actors, new_game, resolve_round

SHUFFLED = ("guessing", "dollar")


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


def first_difference(rec: GamaRecord, produced: list[dict]) -> str | None:
    """The first key whose value differs (None when every stored round is reproduced)."""
    if len(produced) != len(rec.rounds):
        return f"{len(produced)} rounds played, {len(rec.rounds)} stored"
    for t, (ours, stored) in enumerate(zip(produced, rec.rounds), start=1):
        for key, theirs in stored.items():
            if key == "removed_player_info":  # GAMA's list of the eliminated, shared and mutated
                continue
            mine = ours.get(key, "<none>")
            if key == "responses" and rec.game in SHUFFLED:
                theirs, mine = sorted(theirs), sorted(mine)
            if isinstance(theirs, float) and isinstance(mine, float) and abs(theirs - mine) < 1e-9:
                continue
            if theirs != mine:
                return f"round {t} {key}: stored {theirs!r}, rules {mine!r}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a GAMA-Bench checkout (commit 41ebccf)")
    args = parser.parse_args(argv)
    records = [r for r in map(read_record, find_records(args.checkout / "raw_results")) if on_board(r)]
    same = 0
    for rec in records:
        try:
            diff = first_difference(rec, replay_rounds(rec))
        except ValueError as exc:
            diff = f"not playable: {exc}"
        if diff is None:
            same += 1
        else:
            print(f"differs: {rec.path.relative_to(args.checkout)}: {diff}")
    print(f"records reproduced: {same}/{len(records)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
