"""Tables of the fog-of-war family (``fog_games``, ``fog_reports``, ``fog_events``)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f
from distbench.store.fields import row_key, table

_F64 = pa.float64()
_I32 = pa.int32()

_COMMON = [
    *row_key(),
    _f("game_id", pa.string(), "Game id 'fog/s<seed>/<agent_a>~<agent_b>/g<index>'; it repeats "
       "across the scouting conditions of a study, so a join names the game by "
       "(run_id, shard_id, game_id).", False),
]

_PER_AGENT = []
for _side in ("a", "b"):
    _PER_AGENT += [
        _f(f"brier_{_side}", _F64, f"Player {_side}: mean multi-class Brier score of its beliefs "
           "over enemy powers (0 = perfect, 2 = worst); NULL without a valid report."),
        _f(f"log_loss_{_side}", _F64, f"Player {_side}: mean -ln p(true power) of its beliefs."),
        _f(f"calibration_error_{_side}", _F64,
           f"Player {_side}: expected calibration error of its belief probabilities (10 bins)."),
        _f(f"tom_delta_{_side}", _F64, f"Player {_side}: accuracy of its predicted enemy order "
           "kinds minus a constant 'move' baseline's."),
        _f(f"uncertainty_reduction_{_side}", _F64,
           f"Player {_side}: (H_first - H_last) / H_first of its mean belief entropy."),
        _f(f"valid_reports_{_side}", _I32, f"Player {_side}: turns with valid beliefs.", False),
        _f(f"reports_{_side}", _I32, f"Player {_side}: turns reported.", False),
    ]

for _side in ("a", "b"):
    _PER_AGENT += [
        _f(f"action_brier_{_side}", _F64, f"Player {_side}: mean multi-class Brier score (0 to 2) "
           "of its distributions over the enemy forces' order kinds, over every (turn, living "
           "enemy force) it gave one for; NULL when none."),
        _f(f"action_log_loss_{_side}", _F64, f"Player {_side}: mean -ln p(actual order kind) "
           "of those distributions (p clipped at 1e-12)."),
        _f(f"objective_brier_{_side}", _F64, f"Player {_side}: mean Brier score (0 to 2) of its "
           "distributions over the enemy's objective, over the turns the enemy stated one; "
           "NULL when none."),
        _f(f"objective_log_loss_{_side}", _F64,
           f"Player {_side}: mean -ln p(the enemy's stated objective) of those distributions."),
    ]

FOG_GAMES = pa.schema([*_COMMON, *table("""
seed               int64        not null  Seed of the game stream.
game_index         int64        not null  Index of the game in its (pairing, seed) stream.
agent_a            string       not null  Player a (deploys on row 0): tier1..tier4 or
                                          provider:model.
agent_b            string       not null  Player b (deploys on the last row).
provider_a         string                 Model provider of player a, NULL for a scripted tier.
provider_b         string                 Model provider of player b, NULL for a scripted tier.
scout_accuracy     float64      not null  Probability that a scout reveals the exact power.
scouting           bool         not null  Scouting allowed.
board_size         int32        not null  Board side N.
num_forces         int32        not null  Forces per player K.
max_turns          int32        not null  Turn limit.
winner             string       not null  'a', 'b' or 'draw'.
turns              int32        not null  Turns played.
end_reason         string       not null  'sovereign_killed', 'mutual_sovereign_kill',
                                          'annihilation' or 'turn_limit'.
power_a            list<int32>  not null  Player a's deployed powers, per force.
power_b            list<int32>  not null  Player b's deployed powers, per force.
sovereign_a        int32        not null  Index of player a's sovereign.
sovereign_b        int32        not null  Index of player b's sovereign.
survivors_a        int32        not null  Player a's living forces at the end.
survivors_b        int32        not null  Player b's living forces at the end.
surviving_power_a  int32        not null  Total power of player a's living forces at the end.
surviving_power_b  int32        not null  Total power of player b's living forces at the end.
parser_version     string                 Version of the answer parser that read the LLM agents'
                                          answers (fog/text.py PARSER_VERSION); NULL when no agent
                                          is a model.
reasoning          string                 The reasoning factor of the game's LLM agents: 'direct' or
                                          'cot' (--reasoning; 'direct' when no agent is a model),
                                          '<a>/<b>' when two differ. NULL in runs made before the
                                          column existed.
diverged_at        int32                  distbench rescore: the turn at which today's parser read a
                                          stored answer into other orders, so the rest of the game
                                          would have gone differently; the game is then kept as
                                          stored. NULL otherwise.
