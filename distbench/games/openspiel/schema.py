"""Columns of the openspiel tables ``matches``, ``moves`` and ``openspiel_policies`` (registered by the
store with the family)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import row_key, table

MATCHES = table("""
match_id         string         not null  Stable match id '<game>/s<seed>/g<index>/p<pairing
                                          hash>/o<seat_order>'.
game             string         not null  The OpenSpiel game string as given (registry name and
                                          parameters).
seed             int64          not null  Seed of the match's chance outcomes (the same deal in both
                                          seat orders).
game_index       int64          not null  Index of the match in its seed's stream.
player_a         string         not null  The evaluated player: '<provider>:<model>' (in a
                                          tournament, either player of the pairing, a scripted one
                                          included: 'random', 'equilibrium' or 'mcts').
player_b         string         not null  The opponent: '<provider>:<model>', 'random',
                                          'equilibrium' or 'mcts'.
seat_a           int32          not null  OpenSpiel player id (0 moves first) of player_a; player_b
                                          has the other seat.
returns          list<float64>            OpenSpiel's returns per player id at the end; NULL when
                                          the match ended by a forfeit or a failed call.
return_a         float64                  player_a's return; NULL when forfeited or a call failed.
outcome_a        string         not null  player_a's result: 'win' (return > 0, or the opponent
                                          forfeited), 'draw', 'loss', 'forfeit' (player_a's answer
                                          was illegal or unparsable) or 'call_failed' (a model call
                                          failed: left out of every figure).
forfeit_seat     int32                    Player id whose answer forfeited the match; NULL
                                          otherwise.
forfeit_status   string                   Parse status of the forfeiting answer (no_answer,
                                          out_of_range, ambiguous, empty, ...); NULL otherwise.
quality_a        float64                  Headline quality of player_a's match: win 1, draw 0.5,
                                          loss 0, forfeit 0; NULL when a call failed.
num_moves        int32          not null  Player moves made (rows of moves, the forfeiting answer
                                          included).
moves_a          int32          not null  Moves of player_a (its forfeiting answer included).
regret_a         float64                  Mean regret of player_a's legal moves against the
                                          reference (game utility units); NULL without a reference
                                          or a move.
reference        string         not null  Reference of the regrets: 'minimax', 'equilibrium' or
                                          'none'.
reference_name   string         not null  Which reference exactly: 'minimax values (unique)', or the
                                          equilibrium (how it was computed, its NashConv; for Kuhn
                                          poker its alpha, the first player's probability of betting
                                          a jack), or why there is none. Regrets under another
                                          equilibrium differ.
chance_outcomes  list<int64>    not null  Chance actions drawn, in order (from the seeded
                                          generator).
num_calls        int32          not null  Model calls made.
""", head=row_key("openspiel"))

MOVES = table("""
match_id          string        not null  Match (joins matches.match_id).
ply               int32         not null  Index of the player move in the match, from 0 (chance
                                          moves are not counted).
seat              int32         not null  OpenSpiel player id that moved.
player_label      string        not null  Who moved: '<provider>:<model>', 'random', 'equilibrium'
                                          or 'mcts'.
is_a              bool          not null  The mover is player_a (the evaluated player).
info_state        string        not null  The mover's information state string, as OpenSpiel writes
                                          it (what the model was shown).
legal_actions     list<string>  not null  The legal actions' names (state.action_to_string),
                                          numbered 1..m in the prompt.
legal_action_ids  list<int64>   not null  OpenSpiel's ids of the legal actions, aligned with
                                          legal_actions.
raw_text          string                  The model's answer, verbatim; NULL for a scripted player
                                          or a failed call.
parse_status      string        not null  'ok', why the answer is not a legal move (no_answer,
                                          out_of_range, ambiguous, empty, ...: a forfeit), or
                                          'call_failed'.
parse_detail      string        not null  Short reason when not ok ('' otherwise).
action            int64                   OpenSpiel id of the action played; NULL when the answer
                                          was not a legal move.
action_name       string                  Name of the action played; NULL when none.
regret            float64                 Best action value minus the played action's value under
                                          the reference (0 for a best move); NULL without a
                                          reference value or a move.
set_regret        float64                 The least regret of the played action over every
                                          equilibrium of the game (<= regret); exact for two-player
                                          Kuhn poker; for Leduc poker and Liar's Dice the least over
                                          four equilibria (the reference, the sequence-form LP's
                                          widest equilibrium and their two mixes: an upper bound, 0
                                          for moves an equilibrium plays); NULL elsewhere and
                                          without a move.
best_value        float64                 The best legal action's value for the mover under the
                                          reference; NULL without one.
action_value      float64                 The played action's value under the reference; NULL
                                          without one or a move.
call_id           string                  Row of the calls table; NULL for scripted players.
latency_ms        float64                 Latency of the model call in milliseconds (timing column);
                                          NULL for scripted players.
""", head=row_key())

POLICIES = table("""
game              string         not null  The OpenSpiel game string.
player_a          string         not null  The model asked: '<provider>:<model>'.
info_state        string         not null  Information state string (one row per information state
                                           of the game).
seat              int32          not null  Player id acting there.
legal_actions     list<string>   not null  Legal actions' names, numbered 1..m in the prompt.
legal_action_ids  list<int64>    not null  OpenSpiel's ids of the legal actions.
probs             list<float64>            The model's probabilities of the legal actions, read from
                                           its next-token log-probabilities (renormalised over the
                                           labels); NULL when not ok.
parse_status      string         not null  'ok', 'low_label_mass', 'no_answer', 'non_finite' or
                                           'call_failed'.
label_mass        float64                  Probability found on the labels 1..m before
                                           renormalising.
raw_text          string                   The first call's text (the most likely continuation).
call_id           string                   The first call's row of the calls table.
""", head=row_key("openspiel"))

TABLES: dict[str, pa.Schema] = {"matches": MATCHES, "moves": MOVES, "openspiel_policies": POLICIES}
