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
from distbench.store.fields import table

_S = pa.string()

_KEY = [
    _f("run_id", _S, "Run id.", False),
    _f("shard_id", _S, "Shard that produced the row (an import: one shard per game folder).", False),
    _f("game_id", _S, "Game run id, unique in a run: 'gama/<game>/<table>/s<seed>/g<i>' (an import: 'gama/<game>/<file stem>', the auctions' 'gama/auction/<first|second>/<file stem>').", False),
    _f("game", _S, "One of guessing, bar, dollar, goods, diner, auction, battle, pirate.", False),
]

GAMA_GAMES = table("""
variant               string        not null  The game's mode: bar 'implicit'/'explicit' feedback,
                                              auction 'first'/'second' price; '' for the other
                                              games.
version               string        not null  Template version: 'v1' (GAMA's wording) .. 'v5' (its
                                              rephrasings), or 'distbench' for distbench's own
                                              prompts.
run_index             int32                   Run number of a leaderboard cell (GAMA's file suffix
                                              _1.._5); NULL for a record without one.
run_tag               string        not null  GAMA's file suffix after the version ('1'..'5', 'r3',
                                              't0', ...), '' when none; distbench's own games: the
                                              game's index as text.
source                string        not null  Where the rows come from: the record's path relative
                                              to the imported folder (import), or 'play'.
params_json           string        not null  The game's parameters as JSON (rules.Params of the
                                              game).
players               int32         not null  Seats at the table.
rounds                int32         not null  Rounds played (stored round records).
model                 string        not null  The model of every seat, or 'mixed' when seats differ.
models                list<string>  not null  The model of each seat, in seat order.
model_label           string                  GAMA-Bench leaderboard name of the model (e.g.
                                              'GPT-4o-0806'); NULL when the model is not on the
                                              board.
seed                  int64                   Seed of the game (distbench play); NULL for an import.
gama_score            float64                 GAMA-Bench's score of the game (0-100,
                                              scoring.gama_score); NULL when the game could not be
                                              scored.
equilibrium_distance  float64                 Mean over moves of each move's distance from the
                                              game's equilibrium (rules.equilibrium); NULL where the
                                              game has none.
invalid_answers       int32         not null  Moves whose answer was not valid (statuses other than
                                              'ok').
reasks                int32         not null  Re-asks made over the game (GAMA re-asks without limit
                                              and keeps no count: 0 for an import).
status                string        not null  'ok', 'forfeit' (ended by an invalid answer), 'failed'
                                              or 'malformed' (an import whose rounds could not be
                                              read).
detail                string        not null  Why when status is not 'ok' ('' otherwise).
harness               string        not null  Hash of the harness that made the rows (prompts,
                                              parser, scorer, family version); 'gama-bench' for
                                              imported records.
""", head=_KEY)

GAMA_ROUNDS = table("""
round            int32        not null  Round number (1-based).
actors           list<int32>  not null  Seats that answered this round (every living seat; Battle
                                        Royale: the shooter; Pirate Game: the proposer then the
                                        voters).
aggregates_json  string       not null  The round's outcome as JSON, in GAMA's round-record keys
                                        (mean, mean_ratio, go_num, total_proposal, valuations,
                                        shot_player, gold_distribution, ...).
mean_answer      float64                Mean numeric answer of the round (guess, bid, contribution);
                                        NULL for games of words.
target           float64                Guessing: the target (ratio x mean); Bar: the go share;
                                        Dollar: the sum of bids; Goods: the pot; Diner: the cheap
                                        share; Auction: the winning bid; Pirate: the accept share;
                                        NULL otherwise.
winners          list<int32>  not null  Seats that won the round (Guessing: closest to the target;
                                        Auction: the winning bidder; Pirate: empty until a plan
                                        passes).
survivors        list<int32>  not null  Seats still in the game after the round.
round_score      float64                The round's term of GAMA's score (e.g. |go share -
                                        capacity|, the mean (v - b)/v); NULL where GAMA scores the
                                        game as a whole.
""", head=_KEY)

GAMA_MOVES = table("""
round                 int32    not null  Round number (1-based).
seat                  int32    not null  Seat (0-based; GAMA's player_<seat>).
player                string   not null  Who sat there: '<provider>:<model>', a scripted player's
                                         name, or the model recorded by GAMA.
model                 string   not null  The model name of the seat (the scripted player's name for
                                         one).
role                  string   not null  'answer' (simultaneous games), 'shoot', 'propose' or
                                         'vote'.
answer_raw            string   not null  The answer text as the model wrote it; for an import GAMA's
                                         canonical echo of the parsed answer (GAMA keeps no raw
                                         text).
answer                string             The parsed answer as text (a number, go/stay, a dish, a
                                         target seat or 'null', a plan as JSON, accept/reject); NULL
                                         when invalid.
answer_number         float64            The parsed answer as a number where it is one; NULL
                                         otherwise.
status                string   not null  'ok' or why the answer is invalid (no_json, bad_value,
                                         out_of_range, call_failed, ...).
reasks                int32    not null  Re-asks before this answer.
payoff                float64            What the seat earned this round (GAMA's utility); NULL when
                                         the game gives none.
equilibrium_distance  float64            Distance of the move from the game's equilibrium
                                         (rules.move_distance); NULL where the game has none.
call_id               string             Row of the calls table; NULL for scripted players and
                                         imports.
""", head=_KEY)

GAMA_PLAYERS = table("""
seat           int32    not null  Seat (0-based).
player         string   not null  Who sat there (as in gama_moves.player).
model          string   not null  The model name of the seat.
moves          int32    not null  Moves the seat made.
valid_moves    int32    not null  Of those, valid.
total_payoff   float64            Sum of the seat's payoffs; NULL when the game gives none.
mean_distance  float64            Mean distance of the seat's moves from the equilibrium; NULL where
                                  the game has none.
survived       bool     not null  Still in the game at its end (Battle Royale, Pirate Game; true in
                                  the other games).
rank           int32    not null  Finishing order by total payoff, 1 = best, ties share the best
                                  rank (Battle Royale: survivors first, then later eliminations).
""", head=_KEY)

TABLES: dict[str, pa.Schema] = {
    "gama_games": GAMA_GAMES,
    "gama_rounds": GAMA_ROUNDS,
    "gama_moves": GAMA_MOVES,
    "gama_players": GAMA_PLAYERS,
}
"""The family's tables by name (handed to the store by the family's registration)."""
