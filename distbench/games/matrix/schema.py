"""The matrix family's tables: ``games``, ``trials`` and ``game_scores``.

Every column is described once here; the store registers them when the family does.
"""

from __future__ import annotations

import pyarrow as pa

from distbench.report.headline import QUALITY_TOLERANCE
from distbench.store.fields import column as _f
from distbench.store.fields import row_key, table

_LIST_F64 = pa.list_(pa.float64())

# The chance baselines of a game (the honest aggregates score an invalid answer with them),
# computed by the ``games`` view from the stored payoffs (DuckDB SQL over one games row);
# rounding below 0 is clipped, as the scoring kernels clip it.
_ROW_VALUES = "list_transform(payoff, lambda r: list_dot_product(r, nash_col))"
UNIFORM_NASH_GAP = (f"CASE WHEN gap_degenerate THEN 0.0 ELSE greatest(0.0, list_max({_ROW_VALUES})"
                    f" - list_avg({_ROW_VALUES})) END")
UNIFORM_EXPLOITABILITY = ("greatest(0.0, value - list_min(list_transform(range(1, len(nash_col) "
                          "+ 1), lambda j: list_avg(list_transform(payoff, lambda r: r[j])))))")
UNIFORM_PURE_EXPLOITABILITY = ("greatest(0.0, list_avg(list_transform(payoff, "
                               "lambda r: value - list_min(r))))")
WORST_PURE_EXPLOITABILITY = ("greatest(0.0, list_max(list_transform(payoff, "
                             "lambda r: value - list_min(r))))")

GAMES = table("""
run_id                       string               not null  Run id (the run folder's name).
family                       string               not null  Game family: 'matrix'.
bucket                       string               not null  Bucket id, e.g. '3x3_midVar_mixed'.
seed                         int64                not null  Seed of the game stream.
game_index                   int64                not null  Index of the game in its (bucket, seed)
                                                            stream.
game_id                      string               not null  Stable game id
                                                            '<bucket>/s<seed>/g<index>'.
rows                         int32                not null  Number of row (model) actions.
cols                         int32                not null  Number of column (opponent) actions.
payoff                       list<list<float64>>  not null  Payoffs to the row player, rows x cols.
nash_row                     list<float64>        not null  Row player's Nash (maximin) strategy x*.
nash_col                     list<float64>        not null  Column player's Nash (minimax) strategy
                                                            y* (the opponent).
value                        float64              not null  Value of the game to the row player.
row_support                  int32                not null  Number of row actions with x*_i > 1e-9.
col_support                  int32                not null  Number of column actions with y*_j >
                                                            1e-9.
has_saddle                   bool                 not null  The game has a pure saddle point.
gap_degenerate               bool                 not null  Every row action earns the value against
                                                            y*, so nash_gap is 0 for any answer;
                                                            read exploitability instead.
residual                     float64              not null  Duality residual max_i (U y*)_i - min_j
                                                            (x*'U)_j.
solver_status                string               not null  'ok', 'iteration_limit' or 'inaccurate'
                                                            (not 'ok': do not trust the game).
uniform_nash_gap             float64              not null  nash_gap of the uniform strategy (1/rows
                                                            on each row): max_i (U y*)_i - mean_i (U
                                                            y*)_i (0 on a gap_degenerate game), also
                                                            the expected gap of a uniformly random
                                                            pure action; what an invalid answer
                                                            scores in the honest aggregates
                                                            (computed by the view, not stored).
uniform_exploitability       float64              not null  exploitability of the uniform mixed
                                                            strategy: value - min_j mean_i U_ij;
                                                            what an invalid answer scores in mixed
                                                            and logprob modes (computed by the view,
                                                            not stored).
uniform_pure_exploitability  float64              not null  Expected exploitability of a uniformly
                                                            random pure action: mean_i (value -
                                                            min_j U_ij) (>= uniform_exploitability);
                                                            what an invalid answer scores in pure
                                                            mode (computed by the view, not stored).
worst_pure_exploitability    float64              not null  Exploitability of the worst pure action:
                                                            max_i (value - min_j U_ij), the largest
                                                            exploitability of any answer
                                                            (exploitability is convex); quality = 1
                                                            - exploitability / this (computed by the
                                                            view, not stored).
""", derived={
    "uniform_nash_gap": UNIFORM_NASH_GAP,
    "uniform_exploitability": UNIFORM_EXPLOITABILITY,
    "uniform_pure_exploitability": UNIFORM_PURE_EXPLOITABILITY,
    "worst_pure_exploitability": WORST_PURE_EXPLOITABILITY,
})

