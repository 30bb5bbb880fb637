"""Tables of the fog-of-war family (``fog_games``, ``fog_reports``, ``fog_events``)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f
from distbench.store.fields import row_key

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

FOG_GAMES = pa.schema(
    _COMMON
    + [
        _f("seed", pa.int64(), "Seed of the game stream.", False),
        _f("game_index", pa.int64(), "Index of the game in its (pairing, seed) stream.", False),
        _f("agent_a", pa.string(), "Player a (deploys on row 0): tier1..tier4 or provider:model.", False),
        _f("agent_b", pa.string(), "Player b (deploys on the last row).", False),
        _f("provider_a", pa.string(), "Model provider of player a, NULL for a scripted tier."),
        _f("provider_b", pa.string(), "Model provider of player b, NULL for a scripted tier."),
        _f("scout_accuracy", _F64, "Probability that a scout reveals the exact power.", False),
        _f("scouting", pa.bool_(), "Scouting allowed.", False),
        _f("board_size", _I32, "Board side N.", False),
        _f("num_forces", _I32, "Forces per player K.", False),
        _f("max_turns", _I32, "Turn limit.", False),
        _f("winner", pa.string(), "'a', 'b' or 'draw'.", False),
        _f("turns", _I32, "Turns played.", False),
        _f("end_reason", pa.string(),
           "'sovereign_killed', 'mutual_sovereign_kill', 'annihilation' or 'turn_limit'.", False),
        _f("power_a", pa.list_(_I32), "Player a's deployed powers, per force.", False),
        _f("power_b", pa.list_(_I32), "Player b's deployed powers, per force.", False),
        _f("sovereign_a", _I32, "Index of player a's sovereign.", False),
        _f("sovereign_b", _I32, "Index of player b's sovereign.", False),
        _f("survivors_a", _I32, "Player a's living forces at the end.", False),
        _f("survivors_b", _I32, "Player b's living forces at the end.", False),
        _f("surviving_power_a", _I32, "Total power of player a's living forces at the end.", False),
        _f("surviving_power_b", _I32, "Total power of player b's living forces at the end.", False),
        _f("parser_version", pa.string(), "Version of the answer parser that read the LLM "
           "agents' answers (fog/text.py PARSER_VERSION); NULL when no agent is a model."),
        _f("reasoning", pa.string(), "The reasoning factor of the game's LLM agents: 'direct' "
           "or 'cot' (--reasoning; 'direct' when no agent is a model), '<a>/<b>' when two "
           "differ. NULL in runs made before the column existed."),
        _f("diverged_at", _I32, "distbench rescore: the turn at which today's parser read a "
           "stored answer into other orders, so the rest of the game would have gone "
           "differently; the game is then kept as stored. NULL otherwise."),
    ]
    + _PER_AGENT
)

FOG_REPORTS = pa.schema(
    _COMMON
    + [
        _f("turn", _I32, "Turn the report was filed for (1-based).", False),
        _f("player", pa.string(), "'a' or 'b'.", False),
        _f("agent", pa.string(), "The reporting agent.", False),
        _f("beliefs", pa.list_(pa.list_(_F64)),
           "Belief per enemy force over powers 1..5 (K x 5, rows sum to 1); NULL when invalid."),
        _f("true_powers", pa.list_(_I32), "The enemy's true powers (for scoring).", False),
        _f("enemy_alive", pa.list_(pa.bool_()), "Which enemy forces were alive.", False),
        _f("predicted_actions", pa.list_(pa.string()),
           "Predicted order kind per enemy force ('' for dead or not given): the most likely "
           "in action_probs (Tier 1: a draw from it; Tier 2: move).", False),
        _f("actual_actions", pa.list_(pa.string()),
           "The enemy's actual order kinds this turn (illegal orders count as hold).", False),
        _f("predicted_objective", pa.string(), "Predicted enemy objective: hunt_sovereign, "
           "dominate or defend (the most likely in objective_probs), '' when none.", False),
        _f("orders", pa.list_(pa.string()), "Orders applied, per own force ('hold' if invalid).", False),
        _f("confidence", _F64, "Stated confidence in [0, 1]; NULL when not given."),
        _f("belief_entropy", _F64, "Mean entropy (bits) of the beliefs over enemy forces."),
        _f("belief_confidence", _F64, "Mean top belief probability over living enemy forces."),
        _f("info_gain", _F64,
           "Entropy drop (bits) since the previous report, summed over the forces revealed last "
           "turn; 0 without a reveal, NULL without two valid reports."),
        _f("brier", _F64, "Brier score of this report's beliefs."),
        _f("report_status", pa.string(),
           "'ok' or why the answer was invalid (the first problem): no_json, bad_orders, "
           "bad_beliefs, bad_predictions, bad_objective, call_failed; a user's agent class also "
           "bad_report, agent_error.", False),
        _f("raw_text", pa.string(), "The model's answer verbatim (LLM agents), else NULL."),
        _f("call_id", pa.string(), "Row of the calls table (LLM agents), else NULL."),
        _f("reasoning_text", pa.string(), "cot: the answer's text before its final line (the "
           "JSON answer, the only line parsed); NULL otherwise."),
        _f("parser_version", pa.string(), "Version of the answer parser that read raw_text "
           "(fog/text.py PARSER_VERSION; LLM agents), else NULL."),
        _f("action_probs", pa.list_(pa.list_(_F64)),
           "Distribution per enemy force over the order kinds hold, move, charge, scout, "
           "fortify, ambush (K x 6, rows sum to 1; a NULL row: none given, e.g. a dead force); "
           "NULL when not given or invalid."),
        _f("action_confidence", _F64, "Prediction confidence: mean over the living enemy "
           "forces with a distribution of its top probability (max p); NULL when none."),
        _f("action_brier", _F64, "Mean Brier score (0 to 2) of this report's action "
           "distributions against actual_actions, over the living enemy forces with one."),
        _f("action_log_loss", _F64, "Mean -ln p(actual order kind) of this report's action "
           "distributions (p clipped at 1e-12)."),
        _f("objective_probs", pa.list_(_F64), "Distribution over the enemy's objective: "
           "hunt_sovereign, dominate, defend (sums to 1); NULL when not given or invalid."),
        _f("actual_objective", pa.string(), "The objective the enemy stated for itself this "
           "turn (hunt_sovereign, dominate, defend), '' when it stated none (Tier 1).", False),
        _f("objective_confidence", _F64, "Top probability (max p) of objective_probs."),
        _f("objective_brier", _F64, "Brier score (0 to 2) of objective_probs against "
           "actual_objective; NULL when either is missing."),
        _f("objective_log_loss", _F64, "-ln p(actual_objective) of objective_probs (p clipped "
           "at 1e-12); NULL when either is missing."),
    ]
)

FOG_EVENTS = pa.schema(
    _COMMON
    + [
        _f("turn", _I32, "Turn of the event.", False),
        _f("seq", _I32, "Order of the event within the game.", False),
        _f("kind", pa.string(), "combat, ambush, scout_reveal, scout_miss, noose_kill, "
           "invalid_order or game_end.", False),
        _f("player", pa.string(), "Acting player 'a' / 'b' (scout, ambusher, victim); NULL when both."),
        _f("force", _I32, "Acting force index, NULL when none."),
        _f("details", pa.string(), "Event details as JSON: fights (combat, ambush) force_a, "
           "force_b, cell, eff_a, eff_b, winner, attacker ('a', 'b' or 'both': whose force "
           "moved into the fight, the ambusher), defender, result (attacker_wins, "
           "defender_wins, tie; null for 'both'); scout_reveal enemy, kind, low, high, "
           "actual_power; noose_kill cell, was_sovereign; ...", False),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "fog_games": FOG_GAMES,
    "fog_reports": FOG_REPORTS,
    "fog_events": FOG_EVENTS,
}
