"""Tables of the ``gama`` family: ``gama_games`` (one row per game run), ``gama_rounds`` (per
round), ``gama_moves`` (per round and seat) and ``gama_players`` (per game run and seat).

The same four tables hold distbench's own games (``harness`` = the family's harness hash) and
GAMA-Bench records brought in by ``distbench import gama`` (``harness`` = ``'gama-bench'``), so
one query compares them. A game run is named by (run_id, game_id); a seat is 0-based (GAMA's
``player_<seat>``).
"""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f

_F64 = pa.float64()
_I32 = pa.int32()
_S = pa.string()

_KEY = [
    _f("run_id", _S, "Run id.", False),
    _f("shard_id", _S, "Shard that produced the row (an import: one shard per game folder).", False),
    _f("game_id", _S, "Game run id, unique in a run: 'gama/<game>/<table>/s<seed>/g<i>' (an import: 'gama/<game>/<file stem>', the auctions' 'gama/auction/<first|second>/<file stem>').", False),
    _f("game", _S, "One of guessing, bar, dollar, goods, diner, auction, battle, pirate.", False),
]

GAMA_GAMES = pa.schema(_KEY + [
    _f("variant", _S, "The game's mode: bar 'implicit'/'explicit' feedback, auction "
       "'first'/'second' price; '' for the other games.", False),
    _f("version", _S, "Template version: 'v1' (GAMA's wording) .. 'v5' (its rephrasings), or "
       "'distbench' for distbench's own prompts.", False),
    _f("run_index", _I32, "Run number of a leaderboard cell (GAMA's file suffix _1.._5); NULL "
       "for a record without one."),
    _f("run_tag", _S, "GAMA's file suffix after the version ('1'..'5', 'r3', 't0', ...), '' "
       "when none; distbench's own games: the game's index as text.", False),
    _f("source", _S, "Where the rows come from: the record's path relative to the imported "
       "folder (import), or 'play'.", False),
    _f("params_json", _S, "The game's parameters as JSON (rules.Params of the game).", False),
    _f("players", _I32, "Seats at the table.", False),
    _f("rounds", _I32, "Rounds played (stored round records).", False),
    _f("model", _S, "The model of every seat, or 'mixed' when seats differ.", False),
    _f("models", pa.list_(_S), "The model of each seat, in seat order.", False),
    _f("model_label", _S, "GAMA-Bench leaderboard name of the model (e.g. 'GPT-4o-0806'); "
       "NULL when the model is not on the board."),
    _f("seed", pa.int64(), "Seed of the game (distbench play); NULL for an import."),
    _f("gama_score", _F64, "GAMA-Bench's score of the game (0-100, scoring.gama_score); NULL "
       "when the game could not be scored."),
    _f("equilibrium_distance", _F64, "Mean over moves of each move's distance from the "
       "game's equilibrium (rules.equilibrium); NULL where the game has none."),
    _f("invalid_answers", _I32, "Moves whose answer was not valid (statuses other than 'ok').", False),
    _f("reasks", _I32, "Re-asks made over the game (GAMA re-asks without limit and keeps no "
       "count: 0 for an import).", False),
    _f("status", _S, "'ok', 'forfeit' (ended by an invalid answer), 'failed' or 'malformed' "
       "(an import whose rounds could not be read).", False),
    _f("detail", _S, "Why when status is not 'ok' ('' otherwise).", False),
    _f("harness", _S, "Hash of the harness that made the rows (prompts, parser, scorer, family "
       "version); 'gama-bench' for imported records.", False),
])

GAMA_ROUNDS = pa.schema(_KEY + [
    _f("round", _I32, "Round number (1-based).", False),
    _f("actors", pa.list_(_I32), "Seats that answered this round (every living seat; Battle "
       "Royale: the shooter; Pirate Game: the proposer then the voters).", False),
    _f("aggregates_json", _S, "The round's outcome as JSON, in GAMA's round-record keys "
       "(mean, mean_ratio, go_num, total_proposal, valuations, shot_player, "
       "gold_distribution, ...).", False),
    _f("mean_answer", _F64, "Mean numeric answer of the round (guess, bid, contribution); NULL "
       "for games of words."),
    _f("target", _F64, "Guessing: the target (ratio x mean); Bar: the go share; Dollar: the sum "
       "of bids; Goods: the pot; Diner: the cheap share; Auction: the winning bid; Pirate: "
       "the accept share; NULL otherwise."),
    _f("winners", pa.list_(_I32), "Seats that won the round (Guessing: closest to the target; "
       "Auction: the winning bidder; Pirate: empty until a plan passes).", False),
    _f("survivors", pa.list_(_I32), "Seats still in the game after the round.", False),
    _f("round_score", _F64, "The round's term of GAMA's score (e.g. |go share - capacity|, "
       "the mean (v - b)/v); NULL where GAMA scores the game as a whole."),
])

GAMA_MOVES = pa.schema(_KEY + [
    _f("round", _I32, "Round number (1-based).", False),
    _f("seat", _I32, "Seat (0-based; GAMA's player_<seat>).", False),
    _f("player", _S, "Who sat there: '<provider>:<model>', a scripted player's name, or the "
       "model recorded by GAMA.", False),
    _f("model", _S, "The model name of the seat (the scripted player's name for one).", False),
    _f("role", _S, "'answer' (simultaneous games), 'shoot', 'propose' or 'vote'.", False),
    _f("answer_raw", _S, "The answer text as the model wrote it; for an import GAMA's "
       "canonical echo of the parsed answer (GAMA keeps no raw text).", False),
    _f("answer", _S, "The parsed answer as text (a number, go/stay, a dish, a target seat or "
       "'null', a plan as JSON, accept/reject); NULL when invalid."),
    _f("answer_number", _F64, "The parsed answer as a number where it is one; NULL otherwise."),
    _f("status", _S, "'ok' or why the answer is invalid (no_json, bad_value, out_of_range, "
       "call_failed, ...).", False),
    _f("reasks", _I32, "Re-asks before this answer.", False),
    _f("payoff", _F64, "What the seat earned this round (GAMA's utility); NULL when the game "
       "gives none."),
    _f("equilibrium_distance", _F64, "Distance of the move from the game's equilibrium "
       "(rules.move_distance); NULL where the game has none."),
    _f("call_id", _S, "Row of the calls table; NULL for scripted players and imports."),
])

GAMA_PLAYERS = pa.schema(_KEY + [
    _f("seat", _I32, "Seat (0-based).", False),
    _f("player", _S, "Who sat there (as in gama_moves.player).", False),
    _f("model", _S, "The model name of the seat.", False),
    _f("moves", _I32, "Moves the seat made.", False),
    _f("valid_moves", _I32, "Of those, valid.", False),
    _f("total_payoff", _F64, "Sum of the seat's payoffs; NULL when the game gives none."),
    _f("mean_distance", _F64, "Mean distance of the seat's moves from the equilibrium; NULL "
       "where the game has none."),
    _f("survived", pa.bool_(), "Still in the game at its end (Battle Royale, Pirate Game; "
       "true in the other games).", False),
    _f("rank", _I32, "Finishing order by total payoff, 1 = best, ties share the best rank "
       "(Battle Royale: survivors first, then later eliminations).", False),
])

TABLES: dict[str, pa.Schema] = {
    "gama_games": GAMA_GAMES,
    "gama_rounds": GAMA_ROUNDS,
    "gama_moves": GAMA_MOVES,
    "gama_players": GAMA_PLAYERS,
}
"""The family's tables by name (handed to the store by the family's registration)."""
