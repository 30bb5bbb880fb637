"""The bimatrix family's tables: ``bimatrix_games`` (one row per game) and ``bimatrix_trials``
(one row per answer and opponent). Every column is described once here."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f

_F64 = pa.float64()
_LIST = pa.list_(pa.float64())
_MATRIX = pa.list_(_LIST)

BIMATRIX_GAMES = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("family", pa.string(), "Game family: 'bimatrix'.", False),
    _f("game_set", pa.string(), "Where the game comes from: a bucket '3x3_midVar', a type 'type:rg017' or a class 'class:stag_hunt'.", False),
    _f("set_kind", pa.string(), "'bucket', 'type' or 'class'.", False),
    _f("game_class", pa.string(), "The class name for class games, else NULL."),
    _f("seed", pa.int64(), "Seed of the game stream.", False),
    _f("game_index", pa.int64(), "Index of the game in its (set, seed) stream.", False),
    _f("game_id", pa.string(), "Stable game id '<set>/s<seed>/g<index>'.", False),
    _f("rows", pa.int32(), "Row player's actions.", False),
    _f("cols", pa.int32(), "Column player's actions.", False),
    _f("payoff_row", _MATRIX, "A: the row player's payoffs, rows x cols.", False),
    _f("payoff_col", _MATRIX, "B: the column player's payoffs, rows x cols.", False),
    _f("num_eq", pa.int32(), "Nash equilibria listed (eq1, eq2, ... in that order: pure ones first): every equilibrium by support enumeration; in a degenerate game every extreme equilibrium by vertex enumeration.", False),
    _f("eq_row", _MATRIX, "Each equilibrium's row strategy.", False),
    _f("eq_col", _MATRIX, "Each equilibrium's column strategy.", False),
    _f("eq_row_value", _LIST, "Each equilibrium's payoff to the row player.", False),
    _f("eq_col_value", _LIST, "Each equilibrium's payoff to the column player.", False),
    _f("num_pure_eq", pa.int32(), "Pure equilibria (cells).", False),
    _f("degenerate", pa.bool_(), "The game is degenerate or could not be shown not to be: its equilibria are listed by vertex enumeration, every extreme equilibrium (a continuum by its extreme points).", False),
    _f("maximin_row", _F64, "The row player's security level (mixed maximin value).", False),
    _f("maximin_col", _F64, "The column player's security level (mixed maximin value).", False),
    _f("max_welfare", _F64, "Largest A + B over the cells (the welfare optimum).", False),
    _f("num_pareto", pa.int32(), "Pareto-optimal cells.", False),
])

BIMATRIX_TRIALS = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("shard_id", pa.string(), "Shard that produced the row.", False),
    _f("family", pa.string(), "Game family: 'bimatrix'.", False),
    _f("game_set", pa.string(), "The game's set (see bimatrix_games).", False),
    _f("set_kind", pa.string(), "'bucket', 'type' or 'class'.", False),
    _f("game_class", pa.string(), "The class name for class games, else NULL."),
    _f("seed", pa.int64(), "Seed of the game stream.", False),
    _f("game_id", pa.string(), "Stable game id.", False),
    _f("game_index", pa.int64(), "Index of the game in its stream.", False),
    _f("seat", pa.string(), "The model's seat: 'row' or 'col'.", False),
    _f("opponent", pa.string(), "Who the model faced: 'eq1', 'eq2', ... (that equilibrium's strategy of the other seat), 'uniform', 'class' (the class rule: action 1), 'self' or a model '<provider>:<model>'.", False),
    _f("opponent_kind", pa.string(), "'equilibrium', 'uniform', 'class', 'self' or 'model'.", False),
    _f("provider", pa.string(), "The model's provider.", False),
    _f("model", pa.string(), "The model.", False),
    _f("mode", pa.string(), "'pure', 'mixed' or 'logprob'.", False),
    _f("trial", pa.int32(), "Trial number within (game, seat, mode); the same answer is scored against every opponent.", False),
    _f("decision", pa.int32(), "Pure mode: the model's action, 0-based among its own actions; NULL otherwise or when invalid."),
    _f("strategy", _LIST, "The model's strategy over its own actions (one-hot in pure mode); NULL when invalid."),
    _f("opponent_strategy", _LIST, "The opponent's strategy over its actions; NULL when a model opponent's answer was invalid."),
    _f("parse_status", pa.string(), "The model's answer: ok or why not (the shared parser's statuses; call_failed).", False),
    _f("parse_detail", pa.string(), "Parser's explanation.", False),
    _f("raw_text", pa.string(), "The model's answer as returned (logprob mode: the generated text)."),
    _f("opponent_status", pa.string(), "A model opponent's parse status; 'ok' for scripted opponents.", False),
    _f("label_mass", _F64, "Logprob mode: probability on the action labels; NULL otherwise."),
    _f("value", _F64, "x'Py: the model's expected payoff (P its own payoff matrix, seen from its seat); NULL when invalid."),
    _f("br_value", _F64, "max_a (Py)_a: the best payoff against the opponent faced; NULL when the opponent is unknown."),
    _f("regret", _F64, "br_value - value >= 0: the Nash gap generalised to the opponent faced; NULL when invalid."),
    _f("quality", _F64, "The headline's quality: 1 - regret / (br_value - min_a (Py)_a), in [0, 1] (1 when every action earns the same); 0 when the model's answer is invalid (in self-play, also when its answer in the other seat is); NULL (left out, counted as missing) when a call of the model failed or another model opponent's answer is not valid."),
    _f("eq_consistent", pa.bool_(), "Pure: the action is in the support of some equilibrium's strategy of the model's seat; mixed: the strategy equals one within 1e-6, or, in a degenerate game, is the seat's strategy in some equilibrium (an LP: inside a continuum too). NULL when invalid."),
    _f("dist_to_eq", _F64, "min over equilibria of ||x - x*||_1; NULL when invalid."),
    _f("welfare_ratio", _F64, "(x'Ay + x'By) / max_welfare of the joint play; NULL when invalid or max_welfare <= 0."),
    _f("dominated", pa.bool_(), "The model's strategy puts weight on an action strictly dominated by another pure action; NULL when invalid."),
    _f("cooperate", _F64, "Probability of action 1 (cooperate, stag, swerve) in classes that have a cooperative action; NULL otherwise or when invalid."),
    _f("coordinated", _F64, "Probability that the joint play lands on a pure equilibrium cell; NULL when invalid."),
    _f("degenerate", pa.bool_(), "The game is flagged degenerate (see bimatrix_games).", False),
    _f("call_id", pa.string(), "The call that answered (NULL for in-process models)."),
    _f("latency_ms", _F64, "Latency of the model's call."),
])

BIMATRIX_DUELS = pa.schema([
    _f("run_id", pa.string(), "Run id.", False),
    _f("shard_id", pa.string(), "Shard that produced the row.", False),
    _f("family", pa.string(), "Game family: 'bimatrix'.", False),
    _f("duel_id", pa.string(), "Stable id of the play '<game_id>/p<pairing hash>/o<seat_order>'.", False),
    _f("game_id", pa.string(), "The game played (as bimatrix_games names it): the same in both seat orders and for every pairing of a tournament.", False),
    _f("game_set", pa.string(), "The game's set.", False),
    _f("set_kind", pa.string(), "'bucket', 'type' or 'class'.", False),
    _f("game_class", pa.string(), "The class name for class games, else NULL."),
    _f("seed", pa.int64(), "Seed of the game stream.", False),
    _f("game_index", pa.int64(), "Index of the game in its (set, seed) stream.", False),
    _f("player_row", pa.string(), "The row seat's player: 'eq' (the game's first equilibrium), 'uniform', 'maxmin', 'class' (the class rule: action 1) or '<provider>:<model>'.", False),
    _f("player_col", pa.string(), "The column seat's player.", False),
    _f("seat_order", pa.int32(), "0: the pairing's first player sits in the row seat; 1: the seats are swapped.", False),
    _f("mode", pa.string(), "How the models answered: 'pure' (one action) or 'mixed' (a strategy).", False),
    _f("payoff_row", _MATRIX, "A: the row seat's payoffs, rows x cols.", False),
    _f("payoff_col", _MATRIX, "B: the column seat's payoffs, rows x cols.", False),
    _f("strategy_row", _LIST, "The row seat's strategy over its actions (one-hot for a pure answer); NULL when its answer is invalid."),
    _f("strategy_col", _LIST, "The column seat's strategy over its actions; NULL when invalid."),
    _f("status_row", pa.string(), "The row seat's answer: ok or why not (the shared parser's statuses; call_failed); 'ok' for scripted players.", False),
    _f("status_col", pa.string(), "The column seat's answer status.", False),
    _f("detail_row", pa.string(), "Parser's explanation of the row seat's answer (a scripted player's note).", False),
    _f("detail_col", pa.string(), "Parser's explanation of the column seat's answer.", False),
    _f("raw_row", pa.string(), "The row seat's answer as returned; NULL for scripted players."),
    _f("raw_col", pa.string(), "The column seat's answer as returned; NULL for scripted players."),
    _f("value_row", _F64, "x'Ay: the row seat's expected payoff of the joint play; NULL when either answer is invalid."),
    _f("value_col", _F64, "x'By: the column seat's expected payoff; NULL when either answer is invalid."),
    _f("status", pa.string(), "'complete'; 'forfeit' (a seat's answer is invalid: never a substituted action); 'call_failed' (a model call failed at the server: no seat's doing, left out of a tournament's ratings).", False),
    _f("score_row", _F64, "The row seat's score in a tournament: value_row normalised to the row seat's payoff range, (value_row - min A) / (max A - min A) in [0, 1] (1 when A is constant); a forfeit scores 0 for the seat whose answer is invalid and 1 for the other (0 both when both are); NULL for call_failed."),
    _f("score_col", _F64, "The column seat's score in a tournament (as score_row, over B)."),
    _f("call_id_row", pa.string(), "The row seat's call (NULL for scripted players and in-process models)."),
    _f("call_id_col", pa.string(), "The column seat's call."),
])

TABLES = {"bimatrix_games": BIMATRIX_GAMES, "bimatrix_trials": BIMATRIX_TRIALS}
"""The tables of a run of the family (``distbench run``)."""
PAIRING_TABLES = {"bimatrix_duels": BIMATRIX_DUELS}
"""The table of a tournament's pairings (:mod:`.pairing`)."""
FAMILY_TABLES = {**TABLES, **PAIRING_TABLES}
"""Every table of the family (``Family.tables``)."""
