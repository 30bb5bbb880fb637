"""The bimatrix family's tables: ``bimatrix_games`` (one row per game) and ``bimatrix_trials``
(one row per answer and opponent). Every column is described once here."""

from __future__ import annotations

from distbench.store.fields import table

BIMATRIX_GAMES = table("""
run_id        string               not null  Run id.
family        string               not null  Game family: 'bimatrix'.
game_set      string               not null  Where the game comes from: a bucket '3x3_midVar', a
                                             type 'type:rg017' or a class 'class:stag_hunt'.
set_kind      string               not null  'bucket', 'type' or 'class'.
game_class    string                         The class name for class games, else NULL.
seed          int64                not null  Seed of the game stream.
game_index    int64                not null  Index of the game in its (set, seed) stream.
game_id       string               not null  Stable game id '<set>/s<seed>/g<index>'.
rows          int32                not null  Row player's actions.
cols          int32                not null  Column player's actions.
payoff_row    list<list<float64>>  not null  A: the row player's payoffs, rows x cols.
payoff_col    list<list<float64>>  not null  B: the column player's payoffs, rows x cols.
num_eq        int32                not null  Nash equilibria listed (eq1, eq2, ... in that order:
                                             pure ones first): every equilibrium by support
                                             enumeration; in a degenerate game every extreme
                                             equilibrium by vertex enumeration.
eq_row        list<list<float64>>  not null  Each equilibrium's row strategy.
eq_col        list<list<float64>>  not null  Each equilibrium's column strategy.
eq_row_value  list<float64>        not null  Each equilibrium's payoff to the row player.
eq_col_value  list<float64>        not null  Each equilibrium's payoff to the column player.
num_pure_eq   int32                not null  Pure equilibria (cells).
degenerate    bool                 not null  The game is degenerate or could not be shown not to be:
                                             its equilibria are listed by vertex enumeration, every
                                             extreme equilibrium (a continuum by its extreme
                                             points).
maximin_row   float64              not null  The row player's security level (mixed maximin value).
maximin_col   float64              not null  The column player's security level (mixed maximin
                                             value).
max_welfare   float64              not null  Largest A + B over the cells (the welfare optimum).
num_pareto    int32                not null  Pareto-optimal cells.
""")

BIMATRIX_TRIALS = table("""
run_id             string         not null  Run id.
shard_id           string         not null  Shard that produced the row.
family             string         not null  Game family: 'bimatrix'.
game_set           string         not null  The game's set (see bimatrix_games).
set_kind           string         not null  'bucket', 'type' or 'class'.
game_class         string                   The class name for class games, else NULL.
seed               int64          not null  Seed of the game stream.
game_id            string         not null  Stable game id.
game_index         int64          not null  Index of the game in its stream.
seat               string         not null  The model's seat: 'row' or 'col'.
opponent           string         not null  Who the model faced: 'eq1', 'eq2', ... (that
                                            equilibrium's strategy of the other seat), 'uniform',
                                            'class' (the class rule: action 1), 'self' or a model
                                            '<provider>:<model>'.
opponent_kind      string         not null  'equilibrium', 'uniform', 'class', 'self' or 'model'.
provider           string         not null  The model's provider.
model              string         not null  The model.
mode               string         not null  'pure', 'mixed' or 'logprob'.
trial              int32          not null  Trial number within (game, seat, mode); the same answer
                                            is scored against every opponent.
decision           int32                    Pure mode: the model's action, 0-based among its own
                                            actions; NULL otherwise or when invalid.
strategy           list<float64>            The model's strategy over its own actions (one-hot in
                                            pure mode); NULL when invalid.
opponent_strategy  list<float64>            The opponent's strategy over its actions; NULL when a
                                            model opponent's answer was invalid.
parse_status       string         not null  The model's answer: ok or why not (the shared parser's
                                            statuses; call_failed).
parse_detail       string         not null  Parser's explanation.
raw_text           string                   The model's answer as returned (logprob mode: the
                                            generated text).
opponent_status    string         not null  A model opponent's parse status; 'ok' for scripted
                                            opponents.
label_mass         float64                  Logprob mode: probability on the action labels; NULL
                                            otherwise.
value              float64                  x'Py: the model's expected payoff (P its own payoff
                                            matrix, seen from its seat); NULL when invalid.
br_value           float64                  max_a (Py)_a: the best payoff against the opponent
                                            faced; NULL when the opponent is unknown.
regret             float64                  br_value - value >= 0: the Nash gap generalised to the
                                            opponent faced; NULL when invalid.
quality            float64                  The headline's quality: 1 - regret / (br_value - min_a
                                            (Py)_a), in [0, 1] (1 when every action earns the same);
                                            0 when the model's answer is invalid (in self-play, also
                                            when its answer in the other seat is); NULL (left out,
                                            counted as missing) when a call of the model failed or
                                            another model opponent's answer is not valid.
eq_consistent      bool                     Pure: the action is in the support of some equilibrium's
                                            strategy of the model's seat; mixed: the strategy equals
                                            one within 1e-6, or, in a degenerate game, is the seat's
                                            strategy in some equilibrium (an LP: inside a continuum
                                            too). NULL when invalid.
dist_to_eq         float64                  min over equilibria of ||x - x*||_1; NULL when invalid.
welfare_ratio      float64                  (x'Ay + x'By) / max_welfare of the joint play; NULL when
                                            invalid or max_welfare <= 0.
dominated          bool                     The model's strategy puts weight on an action strictly
                                            dominated by another pure action; NULL when invalid.
cooperate          float64                  Probability of action 1 (cooperate, stag, swerve) in
                                            classes that have a cooperative action; NULL otherwise
                                            or when invalid.
coordinated        float64                  Probability that the joint play lands on a pure
                                            equilibrium cell; NULL when invalid.
degenerate         bool           not null  The game is flagged degenerate (see bimatrix_games).
call_id            string                   The call that answered (NULL for in-process models).
latency_ms         float64                  Latency of the model's call.
""")

