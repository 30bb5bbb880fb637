"""Columns of the openspiel tables ``matches``, ``moves`` and ``openspiel_policies`` (registered by the
store with the family)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f
from distbench.store.fields import row_key

_F64 = pa.float64()
_LIST_S = pa.list_(pa.string())
_LIST_I = pa.list_(pa.int64())
_LIST_F = pa.list_(pa.float64())

MATCHES = pa.schema([
    *row_key("openspiel"),
    _f("match_id", pa.string(), "Stable match id '<game>/s<seed>/g<index>/p<pairing hash>/o<seat_order>'.", False),
    _f("game", pa.string(), "The OpenSpiel game string as given (registry name and parameters).", False),
    _f("seed", pa.int64(), "Seed of the match's chance outcomes (the same deal in both seat orders).", False),
    _f("game_index", pa.int64(), "Index of the match in its seed's stream.", False),
    _f("player_a", pa.string(), "The evaluated player: '<provider>:<model>' (in a tournament, either player of the pairing, a scripted one included: 'random', 'equilibrium' or 'mcts').", False),
    _f("player_b", pa.string(), "The opponent: '<provider>:<model>', 'random', 'equilibrium' or 'mcts'.", False),
    _f("seat_a", pa.int32(), "OpenSpiel player id (0 moves first) of player_a; player_b has the other seat.", False),
    _f("returns", _LIST_F, "OpenSpiel's returns per player id at the end; NULL when the match ended by a forfeit or a failed call."),
    _f("return_a", _F64, "player_a's return; NULL when forfeited or a call failed."),
    _f("outcome_a", pa.string(), "player_a's result: 'win' (return > 0, or the opponent forfeited), 'draw', 'loss', 'forfeit' (player_a's answer was illegal or unparsable) or 'call_failed' (a model call failed: left out of every figure).", False),
    _f("forfeit_seat", pa.int32(), "Player id whose answer forfeited the match; NULL otherwise."),
    _f("forfeit_status", pa.string(), "Parse status of the forfeiting answer (no_answer, out_of_range, ambiguous, empty, ...); NULL otherwise."),
    _f("quality_a", _F64, "Headline quality of player_a's match: win 1, draw 0.5, loss 0, forfeit 0; NULL when a call failed."),
    _f("num_moves", pa.int32(), "Player moves made (rows of moves, the forfeiting answer included).", False),
    _f("moves_a", pa.int32(), "Moves of player_a (its forfeiting answer included).", False),
    _f("regret_a", _F64, "Mean regret of player_a's legal moves against the reference (game utility units); NULL without a reference or a move."),
    _f("reference", pa.string(), "Reference of the regrets: 'minimax', 'equilibrium' or 'none'.", False),
    _f("reference_name", pa.string(), "Which reference exactly: 'minimax values (unique)', or the equilibrium (how it was computed, its NashConv; for Kuhn poker its alpha, the first player's probability of betting a jack), or why there is none. Regrets under another equilibrium differ.", False),
    _f("chance_outcomes", _LIST_I, "Chance actions drawn, in order (from the seeded generator).", False),
    _f("num_calls", pa.int32(), "Model calls made.", False),
])

MOVES = pa.schema([
    *row_key(),
    _f("match_id", pa.string(), "Match (joins matches.match_id).", False),
    _f("ply", pa.int32(), "Index of the player move in the match, from 0 (chance moves are not counted).", False),
    _f("seat", pa.int32(), "OpenSpiel player id that moved.", False),
    _f("player_label", pa.string(), "Who moved: '<provider>:<model>', 'random', 'equilibrium' or 'mcts'.", False),
    _f("is_a", pa.bool_(), "The mover is player_a (the evaluated player).", False),
    _f("info_state", pa.string(), "The mover's information state string, as OpenSpiel writes it (what the model was shown).", False),
    _f("legal_actions", _LIST_S, "The legal actions' names (state.action_to_string), numbered 1..m in the prompt.", False),
    _f("legal_action_ids", _LIST_I, "OpenSpiel's ids of the legal actions, aligned with legal_actions.", False),
    _f("raw_text", pa.string(), "The model's answer, verbatim; NULL for a scripted player or a failed call."),
    _f("parse_status", pa.string(), "'ok', why the answer is not a legal move (no_answer, out_of_range, ambiguous, empty, ...: a forfeit), or 'call_failed'.", False),
    _f("parse_detail", pa.string(), "Short reason when not ok ('' otherwise).", False),
    _f("action", pa.int64(), "OpenSpiel id of the action played; NULL when the answer was not a legal move."),
    _f("action_name", pa.string(), "Name of the action played; NULL when none."),
    _f("regret", _F64, "Best action value minus the played action's value under the reference (0 for a best move); NULL without a reference value or a move."),
    _f("set_regret", _F64, "The least regret of the played action over every equilibrium of the game (<= regret); exact for two-player Kuhn poker; for Leduc poker and Liar's Dice the least over four equilibria (the reference, the sequence-form LP's widest equilibrium and their two mixes: an upper bound, 0 for moves an equilibrium plays); NULL elsewhere and without a move."),
    _f("best_value", _F64, "The best legal action's value for the mover under the reference; NULL without one."),
    _f("action_value", _F64, "The played action's value under the reference; NULL without one or a move."),
    _f("call_id", pa.string(), "Row of the calls table; NULL for scripted players."),
    _f("latency_ms", _F64, "Latency of the model call in milliseconds (timing column); NULL for scripted players."),
])

POLICIES = pa.schema([
    *row_key("openspiel"),
    _f("game", pa.string(), "The OpenSpiel game string.", False),
    _f("player_a", pa.string(), "The model asked: '<provider>:<model>'.", False),
    _f("info_state", pa.string(), "Information state string (one row per information state of the game).", False),
    _f("seat", pa.int32(), "Player id acting there.", False),
    _f("legal_actions", _LIST_S, "Legal actions' names, numbered 1..m in the prompt.", False),
    _f("legal_action_ids", _LIST_I, "OpenSpiel's ids of the legal actions.", False),
    _f("probs", _LIST_F, "The model's probabilities of the legal actions, read from its next-token log-probabilities (renormalised over the labels); NULL when not ok."),
    _f("parse_status", pa.string(), "'ok', 'low_label_mass', 'no_answer', 'non_finite' or 'call_failed'.", False),
    _f("label_mass", _F64, "Probability found on the labels 1..m before renormalising."),
    _f("raw_text", pa.string(), "The first call's text (the most likely continuation)."),
    _f("call_id", pa.string(), "The first call's row of the calls table."),
])

TABLES: dict[str, pa.Schema] = {"matches": MATCHES, "moves": MOVES, "openspiel_policies": POLICIES}
