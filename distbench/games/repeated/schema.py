"""The repeated family's tables: ``repeated_matches`` (one row per match) and ``rounds`` (one
row per round). Every column is described once here."""

from __future__ import annotations

from distbench.store.fields import table

REPEATED_MATCHES = table("""
run_id            string               not null  Run id.
shard_id          string               not null  Shard that produced the row.
family            string               not null  Game family: 'repeated'.
match_id          string               not null  Stable match id
                                                 '<stage>/<opponent>/s<seed>/m<index>'.
stage             string               not null  The stage game's class (a bimatrix class, e.g.
                                                 'prisoners_dilemma').
seed              int64                not null  Seed of the match stream.
match_index       int64                not null  Index of the match in its (stage, opponent, seed)
                                                 stream.
opponent          string               not null  The opponent: an axelrod strategy name (e.g.
                                                 'TitForTat') or 'self'.
opponent_kind     string               not null  'strategy' (a finite-state machine) or 'self'.
provider          string               not null  The model's provider.
model             string               not null  The model.
payoff_row        list<list<float64>>  not null  The stage game's payoffs to the model (row player),
                                                 2x2: action 1 cooperates.
payoff_col        list<list<float64>>  not null  The stage game's payoffs to the opponent (column
                                                 player).
horizon           int32                          Known horizon T told to the model; NULL when the
                                                 game goes on with a continuation probability.
continuation      float64                        The continuation probability told to the model;
                                                 NULL with a known horizon.
rounds_planned    int32                not null  Rounds the match lasts (T, or drawn from the
                                                 continuation probability).
rounds_played     int32                not null  Rounds played (fewer when the model forfeited).
status            string               not null  'complete'; 'forfeit' (an invalid answer of the
                                                 model ended the match, in self-play of either seat:
                                                 never a substituted move); 'call_failed' (a model
                                                 call failed at the server: not the model's, left
                                                 out of the headline); 'opponent_forfeit' (another
                                                 model opponent's invalid answer ended it: not the
                                                 model's, left out).
total             float64              not null  The model's total payoff over the rounds played.
mean_payoff       float64                        total / rounds_played; NULL when no round was
                                                 played.
best_total        float64                        The best (expected, for a stochastic opponent)
                                                 total over rounds_planned against the opponent's
                                                 machine, by dynamic programming; NULL for
                                                 self-play.
regret            float64                        best_total - total for a complete match against a
                                                 machine; NULL otherwise.
cooperation_rate  float64                        Share of the model's moves that cooperate (action
                                                 1); NULL when no round was played.
retaliation_rate  float64                        Share of the rounds after an opponent's defection
                                                 where the model defects; NULL when the opponent
                                                 never defected before the last round.
forgiveness_rate  float64                        Share of the rounds after a retaliation (the model
                                                 defected right after an opponent's defection) where
                                                 the model cooperates; NULL when it never retaliated
                                                 before the last round.
exploitation      float64                        Against Cooperator: (total - rounds_played R) /
                                                 (rounds_played (T - R)), the share of the
                                                 temptation gain taken; NULL against others.
first_defection   int32                          Round (1-based) of the model's first defection;
                                                 NULL when it never defected.
brier             float64                        --predict: mean Brier score of the model's
                                                 predictions that the opponent cooperates; NULL
                                                 without predictions.
log_loss          float64                        --predict: mean log loss of those predictions
                                                 (probabilities clipped to [1e-6, 1 - 1e-6]).
predictions       int32                not null  Rounds with a valid prediction.
worst_total       float64                        The worst (expected) total over rounds_planned
                                                 against the opponent's machine (the same dynamic
                                                 programming with the minimum); NULL for self-play
                                                 and model opponents.
quality           float64                        The headline's quality in [0, 1]: a complete match
                                                 against a machine (total - worst_total) /
                                                 (best_total - worst_total) clipped to [0, 1] (1
                                                 when they are equal), against the model itself or
                                                 another model (total - rounds_planned min u) /
                                                 (rounds_planned (max u - min u)) over the stage
                                                 payoffs u; 0 for a forfeit; NULL (left out, counted
                                                 as missing) for call_failed and opponent_forfeit.
""")