TRIALS = table("""
bucket          string         not null  Bucket id.
seed            int64          not null  Seed of the game stream.
provider        string         not null  Model provider, e.g. 'dummy', 'openai'.
model           string         not null  Model name.
tier            string                   Model tier label (sweeps), NULL when none.
mode            string         not null  Answer mode: 'pure', 'mixed' or 'logprob'.
game_id         string         not null  Game id (joins games.game_id).
game_index      int64          not null  Index of the game in its stream.
trial           int32          not null  Trial number within (game, mode), from 0.
trial_id        string         not null  Stable trial id '<game_id>/<mode>/t<trial>' (computed by
                                         the view from those columns; not stored in the Parquet
                                         files).
decision        int32                    Pure mode: chosen row action, 0-based; NULL when invalid.
strategy        list<float64>            Mixed / logprob mode: the strategy (sums to 1); NULL when
                                         invalid.
label_mass      float64                  Logprob mode: probability the model put on writing a valid
                                         action label after the cue (white space and multi-digit
                                         labels followed); below the run's min_label_mass the
                                         reading is invalid ('low_label_mass').
parse_status    string         not null  'ok' or why the answer is invalid: no_answer, out_of_range,
                                         ambiguous, wrong_length, not_a_distribution, non_finite
                                         (NaN or infinity in the answer or its logprobs), empty,
                                         low_label_mass, call_failed.
parse_detail    string         not null  Short reason when parse_status is not 'ok'.
raw_text        string                   The model's answer text, verbatim; NULL when the call
                                         failed.
parser_version  string                   Version of the answer reader that set parse_status
                                         (games/answers PARSER_VERSION, e.g. 'answers.1'); distbench
                                         rescore re-reads with the current one. NULL in runs made
                                         before the column existed.
reasoning       string                   The reasoning factor: 'direct' (answer at once) or 'cot'
                                         (reasoning first, only the final line parsed; --reasoning).
                                         NULL in runs made before the column existed (they were
                                         direct).
reasoning_text  string                   cot: the answer's text before its final line (the
                                         reasoning); NULL in direct runs and when the call failed.
llm_value       float64                  x'U y*: the answer's expected payoff against the Nash
                                         opponent.
br_value        float64                  max_a (U y*)_a: the best response's payoff against y*.
nash_gap        float64                  br_value - llm_value >= 0.
exploitability  float64                  value - min_j (x'U)_j >= 0: what a best responder takes.
gap_degenerate  bool           not null  Copied from games: nash_gap is 0 for every answer.
call_id         string                   Row of the calls table, NULL for backends without calls.
latency_ms      float64                  Time on the wire of the model call's last attempt, in
                                         milliseconds (the model's own time for in-process models;
                                         timing column).
""", head=row_key("matrix"), derived={
    "trial_id": "game_id || '/' || mode || '/t' || CAST(trial AS VARCHAR)",
})

GAME_SCORES = table("""
run_id               string   not null  Run id.
shard_id             string   not null  Shard that produced the trials.
bucket               string   not null  Bucket id.
seed                 int64    not null  Seed of the game stream.
provider             string   not null  Model provider.
model                string   not null  Model name.
tier                 string             Model tier label (sweeps), NULL when none.
mode                 string   not null  Answer mode.
game_id              string   not null  Game id (joins games.game_id).
game_index           int64    not null  Index of the game in its stream.
trials               int32    not null  Trials of this game, model and mode in this shard (a game
                                        with more trials than a shard holds has one row per part).
valid                int32    not null  Trials with parse_status 'ok'.
mean_nash_gap        float64            Mean nash_gap over the valid trials; NULL when none.
var_nash_gap         float64            Population variance of nash_gap over the valid trials.
min_nash_gap         float64            Smallest nash_gap of a valid trial.
max_nash_gap         float64            Largest nash_gap of a valid trial.
mean_llm_value       float64            Mean llm_value over the valid trials.
mean_br_value        float64            Mean br_value over the valid trials.
mean_abs_br_value    float64            Mean |br_value| over the valid trials.
mean_exploitability  float64            Mean exploitability over the valid trials.
mean_label_mass      float64            Logprob mode: mean label_mass of the game's readings, valid
                                        or not; NULL in other modes.
gap_degenerate       bool     not null  Copied from games.
""")


