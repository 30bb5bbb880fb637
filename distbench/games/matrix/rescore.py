"""Re-reading a matrix run's stored answers (``distbench rescore``): the family's rescore hook.

Per committed shard, every trial's stored answer (``trials.raw_text``, the model's text
verbatim) is parsed again with today's parser (:mod:`distbench.games.answers.parse`) and scored
again with today's kernels against the stored game (its payoffs and the stored solution); the
``game_scores`` rows are rebuilt from the new trials. No model is called. Rows are in the
stored order and every other column is kept, so unchanged code gives the source's rows (the
run id aside).

Not re-read (kept as stored, with the ``parser_version`` they carry): trials whose call failed
(there is no answer), logprob readings (they come from the next-token probabilities, which
are not stored), rows without a text (the dummy's array fast path in mixed mode), and the
trials of other presentations (``perturb_trials``, ``--perturb``): they are carried into the
new run unchanged, so its invariance figures are the source's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from distbench.games.answers.parse import (
    PARSER_VERSION,
    MixedAnswer,
    ParseStatus,
    PureAnswer,
    parse_mixed,
    parse_pure,
)
from distbench.games.answers.reasoning import split_final
from distbench.games.base import Rescored, ShardResult, StoredShard
from distbench.games.matrix.runner import game_scores_table
from distbench.kernels import score_actions, score_strategies

KEPT = (ParseStatus.CALL_FAILED.value,)
"""Statuses whose rows are never re-read (no answer was stored)."""


def rescore(stored: StoredShard) -> Rescored:
    """The family's ``rescore`` hook: today's parsers (see the module docstring)."""
    return rescore_shard(stored)


def _plain(column: pa.ChunkedArray | pa.Array) -> list:
    return column.to_pylist()


def _with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    index = table.column_names.index("run_id")
    return table.set_column(index, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


def _set(table: pa.Table, name: str, values: pa.Array | list) -> pa.Table:
    field = table.schema.field(name)
    kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
    array = values if isinstance(values, pa.Array) else pa.array(values, type=kind)
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, array)
    return table.append_column(name, array)


def rescore_shard(
    stored: StoredShard,
    *,
    read_pure: Callable[..., PureAnswer] = parse_pure,
    read_mixed: Callable[..., MixedAnswer] = parse_mixed,
    parser_version: str = PARSER_VERSION,
) -> Rescored:
    """Re-reads and re-scores one stored matrix shard.

    Args:
        stored: The shard's stored tables (``games``, ``trials``, ``game_scores``, maybe
            ``calls``).
        read_pure: The pure-answer parser, ``(text, m, continuation=...) -> PureAnswer``.
        read_mixed: The mixed-answer parser, ``(text, m, continuation=...) -> MixedAnswer``.
        parser_version: What the re-read rows' ``parser_version`` says.

    Returns:
        The new tables (same names and file stems), and the status transitions of the trials.
    """
    games_stem, games = stored.tables["games"]
    trials_stem, trials = stored.tables["trials"]
    for name in ("parser_version", "reasoning", "reasoning_text"):  # a run made before them
        if name not in trials.column_names:
            trials = trials.append_column(name, pa.nulls(trials.num_rows, pa.string()))
    game_row = {gid: k for k, gid in enumerate(_plain(games["game_id"]))}
    payoffs_all = games["payoff"].to_pylist()
    cols_all = games["nash_col"].to_pylist()
    values_all = games["value"].to_numpy(zero_copy_only=False)
    degenerate_all = np.asarray(games["gap_degenerate"].to_pylist(), dtype=bool)

    modes = _plain(trials["mode"])
    order = list(dict.fromkeys(modes))
    mode_arr = np.asarray(modes, dtype=object)
    transitions: Counter[tuple[str, str, str]] = Counter()
    blocks, score_blocks = [], []
    for mode in order:
        rows = np.flatnonzero(mode_arr == mode)
        block = trials.take(pa.array(rows))
        new_block, scores_tab, moved = _rescore_block(
            stored, block, mode, game_row, payoffs_all, cols_all, values_all, degenerate_all,
            read_pure, read_mixed, parser_version)
        transitions.update(moved)
        blocks.append(new_block)
        score_blocks.append(scores_tab)
    new_trials = pa.concat_tables([_decoded(b) for b in blocks])
    new_scores = pa.concat_tables([_decoded(b) for b in score_blocks])
    tables: dict[str, tuple[str, pa.Table]] = {
        "games": (games_stem, _with_run_id(games, stored.run_id)),
        "trials": (trials_stem, new_trials),
        "game_scores": (stored.tables.get("game_scores", (stored.shard_id, None))[0], new_scores),
    }
    if "perturb_trials" in stored.tables:  # other presentations: kept as stored (see above)
        stem, table = stored.tables["perturb_trials"]
        tables["perturb_trials"] = (stem, _with_run_id(table, stored.run_id))
    calls = 0
    if "calls" in stored.tables:
        stem, table = stored.tables["calls"]
        tables["calls"] = (stem, _with_run_id(table, stored.run_id))
        calls = table.num_rows
    statuses = new_trials["parse_status"]
    stats = {"games": games.num_rows, "trials": new_trials.num_rows,
             "valid": int(pc.sum(pc.equal(statuses, "ok")).as_py() or 0),
             "call_failed": int(pc.sum(pc.equal(statuses, "call_failed")).as_py() or 0),
             "calls": calls}
    return Rescored(ShardResult(stored.shard_id, tables, stats), dict(transitions))


def _decoded(table: pa.Table) -> pa.Table:
    """``table`` with dictionary columns decoded (blocks built apart concatenate)."""
    for k, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(k, field.name, table[field.name].cast(field.type.value_type))
    return table


def _rescore_block(stored, block, mode, game_row, payoffs_all, cols_all, values_all,
                   degenerate_all, read_pure, read_mixed, parser_version):
    """One mode's trials: re-read, re-score, rebuild its game_scores rows."""
    total = block.num_rows
    gids = _plain(block["game_id"])
    first_ids = list(dict.fromkeys(gids))
    local = {gid: k for k, gid in enumerate(first_ids)}
    game_index = np.fromiter((local[g] for g in gids), dtype=np.int64, count=total)
    rows = [game_row[g] for g in first_ids]
    payoffs = np.asarray([payoffs_all[r] for r in rows], dtype=np.float64)
    col = np.asarray([cols_all[r] for r in rows], dtype=np.float64)
    value = np.asarray(values_all[rows], dtype=np.float64)
    degenerate = degenerate_all[rows]
    m = payoffs.shape[1]
    provider = _plain(block["provider"])[0]
    model = _plain(block["model"])[0]
    continuation = stored.style(provider, model) == "completion"

    old_status = _plain(block["parse_status"])
    statuses = list(old_status)
    details = _plain(block["parse_detail"])
    versions = _plain(block["parser_version"])
    cot = [r == "cot" for r in _plain(block["reasoning"])]
    reasons = _plain(block["reasoning_text"])
    raw = _plain(block["raw_text"])
    decisions = _plain(block["decision"])
    strategy_rows = _plain(block["strategy"])
    actions = np.array([-1 if d is None else d for d in decisions], dtype=np.int64)
    strategies = np.full((total, m), np.nan)
    for k, s in enumerate(strategy_rows):
        if s is not None:
            strategies[k] = s
    reread = mode in ("pure", "mixed")
    for k in range(total):
        if not reread or raw[k] is None or old_status[k] in KEPT:
            continue
        versions[k] = parser_version
        text, cont = raw[k], continuation
        if cot[k]:  # only the final line is the answer (games/answers/reasoning.py)
            reasons[k], text = split_final(text)
            cont = False
        if mode == "pure":
            ans = read_pure(text, m, continuation=cont)
            actions[k] = ans.action if ans.status is ParseStatus.OK else -1
        else:
            ans = read_mixed(text, m, continuation=cont)
            strategies[k] = ans.strategy if ans.status is ParseStatus.OK else np.nan
        statuses[k] = ans.status.value
        details[k] = ans.detail
    moved = Counter(("trials", o, n) for o, n in zip(old_status, statuses, strict=True))

    if mode == "pure":
        scores = score_actions(payoffs, col, value, game_index, actions)
        decision = pa.array(actions, mask=actions < 0, type=pa.int32())
        strategy = pa.nulls(total, type=pa.list_(pa.float64()))
    else:
        scores = score_strategies(payoffs, col, value, game_index, strategies)
        decision = pa.nulls(total, type=pa.int32())
        valid = ~np.isnan(strategies).any(axis=1)
        strategy = pa.ListArray.from_arrays(
            pa.array(np.arange(0, total * m + 1, m, dtype=np.int32)),
            pa.array(np.nan_to_num(strategies).reshape(-1)), mask=pa.array(~valid))

    def nullable(values: np.ndarray) -> pa.Array:
        missing = np.isnan(values)
        return pa.array(values, mask=missing if missing.any() else None, type=pa.float64())

    out = _with_run_id(block, stored.run_id)
    for name, values in (("decision", decision), ("strategy", strategy),
                         ("parse_status", pa.array(statuses, pa.string())),
                         ("parse_detail", pa.array(details, pa.string())),
                         ("parser_version", pa.array(versions, pa.string())),
                         ("reasoning_text", pa.array(reasons, pa.string())),
                         ("llm_value", nullable(scores.llm_value)),
                         ("br_value", nullable(scores.br_value)),
                         ("nash_gap", nullable(scores.nash_gap)),
                         ("exploitability", nullable(scores.exploitability))):
        out = _set(out, name, values)

    games = len(first_ids)
    per_game = total // games
    if per_game * games != total or not np.array_equal(
            game_index, np.repeat(np.arange(games), per_game)):
        raise ValueError(f"shard {stored.shard_id}: the {mode} trials are not stored game by "
                         "game, as a matrix shard writes them")
    game_indexes = _plain(block["game_index"])[::per_game]
    start = int(game_indexes[0])
    if game_indexes != list(range(start, start + games)):
        raise ValueError(f"shard {stored.shard_id}: its games are not consecutive")
    label_mass = block["label_mass"].to_numpy(zero_copy_only=False).astype(np.float64)
    shard = SimpleNamespace(
        run_id=stored.run_id, shard_id=stored.shard_id, bucket=_plain(block["bucket"])[0],
        seed=int(_plain(block["seed"])[0]), llm=SimpleNamespace(provider=provider, model=model),
        tier=_plain(block["tier"])[0], start=start, stop=start + games)
    ok = np.asarray(statuses, dtype=object) == ParseStatus.OK.value
    scores_tab = game_scores_table(shard, mode, first_ids, per_game, ok, scores, degenerate,
                                   label_mass)
    return out, scores_tab, moved