ROUNDS = table("""
run_id             string   not null  Run id.
shard_id           string   not null  Shard that produced the row.
match_id           string   not null  The match (see repeated_matches).
round              int32    not null  Round number, 1-based.
opponent           string   not null  The opponent.
action             int32              The model's move: 0 cooperate (action 1), 1 defect (action 2);
                                      NULL when invalid.
opponent_action    int32              The opponent's move (0 cooperate, 1 defect); NULL when the
                                      model's move was invalid.
payoff             float64            The model's payoff this round; NULL when invalid.
opponent_payoff    float64            The opponent's payoff this round; NULL when invalid.
parse_status       string   not null  The model's answer: ok or why not (the shared parser's
                                      statuses; call_failed).
parse_detail       string   not null  Parser's explanation.
raw_text           string             The model's answer as returned.
prediction         float64            --predict: the model's probability that the opponent
                                      cooperates this round; NULL when not asked or not given.
prediction_status  string   not null  'ok', 'not_asked', 'missing' or 'out_of_range'.
brier              float64            (prediction - [opponent cooperated])^2; NULL without a
                                      prediction.
log_loss           float64            -log of the probability the prediction gave the opponent's
                                      move (clipped to [1e-6, 1 - 1e-6]).
call_id            string             The call that answered (NULL for in-process models).
latency_ms         float64            Latency of the call.
""")

REPEATED_DUELS = table("""
run_id           string               not null  Run id.
shard_id         string               not null  Shard that produced the row.
family           string               not null  Game family: 'repeated'.
match_id         string               not null  Stable match id '<stage>/s<seed>/m<index>/p<pairing
                                                hash>/o<seat_order>'.
instance         string               not null  The stage game and length played,
                                                '<stage>/s<seed>/m<index>': the same in both seat
                                                orders and for every pairing of a tournament.
stage            string               not null  The stage game's class.
seed             int64                not null  Seed of the match stream.
match_index      int64                not null  Index of the match in its (stage, seed) stream (the
                                                stage game drawn as repeated_matches draws it).
player_row       string               not null  The row seat's player: an axelrod strategy name or
                                                '<provider>:<model>'.
player_col       string               not null  The column seat's player.
seat_order       int32                not null  0: the pairing's first player sits in the row seat;
                                                1: the seats are swapped.
payoff_row       list<list<float64>>  not null  The stage game's payoffs to the row seat, 2x2 (rows:
                                                the row seat's action; action 1 cooperates).
payoff_col       list<list<float64>>  not null  The stage game's payoffs to the column seat, same
                                                layout.
horizon          int32                          Known horizon T told to the models; NULL with a
                                                continuation probability.
continuation     float64                        The continuation probability told to the models;
                                                NULL with a known horizon.
rounds_planned   int32                not null  Rounds the match lasts.
rounds_played    int32                not null  Rounds played (fewer after a forfeit or a failed
                                                call).
status           string               not null  'complete'; 'forfeit' (an invalid answer of a seat
                                                ended the match; never a substituted move);
                                                'call_failed' (a model call failed at the server: no
                                                seat's doing, left out of a tournament's ratings).
forfeit_seat     string                         'row', 'col' or 'both': whose answer forfeited; NULL
                                                otherwise.
forfeit_status   string                         Parse status of the forfeiting answer (of the row
                                                seat's when both forfeited); NULL otherwise.
forfeit_text     string                         The forfeiting answer as returned (the row seat's
                                                when both forfeited); NULL otherwise.
moves_row        list<int32>          not null  The row seat's moves, round by round (0 cooperate, 1
                                                defect).
moves_col        list<int32>          not null  The column seat's moves.
total_row        float64              not null  The row seat's total payoff over the rounds played.
total_col        float64              not null  The column seat's total payoff over the rounds
                                                played.
mean_row         float64                        total_row / rounds_played; NULL when no round was
                                                played.
mean_col         float64                        total_col / rounds_played; NULL when no round was
                                                played.
cooperation_row  float64                        Share of the row seat's moves that cooperate; NULL
                                                when no round was played.
cooperation_col  float64                        Share of the column seat's moves that cooperate;
                                                NULL when no round was played.
score_row        float64                        The row seat's score in a tournament: mean_row of a
                                                complete match; a forfeit scores the stage game's
                                                lowest payoff for the seat that forfeited and its
                                                highest for the other (both lowest when both did);
                                                NULL for call_failed.
score_col        float64                        The column seat's score in a tournament (as
                                                score_row).
num_calls        int32                not null  Model calls made.
""")

TABLES = {"repeated_matches": REPEATED_MATCHES, "rounds": ROUNDS}
"""The tables of a run of the family (``distbench run``)."""
PAIRING_TABLES = {"repeated_duels": REPEATED_DUELS}
"""The table of a tournament's pairings (:mod:`.pairing`)."""
FAMILY_TABLES = {**TABLES, **PAIRING_TABLES}
"""Every table of the family (``Family.tables``)."""
