"""Columns of the negotiation tables ``episodes`` and ``turns`` (registered by the store)."""

from __future__ import annotations

import pyarrow as pa

from distbench.store.fields import derived_expression, row_key, table

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


EPISODES = table("""
episode_id                   string        not null  Stable episode id
                                                     '<instance_id>/<mode>/<lang>/p<pairing
                                                     hash>/o<seat_order>'.
instance_id                  string        not null  Instance id 'neg/s<seed>/i<index>' (the same in
                                                     every mode and language); for a clembench
                                                     instance file (--instances) '<file
                                                     stem>/<experiment name>/<game_id>'.
seed                         int64         not null  Seed of the instance stream; -1 for an instance
                                                     of a clembench file.
instance_index               int64         not null  Index of the instance in its stream; the file's
                                                     game_id for a clembench instance.
mode                         string        not null  'semi' (own score), 'coop' (sum of scores) or
                                                     'comp' (score difference).
lang                         string        not null  Language of the prompts and item names: 'en',
                                                     'de' or 'it' (also 'hu' from a clembench file).
player_a                     string        not null  Player in seat a (speaks first):
                                                     '<provider>:<model>' or 'scripted:<name>'.
player_b                     string        not null  Player in seat b.
seat_order                   int32         not null  0: the configured player_a sits in seat a; 1:
                                                     the seats are swapped.
item_types                   list<string>  not null  Item type names as the players saw them
                                                     (plural, in the episode's language; a clembench
                                                     file's item_types_plural), per type.
counts                       list<int32>   not null  Number of items per type.
values_a                     list<int32>   not null  Seat a's value of one item, per type (total
                                                     value 10; a clembench file's player_a_values).
values_b                     list<int32>   not null  Seat b's value of one item, per type (total
                                                     value 10; a clembench file's player_b_values).
proposal_a                   list<int32>             Amounts seat a asked for, per type; NULL when
                                                     it made no valid proposal.
proposal_b                   list<int32>             Amounts seat b asked for, per type; NULL when
                                                     none.
score_a                      int32                   Seat a's score (0 on lose); NULL when aborted.
score_b                      int32                   Seat b's score (0 on lose); NULL when aborted.
success                      bool          not null  Both proposed and the proposals are compatible.
lose                         bool          not null  Both proposed and the proposals conflict (both
                                                     score 0).
aborted                      bool          not null  The episode was aborted (see abort_reason).
abort_reason                 string                  Why it was aborted (malformed, unknown_item,
                                                     too_many_items, free_text_after_proposal,
                                                     no_proposal, call_failed, ...); NULL otherwise.
abort_player                 string                  Seat ('a' or 'b') whose answer aborted the
                                                     episode; NULL otherwise.
pareto_optimal               bool                    No split improves one player without hurting
                                                     the other; NULL when aborted.
max_pareto_improvement       int32                   distbench's: this episode's gap to the Pareto
                                                     frontier: over splits where both do at least as
                                                     well, the largest gain of either player; NULL
                                                     when aborted. Not clembench's column of the
                                                     same name (its normaliser, here
                                                     clem_max_pareto_improvement); clembench's
                                                     pareto_improvement is clem_pareto_improvement.
main_score                   float64                 100 - 100 * max_pareto_improvement / 10 on
                                                     success, 0 on lose, NULL when aborted.
sum_score_ratio              float64                 (score_a + score_b) / max_sum_score; NULL when
                                                     aborted.
comp_score                   float64                 (score_a - score_b) / 10, in [-1, 1], seat a's
                                                     view (the comp mode's score); NULL when
                                                     aborted.
max_sum_score                int32         not null  Largest score_a + score_b over all splits.
max_score_a                  int32         not null  Seat a's largest possible score.
max_score_b                  int32         not null  Seat b's largest possible score.
pareto_frontier_size         int32         not null  Number of distinct Pareto-optimal score pairs.
max_messages                 int32         not null  Free messages allowed per player.
num_turns                    int32         not null  Answers recorded (rows of turns).
num_calls                    int32         not null  Model calls made.
parser_version               string                  Version of the proposal parser that read the
                                                     episode's answers (negotiation/parse.py
                                                     PARSER_VERSION); NULL in runs made before the
                                                     column existed.
reasoning                    string                  The reasoning factor of the episode's models:
                                                     'direct' or 'cot' (--reasoning; 'direct' when
                                                     no model plays), '<seat a>/<seat b>' when two
                                                     models differ. NULL in runs made before the
                                                     column existed.
diverged_at                  int32                   distbench rescore: the turn at which today's
                                                     parser read a stored answer so that the game
                                                     would have gone on differently (the next answer
                                                     asked for was never given); the episode is then
                                                     kept as stored. NULL otherwise.
clem_pareto_improvement      int32         not null  clembench's pareto_improvement: coop:
                                                     max_sum_score - the sum of scores (0 unless
                                                     success); semi: max_pareto_improvement on
                                                     success, else the larger of max_score_a and
                                                     max_score_b; comp: 0 (computed by the view, not
                                                     stored).
clem_max_pareto_improvement  int32         not null  clembench's max_pareto_improvement, the
                                                     normaliser of its quality score: coop:
                                                     max_sum_score; semi: the larger of max_score_a
                                                     and max_score_b; comp: 0 (computed by the view,
                                                     not stored).
clem_quality                 float64                 clembench's episode score (its main score,
                                                     0-100): 100 * (1 - clem_pareto_improvement /
                                                     clem_max_pareto_improvement) in coop (= 100 *
                                                     sum of scores / max_sum_score) and semi, 100 in
                                                     comp (any completed episode); NULL when aborted
                                                     (computed by the view, not stored).
""", head=row_key("negotiation"), derived={
    "clem_pareto_improvement": CLEM_PARETO_IMPROVEMENT,
    "clem_max_pareto_improvement": CLEM_MAX_PARETO_IMPROVEMENT,
    "clem_quality": CLEM_QUALITY,
})

TURNS = table("""
episode_id      string       not null  Episode (joins episodes.episode_id).
turn            int32        not null  Turn number in the episode, from 0.
player          string       not null  Seat that answered: 'a' or 'b'.
player_label    string       not null  Who sits there: '<provider>:<model>' or 'scripted:<name>'.
kind            string       not null  What was asked: 'message' (a free turn), 'must_propose' (the
                                       other proposed) or 'timeout_prompt' (messages ran out).
raw_text        string                 The answer, verbatim; NULL when the call failed.
parse_status    string       not null  'message' (free text), 'proposal' (valid) or why it was
                                       rejected (malformed, unknown_item, ..., call_failed).
parse_detail    string       not null  Short reason when the proposal was rejected ('' otherwise).
proposal        list<int32>            Amounts asked for, per type, when parse_status = 'proposal';
                                       NULL otherwise.
reasoning_text  string                 cot: the answer's text before its final line (then raw_text
                                       is the final line, what the game master read and relayed; the
                                       verbatim answer is calls.response_text); NULL otherwise.
parser_version  string                 Version of the proposal parser that read the answer
                                       (negotiation/parse.py PARSER_VERSION); NULL when the call
                                       failed (nothing to read).
call_id         string                 Row of the calls table; NULL for scripted players.
latency_ms      float64                Latency of the model call in milliseconds (timing column);
                                       NULL for scripted players.
""", head=row_key())

TABLES: dict[str, pa.Schema] = {"episodes": EPISODES, "turns": TURNS}

STORED_EPISODES = pa.schema([f for f in EPISODES if derived_expression(f) is None])
"""The columns of ``episodes`` written to the files (the view computes the others)."""