def _perturbed_trials() -> pa.Schema:
    """``perturb_trials``: the trials of a game's other presentations (``--perturb``), the
    ``trials`` columns with the answer mapped back to the original game (so ``decision``,
    ``strategy`` and the scores are the original game's), plus the presentation."""
    fields = []
    for f in TRIALS:
        if f.name == "trial_id":
            f = _f("trial_id", pa.string(),
                   "Stable trial id '<game_id>/<mode>/<presentation>/t<trial>' (computed by the "
                   "view; not stored).", False,
                   derived="game_id || '/' || mode || '/' || presentation || '/t' || "
                           "CAST(trial AS VARCHAR)")
        elif f.name == "decision":
            f = _f("decision", pa.int32(), "Pure mode: the chosen action mapped back to the "
                   "original game, 0-based (position's underlying action); NULL when invalid.")
        elif f.name == "strategy":
            f = _f("strategy", _LIST_F64, "Mixed / logprob mode: the strategy mapped back to the "
                   "original game's actions; NULL when invalid.")
        fields.append(f)
        if f.name == "game_index":
            fields += [
                _f("presentation", pa.string(), "How the game was presented: 'labels', 'seat', "
                   "'affine' or 'framing' (the base presentation's rows are in trials).", False),
                _f("presentation_id", pa.string(), "Stable presentation id "
                   "'<game_id>/<presentation>' (its order, scale and template are a function "
                   "of it).", False),
                _f("row_order", pa.list_(pa.int32()), "The original action shown at each "
                   "position: position k (label k+1) is action row_order[k] (0-based).", False),
                _f("position", pa.int32(), "Pure mode: the position the model chose as it saw "
                   "it (0-based; label position+1); NULL when invalid or not pure."),
            ]
    return pa.schema(fields)


PERTURB_TRIALS = _perturbed_trials()

TABLES: dict[str, pa.Schema] = {"games": GAMES, "trials": TRIALS, "game_scores": GAME_SCORES,
                                "perturb_trials": PERTURB_TRIALS}

# The per-trial quality in [0, 1] (README, "The headline"): 1 - exploitability / the worst pure
# action's exploitability on the game, 1 for any valid answer on a game whose every action is
# optimal; an invalid answer 0; a failed call NULL (not the model's: left out).
QUALITY_EXPR = f"""
       CASE WHEN t.parse_status = 'call_failed' THEN NULL
            WHEN t.parse_status <> 'ok' THEN 0.0
            WHEN g.worst_pure_exploitability <= {QUALITY_TOLERANCE} THEN 1.0
            ELSE greatest(0.0, least(1.0, 1.0 - t.exploitability / g.worst_pure_exploitability))
       END"""
QUALITY_SQL = QUALITY_EXPR + " AS quality"

SCORED_SQL = """
SELECT t.*,
       CASE WHEN t.parse_status = 'ok' THEN t.nash_gap ELSE g.uniform_nash_gap END
           AS honest_gap,
       CASE WHEN t.parse_status = 'ok' THEN t.exploitability
            WHEN t.mode = 'pure' THEN g.uniform_pure_exploitability
            ELSE g.uniform_exploitability END AS honest_expl,
       t.parse_status <> 'call_failed' AS answered,""" + QUALITY_SQL + """
FROM trials AS t
LEFT JOIN (SELECT DISTINCT run_id, game_id, uniform_nash_gap, uniform_exploitability,
                           uniform_pure_exploitability, worst_pure_exploitability FROM games) AS g
    USING (run_id, game_id)
WHERE t.family = 'matrix'
"""

VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {"matrix_scored": (SCORED_SQL, ("trials", "games"))}
"""``matrix_scored``: the matrix trials with their scores. The headline's ``quality`` (in
[0, 1]: 1 - exploitability / the game's worst pure exploitability for a valid answer, 0 for an
invalid one, NULL for a failed call, which is not the model's) and ``answered`` (the call did
not fail); the older honest scores ``honest_gap`` and ``honest_expl`` (an invalid answer
scores as chance on its game: ``games.uniform_*``). Every query of the headline reads it
(README, "The headline")."""
