"""The repeated family's tables: ``repeated_matches`` (one row per match) and ``rounds`` (one
row per round). Every column is described once here."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f

_F64 = pa.float64()

REPEATED_MATCHES = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("shard_id", pa.string(), "Shard that produced the row.", False),
    _f("family", pa.string(), "Game family: 'repeated'.", False),
    _f("match_id", pa.string(), "Stable match id '<stage>/<opponent>/s<seed>/m<index>'.", False),
    _f("stage", pa.string(), "The stage game's class (a bimatrix class, e.g. 'prisoners_dilemma').", False),
    _f("seed", pa.int64(), "Seed of the match stream.", False),
    _f("match_index", pa.int64(), "Index of the match in its (stage, opponent, seed) stream.", False),
    _f("opponent", pa.string(), "The opponent: an axelrod strategy name (e.g. 'TitForTat') or 'self'.", False),
    _f("opponent_kind", pa.string(), "'strategy' (a finite-state machine) or 'self'.", False),
    _f("provider", pa.string(), "The model's provider.", False),
    _f("model", pa.string(), "The model.", False),
    _f("payoff_row", pa.list_(pa.list_(_F64)), "The stage game's payoffs to the model (row player), 2x2: action 1 cooperates.", False),
    _f("payoff_col", pa.list_(pa.list_(_F64)), "The stage game's payoffs to the opponent (column player).", False),
    _f("horizon", pa.int32(), "Known horizon T told to the model; NULL when the game goes on with a continuation probability."),
    _f("continuation", _F64, "The continuation probability told to the model; NULL with a known horizon."),
    _f("rounds_planned", pa.int32(), "Rounds the match lasts (T, or drawn from the continuation probability).", False),
    _f("rounds_played", pa.int32(), "Rounds played (fewer when the model forfeited).", False),
    _f("status", pa.string(), "'complete'; 'forfeit' (an invalid answer of the model ended the match, in self-play of either seat: never a substituted move); 'call_failed' (a model call failed at the server: not the model's, left out of the headline); 'opponent_forfeit' (another model opponent's invalid answer ended it: not the model's, left out).", False),
    _f("total", _F64, "The model's total payoff over the rounds played.", False),
    _f("mean_payoff", _F64, "total / rounds_played; NULL when no round was played."),
    _f("best_total", _F64, "The best (expected, for a stochastic opponent) total over rounds_planned against the opponent's machine, by dynamic programming; NULL for self-play."),
    _f("regret", _F64, "best_total - total for a complete match against a machine; NULL otherwise."),
    _f("cooperation_rate", _F64, "Share of the model's moves that cooperate (action 1); NULL when no round was played."),
    _f("retaliation_rate", _F64, "Share of the rounds after an opponent's defection where the model defects; NULL when the opponent never defected before the last round."),
    _f("forgiveness_rate", _F64, "Share of the rounds after a retaliation (the model defected right after an opponent's defection) where the model cooperates; NULL when it never retaliated before the last round."),
    _f("exploitation", _F64, "Against Cooperator: (total - rounds_played R) / (rounds_played (T - R)), the share of the temptation gain taken; NULL against others."),
    _f("first_defection", pa.int32(), "Round (1-based) of the model's first defection; NULL when it never defected."),
    _f("brier", _F64, "--predict: mean Brier score of the model's predictions that the opponent cooperates; NULL without predictions."),
    _f("log_loss", _F64, "--predict: mean log loss of those predictions (probabilities clipped to [1e-6, 1 - 1e-6])."),
    _f("predictions", pa.int32(), "Rounds with a valid prediction.", False),
    _f("worst_total", _F64, "The worst (expected) total over rounds_planned against the opponent's machine (the same dynamic programming with the minimum); NULL for self-play and model opponents."),
    _f("quality", _F64, "The headline's quality in [0, 1]: a complete match against a machine (total - worst_total) / (best_total - worst_total) clipped to [0, 1] (1 when they are equal), against the model itself or another model (total - rounds_planned min u) / (rounds_planned (max u - min u)) over the stage payoffs u; 0 for a forfeit; NULL (left out, counted as missing) for call_failed and opponent_forfeit."),
])

ROUNDS = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("shard_id", pa.string(), "Shard that produced the row.", False),
    _f("match_id", pa.string(), "The match (see repeated_matches).", False),
    _f("round", pa.int32(), "Round number, 1-based.", False),
    _f("opponent", pa.string(), "The opponent.", False),
    _f("action", pa.int32(), "The model's move: 0 cooperate (action 1), 1 defect (action 2); NULL when invalid.", True),
    _f("opponent_action", pa.int32(), "The opponent's move (0 cooperate, 1 defect); NULL when the model's move was invalid.", True),
    _f("payoff", _F64, "The model's payoff this round; NULL when invalid."),
    _f("opponent_payoff", _F64, "The opponent's payoff this round; NULL when invalid."),
    _f("parse_status", pa.string(), "The model's answer: ok or why not (the shared parser's statuses; call_failed).", False),
    _f("parse_detail", pa.string(), "Parser's explanation.", False),
    _f("raw_text", pa.string(), "The model's answer as returned."),
    _f("prediction", _F64, "--predict: the model's probability that the opponent cooperates this round; NULL when not asked or not given."),
    _f("prediction_status", pa.string(), "'ok', 'not_asked', 'missing' or 'out_of_range'.", False),
    _f("brier", _F64, "(prediction - [opponent cooperated])^2; NULL without a prediction."),
    _f("log_loss", _F64, "-log of the probability the prediction gave the opponent's move (clipped to [1e-6, 1 - 1e-6])."),
    _f("call_id", pa.string(), "The call that answered (NULL for in-process models)."),
    _f("latency_ms", _F64, "Latency of the call."),
])

REPEATED_DUELS = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("shard_id", pa.string(), "Shard that produced the row.", False),
    _f("family", pa.string(), "Game family: 'repeated'.", False),
    _f("match_id", pa.string(), "Stable match id '<stage>/s<seed>/m<index>/p<pairing hash>/o<seat_order>'.", False),
    _f("instance", pa.string(), "The stage game and length played, '<stage>/s<seed>/m<index>': the same in both seat orders and for every pairing of a tournament.", False),
    _f("stage", pa.string(), "The stage game's class.", False),
    _f("seed", pa.int64(), "Seed of the match stream.", False),
    _f("match_index", pa.int64(), "Index of the match in its (stage, seed) stream (the stage game drawn as repeated_matches draws it).", False),
    _f("player_row", pa.string(), "The row seat's player: an axelrod strategy name or '<provider>:<model>'.", False),
    _f("player_col", pa.string(), "The column seat's player.", False),
    _f("seat_order", pa.int32(), "0: the pairing's first player sits in the row seat; 1: the seats are swapped.", False),
    _f("payoff_row", pa.list_(pa.list_(_F64)), "The stage game's payoffs to the row seat, 2x2 (rows: the row seat's action; action 1 cooperates).", False),
    _f("payoff_col", pa.list_(pa.list_(_F64)), "The stage game's payoffs to the column seat, same layout.", False),
    _f("horizon", pa.int32(), "Known horizon T told to the models; NULL with a continuation probability."),
    _f("continuation", _F64, "The continuation probability told to the models; NULL with a known horizon."),
    _f("rounds_planned", pa.int32(), "Rounds the match lasts.", False),
    _f("rounds_played", pa.int32(), "Rounds played (fewer after a forfeit or a failed call).", False),
    _f("status", pa.string(), "'complete'; 'forfeit' (an invalid answer of a seat ended the match; never a substituted move); 'call_failed' (a model call failed at the server: no seat's doing, left out of a tournament's ratings).", False),
    _f("forfeit_seat", pa.string(), "'row', 'col' or 'both': whose answer forfeited; NULL otherwise."),
    _f("forfeit_status", pa.string(), "Parse status of the forfeiting answer (of the row seat's when both forfeited); NULL otherwise."),
    _f("forfeit_text", pa.string(), "The forfeiting answer as returned (the row seat's when both forfeited); NULL otherwise."),
    _f("moves_row", pa.list_(pa.int32()), "The row seat's moves, round by round (0 cooperate, 1 defect).", False),
    _f("moves_col", pa.list_(pa.int32()), "The column seat's moves.", False),
    _f("total_row", _F64, "The row seat's total payoff over the rounds played.", False),
    _f("total_col", _F64, "The column seat's total payoff over the rounds played.", False),
    _f("mean_row", _F64, "total_row / rounds_played; NULL when no round was played."),
    _f("mean_col", _F64, "total_col / rounds_played; NULL when no round was played."),
    _f("cooperation_row", _F64, "Share of the row seat's moves that cooperate; NULL when no round was played."),
    _f("cooperation_col", _F64, "Share of the column seat's moves that cooperate; NULL when no round was played."),
    _f("score_row", _F64, "The row seat's score in a tournament: mean_row of a complete match; a forfeit scores the stage game's lowest payoff for the seat that forfeited and its highest for the other (both lowest when both did); NULL for call_failed."),
    _f("score_col", _F64, "The column seat's score in a tournament (as score_row)."),
    _f("num_calls", pa.int32(), "Model calls made.", False),
])

TABLES = {"repeated_matches": REPEATED_MATCHES, "rounds": ROUNDS}
"""The tables of a run of the family (``distbench run``)."""
PAIRING_TABLES = {"repeated_duels": REPEATED_DUELS}
"""The table of a tournament's pairings (:mod:`.pairing`)."""
FAMILY_TABLES = {**TABLES, **PAIRING_TABLES}
"""Every table of the family (``Family.tables``)."""
