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
    _f("status", pa.string(), "'complete', or 'forfeit' (an invalid answer ended the match: never a substituted move).", False),
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

TABLES = {"repeated_matches": REPEATED_MATCHES, "rounds": ROUNDS}