"""), *_PER_AGENT])

FOG_REPORTS = table("""
turn                  int32                not null  Turn the report was filed for (1-based).
player                string               not null  'a' or 'b'.
agent                 string               not null  The reporting agent.
beliefs               list<list<float64>>            Belief per enemy force over powers 1..5 (K x 5,
                                                     rows sum to 1); NULL when invalid.
true_powers           list<int32>          not null  The enemy's true powers (for scoring).
enemy_alive           list<bool>           not null  Which enemy forces were alive.
predicted_actions     list<string>         not null  Predicted order kind per enemy force ('' for
                                                     dead or not given): the most likely in
                                                     action_probs (Tier 1: a draw from it; Tier 2:
                                                     move).
actual_actions        list<string>         not null  The enemy's actual order kinds this turn
                                                     (illegal orders count as hold).
predicted_objective   string               not null  Predicted enemy objective: hunt_sovereign,
                                                     dominate or defend (the most likely in
                                                     objective_probs), '' when none.
orders                list<string>         not null  Orders applied, per own force ('hold' if
                                                     invalid).
confidence            float64                        Stated confidence in [0, 1]; NULL when not
                                                     given.
belief_entropy        float64                        Mean entropy (bits) of the beliefs over enemy
                                                     forces.
belief_confidence     float64                        Mean top belief probability over living enemy
                                                     forces.
info_gain             float64                        Entropy drop (bits) since the previous report,
                                                     summed over the forces revealed last turn; 0
                                                     without a reveal, NULL without two valid
                                                     reports.
brier                 float64                        Brier score of this report's beliefs.
report_status         string               not null  'ok' or why the answer was invalid (the first
                                                     problem): no_json, bad_orders, bad_beliefs,
                                                     bad_predictions, bad_objective, call_failed; a
                                                     user's agent class also bad_report,
                                                     agent_error.
raw_text              string                         The model's answer verbatim (LLM agents), else
                                                     NULL.
call_id               string                         Row of the calls table (LLM agents), else NULL.
reasoning_text        string                         cot: the answer's text before its final line
                                                     (the JSON answer, the only line parsed); NULL
                                                     otherwise.
parser_version        string                         Version of the answer parser that read raw_text
                                                     (fog/text.py PARSER_VERSION; LLM agents), else
                                                     NULL.
action_probs          list<list<float64>>            Distribution per enemy force over the order
                                                     kinds hold, move, charge, scout, fortify,
                                                     ambush (K x 6, rows sum to 1; a NULL row: none
                                                     given, e.g. a dead force); NULL when not given
                                                     or invalid.
action_confidence     float64                        Prediction confidence: mean over the living
                                                     enemy forces with a distribution of its top
                                                     probability (max p); NULL when none.
action_brier          float64                        Mean Brier score (0 to 2) of this report's
                                                     action distributions against actual_actions,
                                                     over the living enemy forces with one.
action_log_loss       float64                        Mean -ln p(actual order kind) of this report's
                                                     action distributions (p clipped at 1e-12).
objective_probs       list<float64>                  Distribution over the enemy's objective:
                                                     hunt_sovereign, dominate, defend (sums to 1);
                                                     NULL when not given or invalid.
actual_objective      string               not null  The objective the enemy stated for itself this
                                                     turn (hunt_sovereign, dominate, defend), ''
                                                     when it stated none (Tier 1).
objective_confidence  float64                        Top probability (max p) of objective_probs.
objective_brier       float64                        Brier score (0 to 2) of objective_probs against
                                                     actual_objective; NULL when either is missing.
objective_log_loss    float64                        -ln p(actual_objective) of objective_probs (p
                                                     clipped at 1e-12); NULL when either is missing.
""", head=_COMMON)

FOG_EVENTS = table("""
turn     int32   not null  Turn of the event.
seq      int32   not null  Order of the event within the game.
kind     string  not null  combat, ambush, scout_reveal, scout_miss, noose_kill, invalid_order or
                           game_end.
player   string            Acting player 'a' / 'b' (scout, ambusher, victim); NULL when both.
force    int32             Acting force index, NULL when none.
details  string  not null  Event details as JSON: fights (combat, ambush) force_a, force_b, cell,
                           eff_a, eff_b, winner, attacker ('a', 'b' or 'both': whose force moved
                           into the fight, the ambusher), defender, result (attacker_wins,
                           defender_wins, tie; null for 'both'); scout_reveal enemy, kind, low,
                           high, actual_power; noose_kill cell, was_sovereign; ...
""", head=_COMMON)

TABLES: dict[str, pa.Schema] = {
    "fog_games": FOG_GAMES,
    "fog_reports": FOG_REPORTS,
    "fog_events": FOG_EVENTS,
}
