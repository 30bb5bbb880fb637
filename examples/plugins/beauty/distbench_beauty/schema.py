"""The ``beauty_games`` table: one row per game (every column described, as distbench asks)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column

BEAUTY_GAMES = pa.schema([
    column("run_id", pa.string(), "Run id.", False),
    column("shard_id", pa.string(), "Shard that produced the row.", False),
    column("family", pa.string(), "Game family: 'beauty'.", False),
    column("game_id", pa.string(), "Stable game id 'beauty/s<seed>/g<index>/n<players>/p<fraction>'.", False),
    column("seed", pa.int64(), "Seed of the game stream.", False),
    column("game_index", pa.int64(), "Index of the game in its stream.", False),
    column("player", pa.string(), "The model: '<provider>:<model>'.", False),
    column("num_players", pa.int32(), "Players in the game, the model included.", False),
    column("fraction", pa.float64(), "p: the target is p times the mean of all guesses.", False),
    column("opponent_levels", pa.list_(pa.int32()), "Reasoning level of each scripted opponent (0: uniform random; k: 50 p^k).", False),
    column("opponent_guesses", pa.list_(pa.int32()), "The scripted opponents' guesses (0-100).", False),
    column("guess", pa.int32(), "The model's guess (0-100); NULL when its answer was not a valid guess."),
    column("parse_status", pa.string(), "ok, no_answer (no number), out_of_range (not 0-100) or call_failed.", False),
    column("raw_text", pa.string(), "The model's answer as returned; NULL when the call failed."),
    column("target", pa.float64(), "p times the mean of every valid guess (the model's included when valid).", False),
    column("distance", pa.float64(), "|guess - target|; NULL when the guess is invalid."),
    column("best_guess", pa.int32(), "The integer guess closest to its own resulting target, given the opponents' guesses.", False),
    column("regret", pa.float64(), "distance minus the distance of best_guess (0 = a best response); NULL when invalid."),
    column("won", pa.bool_(), "The model's guess was closest to the target (ties count as wins); NULL when invalid."),
])

TABLES = {"beauty_games": BEAUTY_GAMES}
