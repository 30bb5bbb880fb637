"""A record in GAMA-Bench's format (written here) played again by the engine through the
replay provider (``distbench.games.gama.recheck``, what ``benchmarks/bench_gama_replay.py``
runs over the 520 leaderboard records): its round records are reproduced, including a tie
GAMA broke by seat order in a round whose stored ``responses`` it had shuffled; a record the
engine does not reproduce is named with the key and both values."""

from __future__ import annotations

import json

from distbench.games.gama.recheck import replay_record, round_difference
from distbench.games.gama.records import read_record


def _guessing(tmp_path, winner=8):
    # Round 1: seats answer 8, 12, 25; mean 15, target 10: 8 and 12 tie, GAMA's min() keeps
    # the first in seat order (8). The stored responses are shuffled, as GAMA reports them.
    by_seat = [[8, 10], [12, 5], [25, 0]]
    rounds = []
    for t in range(2):
        answers = [seat[t] for seat in by_seat]
        mean = sum(answers) / len(answers)
        best = min(answers, key=lambda x: abs(x - mean * 2 / 3))
        rounds.append({"responses": answers[1:] + answers[:1], "mean": mean,
                       "mean_ratio": mean * 2 / 3, "winner": best,
                       "winner_num": answers.count(best)})
    rounds[0]["winner"] = winner
    players = [{"model": "m", "id": f"player_{s}", "records": r, "utility": [],
                "prompt": [{"role": "system", "content": "rules"}]}
               for s, r in enumerate(by_seat)]
    meta = {"name_exp": "m_guessing_game_v1_1", "player_num": 3, "min": 0, "max": 100,
            "ratio": 2 / 3, "ratio_str": "2/3", "round_id": 2, "version": "v1"}
    path = tmp_path / "guessing_game" / "m_guessing_game_v1_1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"meta": meta, "round_records": rounds, "player_data": players}))
    return read_record(path)


def test_the_engine_replays_a_record_with_a_tie_broken_in_seat_order(tmp_path):
    rec = _guessing(tmp_path)
    produced, game = replay_record(rec)
    assert game["status"] == "ok" and game["rounds"] == 2
    assert [r["winner"] for r in produced] == [8, 5]
    assert round_difference(rec, produced) is None


def test_a_round_the_engine_does_not_reproduce_is_named(tmp_path):
    rec = _guessing(tmp_path, winner=12)
    produced, _ = replay_record(rec)
    assert round_difference(rec, produced) == "round 1 winner: stored 12, replayed 8"
    assert round_difference(rec, produced[:1]) == "1 rounds played, 2 stored"
