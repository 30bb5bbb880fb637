"""Columns of the negotiation tables ``episodes`` and ``turns`` (registered by the store)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import column as _f
from distbench.store.fields import derived_expression, row_key

# clembench's per-episode quantities (its dond game master and scorer), computed by the view
# from the stored columns; the summary SQL (queries/negotiation_summary.sql) repeats them.
CLEM_MAX_PARETO_IMPROVEMENT = (
    "CASE mode WHEN 'coop' THEN max_sum_score "
    "WHEN 'semi' THEN greatest(max_score_a, max_score_b) ELSE 0 END"
)
CLEM_PARETO_IMPROVEMENT = (
    "CASE mode WHEN 'coop' THEN max_sum_score - (CASE WHEN success THEN score_a + score_b ELSE 0 END) "
    "WHEN 'semi' THEN (CASE WHEN success THEN max_pareto_improvement "
    "ELSE greatest(max_score_a, max_score_b) END) ELSE 0 END"
)
CLEM_QUALITY = (
    f"CASE WHEN aborted THEN NULL WHEN mode = 'comp' THEN 100.0 "
    f"ELSE 100.0 * (1 - ({CLEM_PARETO_IMPROVEMENT}) / nullif({CLEM_MAX_PARETO_IMPROVEMENT}, 0)) END"
)

_LIST_I = pa.list_(pa.int32())
_F64 = pa.float64()

EPISODES = pa.schema(
    [
        *row_key("negotiation"),
        _f("episode_id", pa.string(), "Stable episode id '<instance_id>/<mode>/<lang>/p<pairing hash>/o<seat_order>'.", False),
        _f("instance_id", pa.string(), "Instance id 'neg/s<seed>/i<index>' (the same in every mode and language); for a clembench instance file (--instances) '<file stem>/<experiment name>/<game_id>'.", False),
        _f("seed", pa.int64(), "Seed of the instance stream; -1 for an instance of a clembench file.", False),
        _f("instance_index", pa.int64(), "Index of the instance in its stream; the file's game_id for a clembench instance.", False),
        _f("mode", pa.string(), "'semi' (own score), 'coop' (sum of scores) or 'comp' (score difference).", False),
        _f("lang", pa.string(), "Language of the prompts and item names: 'en', 'de' or 'it' (also 'hu' from a clembench file).", False),
        _f("player_a", pa.string(), "Player in seat a (speaks first): '<provider>:<model>' or 'scripted:<name>'.", False),
        _f("player_b", pa.string(), "Player in seat b.", False),
        _f("seat_order", pa.int32(), "0: the configured player_a sits in seat a; 1: the seats are swapped.", False),
        _f("item_types", pa.list_(pa.string()), "Item type names as the players saw them (plural, in the episode's language; a clembench file's item_types_plural), per type.", False),
        _f("counts", _LIST_I, "Number of items per type.", False),
        _f("values_a", _LIST_I, "Seat a's value of one item, per type (total value 10; a clembench file's player_a_values).", False),
        _f("values_b", _LIST_I, "Seat b's value of one item, per type (total value 10; a clembench file's player_b_values).", False),
        _f("proposal_a", _LIST_I, "Amounts seat a asked for, per type; NULL when it made no valid proposal."),
        _f("proposal_b", _LIST_I, "Amounts seat b asked for, per type; NULL when none."),
        _f("score_a", pa.int32(), "Seat a's score (0 on lose); NULL when aborted."),
        _f("score_b", pa.int32(), "Seat b's score (0 on lose); NULL when aborted."),
        _f("success", pa.bool_(), "Both proposed and the proposals are compatible.", False),
        _f("lose", pa.bool_(), "Both proposed and the proposals conflict (both score 0).", False),
        _f("aborted", pa.bool_(), "The episode was aborted (see abort_reason).", False),
        _f("abort_reason", pa.string(), "Why it was aborted (malformed, unknown_item, too_many_items, free_text_after_proposal, no_proposal, call_failed, ...); NULL otherwise."),
        _f("abort_player", pa.string(), "Seat ('a' or 'b') whose answer aborted the episode; NULL otherwise."),
        _f("pareto_optimal", pa.bool_(), "No split improves one player without hurting the other; NULL when aborted."),
        _f("max_pareto_improvement", pa.int32(), "distbench's: this episode's gap to the Pareto frontier: over splits where both do at least as well, the largest gain of either player; NULL when aborted. Not clembench's column of the same name (its normaliser, here clem_max_pareto_improvement); clembench's pareto_improvement is clem_pareto_improvement."),
        _f("main_score", _F64, "100 - 100 * max_pareto_improvement / 10 on success, 0 on lose, NULL when aborted."),
        _f("sum_score_ratio", _F64, "(score_a + score_b) / max_sum_score; NULL when aborted."),
        _f("comp_score", _F64, "(score_a - score_b) / 10, in [-1, 1], seat a's view (the comp mode's score); NULL when aborted."),
        _f("max_sum_score", pa.int32(), "Largest score_a + score_b over all splits.", False),
        _f("max_score_a", pa.int32(), "Seat a's largest possible score.", False),
        _f("max_score_b", pa.int32(), "Seat b's largest possible score.", False),
        _f("pareto_frontier_size", pa.int32(), "Number of distinct Pareto-optimal score pairs.", False),
        _f("max_messages", pa.int32(), "Free messages allowed per player.", False),
        _f("num_turns", pa.int32(), "Answers recorded (rows of turns).", False),
        _f("num_calls", pa.int32(), "Model calls made.", False),
        _f("parser_version", pa.string(), "Version of the proposal parser that read the "
           "episode's answers (negotiation/parse.py PARSER_VERSION); NULL in runs made before "
           "the column existed."),
        _f("reasoning", pa.string(), "The reasoning factor of the episode's models: 'direct' "
           "or 'cot' (--reasoning; 'direct' when no model plays), '<seat a>/<seat b>' when "
           "two models differ. NULL in runs made before the column existed."),
        _f("diverged_at", pa.int32(), "distbench rescore: the turn at which today's parser "
           "read a stored answer so that the game would have gone on differently (the next "
           "answer asked for was never given); the episode is then kept as stored. NULL "
           "otherwise."),
        _f("clem_pareto_improvement", pa.int32(), "clembench's pareto_improvement: coop: max_sum_score - the sum of scores (0 unless success); semi: max_pareto_improvement on success, else the larger of max_score_a and max_score_b; comp: 0 (computed by the view, not stored).", False, derived=CLEM_PARETO_IMPROVEMENT),
        _f("clem_max_pareto_improvement", pa.int32(), "clembench's max_pareto_improvement, the normaliser of its quality score: coop: max_sum_score; semi: the larger of max_score_a and max_score_b; comp: 0 (computed by the view, not stored).", False, derived=CLEM_MAX_PARETO_IMPROVEMENT),
        _f("clem_quality", _F64, "clembench's episode score (its main score, 0-100): 100 * (1 - clem_pareto_improvement / clem_max_pareto_improvement) in coop (= 100 * sum of scores / max_sum_score) and semi, 100 in comp (any completed episode); NULL when aborted (computed by the view, not stored).", derived=CLEM_QUALITY),
    ]
)

TURNS = pa.schema(
    [
        *row_key(),
        _f("episode_id", pa.string(), "Episode (joins episodes.episode_id).", False),
        _f("turn", pa.int32(), "Turn number in the episode, from 0.", False),
        _f("player", pa.string(), "Seat that answered: 'a' or 'b'.", False),
        _f("player_label", pa.string(), "Who sits there: '<provider>:<model>' or 'scripted:<name>'.", False),
        _f("kind", pa.string(), "What was asked: 'message' (a free turn), 'must_propose' (the other proposed) or 'timeout_prompt' (messages ran out).", False),
        _f("raw_text", pa.string(), "The answer, verbatim; NULL when the call failed."),
        _f("parse_status", pa.string(), "'message' (free text), 'proposal' (valid) or why it was rejected (malformed, unknown_item, ..., call_failed).", False),
        _f("parse_detail", pa.string(), "Short reason when the proposal was rejected ('' otherwise).", False),
        _f("proposal", _LIST_I, "Amounts asked for, per type, when parse_status = 'proposal'; NULL otherwise."),
        _f("reasoning_text", pa.string(), "cot: the answer's text before its final line (then "
           "raw_text is the final line, what the game master read and relayed; the verbatim "
           "answer is calls.response_text); NULL otherwise."),
        _f("parser_version", pa.string(), "Version of the proposal parser that read the answer "
           "(negotiation/parse.py PARSER_VERSION); NULL when the call failed (nothing to read)."),
        _f("call_id", pa.string(), "Row of the calls table; NULL for scripted players."),
        _f("latency_ms", _F64, "Latency of the model call in milliseconds (timing column); NULL for scripted players."),
    ]
)

TABLES: dict[str, pa.Schema] = {"episodes": EPISODES, "turns": TURNS}

STORED_EPISODES = pa.schema([f for f in EPISODES if derived_expression(f) is None])
"""The columns of ``episodes`` written to the files (the view computes the others)."""