BIMATRIX_DUELS = table("""
run_id        string               not null  Run id.
shard_id      string               not null  Shard that produced the row.
family        string               not null  Game family: 'bimatrix'.
duel_id       string               not null  Stable id of the play '<game_id>/p<pairing
                                             hash>/o<seat_order>'.
game_id       string               not null  The game played (as bimatrix_games names it): the same
                                             in both seat orders and for every pairing of a
                                             tournament.
game_set      string               not null  The game's set.
set_kind      string               not null  'bucket', 'type' or 'class'.
game_class    string                         The class name for class games, else NULL.
seed          int64                not null  Seed of the game stream.
game_index    int64                not null  Index of the game in its (set, seed) stream.
player_row    string               not null  The row seat's player: 'eq' (the game's first
                                             equilibrium), 'uniform', 'maxmin', 'class' (the class
                                             rule: action 1) or '<provider>:<model>'.
player_col    string               not null  The column seat's player.
seat_order    int32                not null  0: the pairing's first player sits in the row seat; 1:
                                             the seats are swapped.
mode          string               not null  How the models answered: 'pure' (one action) or 'mixed'
                                             (a strategy).
payoff_row    list<list<float64>>  not null  A: the row seat's payoffs, rows x cols.
payoff_col    list<list<float64>>  not null  B: the column seat's payoffs, rows x cols.
strategy_row  list<float64>                  The row seat's strategy over its actions (one-hot for a
                                             pure answer); NULL when its answer is invalid.
strategy_col  list<float64>                  The column seat's strategy over its actions; NULL when
                                             invalid.
status_row    string               not null  The row seat's answer: ok or why not (the shared
                                             parser's statuses; call_failed); 'ok' for scripted
                                             players.
status_col    string               not null  The column seat's answer status.
detail_row    string               not null  Parser's explanation of the row seat's answer (a
                                             scripted player's note).
detail_col    string               not null  Parser's explanation of the column seat's answer.
raw_row       string                         The row seat's answer as returned; NULL for scripted
                                             players.
raw_col       string                         The column seat's answer as returned; NULL for scripted
                                             players.
value_row     float64                        x'Ay: the row seat's expected payoff of the joint play;
                                             NULL when either answer is invalid.
value_col     float64                        x'By: the column seat's expected payoff; NULL when
                                             either answer is invalid.
status        string               not null  'complete'; 'forfeit' (a seat's answer is invalid:
                                             never a substituted action); 'call_failed' (a model
                                             call failed at the server: no seat's doing, left out of
                                             a tournament's ratings).
score_row     float64                        The row seat's score in a tournament: value_row
                                             normalised to the row seat's payoff range, (value_row -
                                             min A) / (max A - min A) in [0, 1] (1 when A is
                                             constant); a forfeit scores 0 for the seat whose answer
                                             is invalid and 1 for the other (0 both when both are);
                                             NULL for call_failed.
score_col     float64                        The column seat's score in a tournament (as score_row,
                                             over B).
call_id_row   string                         The row seat's call (NULL for scripted players and
                                             in-process models).
call_id_col   string                         The column seat's call.
""")

TABLES = {"bimatrix_games": BIMATRIX_GAMES, "bimatrix_trials": BIMATRIX_TRIALS}
"""The tables of a run of the family (``distbench run``)."""
PAIRING_TABLES = {"bimatrix_duels": BIMATRIX_DUELS}
"""The table of a tournament's pairings (:mod:`.pairing`)."""
FAMILY_TABLES = {**TABLES, **PAIRING_TABLES}
"""Every table of the family (``Family.tables``)."""
