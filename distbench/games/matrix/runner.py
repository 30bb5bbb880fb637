"""Plays one matrix shard: generate, solve, ask, parse, score, tabulate.

Runs inside a Ray task (or in the driver with ``--no-parallel``) and returns Arrow tables; it
writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from distbench.games.answers.logprob import DEFAULT_CUE, read_strategies
from distbench.games.answers.parse import PARSER_VERSION, ParseStatus, parse_mixed, parse_pure
from distbench.games.answers.presentation import (
    make_presentation,
    to_underlying_actions,
    to_underlying_strategies,
)
from distbench.games.answers.reasoning import reasoning_budget, reasoning_mode, split_final
from distbench.games.base import ShardResult, derive_seed
from distbench.games.matrix.generate import game_ids, generate_games, has_saddle_point
from distbench.games.matrix.plan import Shard, requests_per_game
from distbench.games.matrix.prompts import (
    answer_policy,
    mixed_prompt,
    presented_prompt,
    pure_prompt,
    with_cue,
)
from distbench.kernels import score_actions, score_strategies, solve_zero_sum
from distbench.llm.base import Backend, BackendSpec, Request, Response
from distbench.llm.calls import calls_table
from distbench.llm.dummy import DummyBackend, splitmix64


def request_seeds(llm_seed: int, ids: Sequence[str], mode: str, num_trials: int,
                  first: int = 0) -> np.ndarray:
    """Per-request seeds of trials ``first`` to ``first + num_trials - 1``, (len(ids),
    num_trials) uint64: a function of game, mode and trial."""
    base = np.fromiter(
        (derive_seed(llm_seed, gid, mode) for gid in ids), dtype=np.uint64, count=len(ids)
    )
    with np.errstate(over="ignore"):
        grid = base[:, None] + np.arange(first, first + num_trials, dtype=np.uint64)[None, :]
    return splitmix64(grid)


def _repeat(value: str | None, count: int) -> pa.Array:
    """``count`` copies of one string (or nulls), dictionary-encoded."""
    if value is None:
        return pa.nulls(count, type=pa.string())
    return pa.DictionaryArray.from_arrays(_zeros(count), pa.array([value], type=pa.string()))


@lru_cache(maxsize=16)
def _zeros(count: int) -> pa.Array:
    return pa.array(np.zeros(count, dtype=np.int8))


def _cell_columns(shard: Shard, mode: str, count: int) -> dict[str, pa.Array | np.ndarray]:
    """The columns saying whose rows these are (run, shard, bucket, seed, model, mode),
    constant within one mode of a shard: the ``trials`` and ``game_scores`` rows share them.
    Column order does not matter (the writer conforms tables to their schema)."""
    return {
        "run_id": _repeat(shard.run_id, count),
        "shard_id": _repeat(shard.shard_id, count),
        "bucket": _repeat(shard.bucket, count),
        "seed": np.full(count, shard.seed, dtype=np.int64),
        "provider": _repeat(shard.llm.provider, count),
        "model": _repeat(shard.llm.model, count),
        "tier": _repeat(shard.tier, count),
        "mode": _repeat(mode, count),
    }


def _floats(values: np.ndarray, missing: np.ndarray) -> pa.Array:
    """A float64 column, null where ``missing`` (no validity bitmap when nothing is)."""
    return pa.array(values, mask=missing if missing.any() else None, type=pa.float64())


def _count(column: pa.ChunkedArray, value: str) -> int:
    """How many entries of a string column (plain or dictionary-encoded) equal ``value``."""
    total = 0
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            matches = np.flatnonzero(chunk.dictionary.to_numpy(zero_copy_only=False) == value)
            if matches.size:
                codes = chunk.indices.to_numpy(zero_copy_only=False)
                total += int(np.isin(codes, matches).sum())
        else:
            total += int(pc.sum(pc.equal(chunk, value)).as_py() or 0)
    return total


def _concat(tables: list[pa.Table]) -> pa.Table:
    """Concatenates the modes' trials; a column encoded differently across them (a
    dictionary in one, plain in another) is decoded first."""
    if len(tables) == 1:
        return tables[0]
    names = tables[0].column_names
    for name in names:
        types = {t[name].type for t in tables}
        if len(types) > 1:
            plain = next(ty.value_type if pa.types.is_dictionary(ty) else ty for ty in types)
            tables = [t.set_column(t.column_names.index(name), name, t[name].cast(plain))
                      for t in tables]
    return pa.concat_tables(tables)


def _lists(values: np.ndarray) -> pa.Array:
    """(count, k, ...) numbers as nested Arrow lists, one per leading index, without Python
    lists."""
    array: pa.Array = pa.array(np.ascontiguousarray(values, dtype=np.float64).reshape(-1))
    for size in reversed(values.shape[1:]):
        count = len(array) // size
        array = pa.ListArray.from_arrays(pa.array(np.arange(0, count * size + 1, size,
                                                            dtype=np.int32)), array)
    return array


def games_table(shard: Shard, ids: list[str], payoffs: np.ndarray, sol) -> pa.Table:
    """The ``games`` rows of a shard."""
    count = len(ids)
    status = pa.DictionaryArray.from_arrays(
        pa.array(np.asarray(sol.status, dtype=np.int8)),
        pa.array(["ok", "iteration_limit", "inaccurate"]))
    columns = {
        "run_id": _repeat(shard.run_id, count),
        "family": _repeat("matrix", count),
        "bucket": _repeat(shard.bucket, count),
        "seed": np.full(count, shard.seed, dtype=np.int64),
        "game_index": np.arange(shard.start, shard.stop, dtype=np.int64),
        "game_id": pa.array(ids, type=pa.string()),
        "rows": np.full(count, payoffs.shape[1], dtype=np.int32),
        "cols": np.full(count, payoffs.shape[2], dtype=np.int32),
        "payoff": _lists(payoffs),
        "nash_row": _lists(sol.row),
        "nash_col": _lists(sol.col),
        "value": sol.value,
        "row_support": np.asarray(sol.row_support, dtype=np.int32),
        "col_support": np.asarray(sol.col_support, dtype=np.int32),
        "has_saddle": has_saddle_point(payoffs),
        "gap_degenerate": sol.gap_degenerate,
        "residual": sol.residual,
        "solver_status": status,
    }
    return pa.table(columns)


def _ask(backend: Backend, requests: list[Request]) -> list[Response]:
    return asyncio.run(backend.generate(requests))


def _parse_all(mode: str, responses: Sequence[Response], m: int, continuation: bool,
               reasons: list[str | None] | None = None):
    """Parses pure or mixed answers: (statuses, details, actions (T,), strategies (T, m),
    label_mass (T,), all NaN). With ``reasons`` (a ``cot`` run: one None per answer), only
    each answer's final line is parsed and the text before it is put in ``reasons``."""
    total = len(responses)
    statuses: list[str] = []
    details: list[str] = []
    actions = np.full(total, -1, dtype=np.int64)
    strategies = np.full((total, m), np.nan)
    label_mass = np.full(total, np.nan)
    for k, resp in enumerate(responses):
        if resp.status != "ok" or resp.text is None:
            statuses.append(ParseStatus.CALL_FAILED.value)
            details.append(resp.error or "call failed")
            continue
        text = resp.text
        if reasons is not None:
            reasons[k], text = split_final(text)
            continuation = False  # the final line is a labelled answer line in either style
        if mode == "pure":
            ans = parse_pure(text, m, continuation=continuation)
            if ans.status is ParseStatus.OK:
                actions[k] = ans.action
            statuses.append(ans.status.value)
            details.append(ans.detail)
        else:
            ans = parse_mixed(text, m, continuation=continuation)
            if ans.status is ParseStatus.OK:
                strategies[k] = ans.strategy
            statuses.append(ans.status.value)
            details.append(ans.detail)
    return statuses, details, actions, strategies, label_mass



def play_mode(
    shard: Shard,
    mode: str,
    backend: Backend,
    ids: list[str],
    payoffs: np.ndarray,
    sol,
    presentation: str | None = None,
    probes: list[tuple[int, int]] | None = None,
) -> tuple[pa.Table, pa.Table, pa.Table | None]:
    """Asks, parses and scores every trial of one mode.

    With ``presentation`` (a ``--perturb`` name), every game is shown in that presentation
    (``games.answers.presentation``): the answers are mapped back to the original game and
    scored there, the trials carry the presentation columns (``perturb_trials``), and the
    requests have their own seeds (derived from the presentation id). ``probes`` collects the
    tokens of the ``n`` probes the answers paid (:attr:`Response.probe`).

    Returns:
        The ``trials`` rows, the ``game_scores`` rows, and the ``calls`` rows (None for the
        dummy backend, whose answers cost nothing and are fully determined by the trial).
    """
    num_games, m, _ = payoffs.shape
    style = backend.spec.style
    reasoning = "direct" if mode == "logprob" else reasoning_mode(backend.spec)
    reasons: list[str | None] | None = None
    first = 0  # the game's first trial this shard plays (its trials may be split)
    if mode == "logprob":
        trials = 1
        cue = shard.logprob_cue or DEFAULT_CUE
    else:
        first, last = shard.trials
        trials = last - first
        stop, budget = answer_policy(mode, style)
        if reasoning == "cot":  # its own budget, and no stop that could cut the reasoning
            stop, budget = None, reasoning_budget(backend.spec)
        max_tokens = shard.max_tokens or budget
    continuation = style == "completion"
    fast = isinstance(backend, DummyBackend) and backend.spec.option("fast", False)
    if fast and mode == "logprob":
        raise ValueError("the dummy's fast path answers pure and mixed mode only")
    shown = None if presentation is None else [
        make_presentation(gid, presentation, m, payoffs.shape[2]) for gid in ids]
    seeds = request_seeds(shard.llm_seed, ids if shown is None else
                          [p.presentation_id for p in shown], mode, trials, first)
    tag = mode if presentation is None else f"{mode}/{presentation}"

    def prompt_of(g: int, kind: str, sty: str) -> str:
        # logprob mode reads a direct completion prompt (reasoning is then "direct")
        if shown is not None:
            return presented_prompt(payoffs[g], shown[g], kind, style=sty, reasoning=reasoning)
        return (pure_prompt if kind == "pure" else mixed_prompt)(payoffs[g], style=sty,
                                                                  reasoning=reasoning)

    total = num_games * trials
    game_index = np.repeat(np.arange(num_games, dtype=np.int64), trials)
    call_log: list[tuple[int, Request, Response]] | None = None
    owner: list[int] | None = None  # per trial, the trial whose call id its call carries
    if fast:
        # Array fast path of the dummy (for throughput benchmarks): the same policy, answered
        # as arrays, no text to parse.
        actions, strategies, statuses, details, raw, label_mass, latency = _fast_answers(
            backend, mode, m, seeds, total)
    elif mode == "logprob":
        # The completion prompt ends with the cue (whatever the model's style): the strategy
        # is read from the next tokens' probabilities, following white space and digit
        # prefixes where the tokenizer needs it (see games/answers/logprob.py).
        prompts = [with_cue(prompt_of(g, "pure", "completion"), cue) for g in range(num_games)]
        (actions, strategies, statuses, details, raw, label_mass, latency), call_log = \
            _logprob_answers(backend, shard, prompts, seeds, m, total)
    else:
        prompts = [prompt_of(g, mode, style) for g in range(num_games)]
        task = f"matrix.{mode}:{m}"
        chunks = sample_chunks(trials, backend.spec.max_samples())
        requests = [Request(prompt=prompts[g], seed=int(seeds[g, lo]), task=task,
                            max_tokens=max_tokens, temperature=shard.temperature, stop=stop,
                            samples=tuple(int(x) for x in seeds[g, lo:hi])
                            if hi - lo > 1 else None)
                    for g in range(num_games) for lo, hi in chunks]
        answers = _ask(backend, requests)
        if probes is not None:
            probes.extend(a.probe for a in answers if a.probe is not None)
        firsts = [g * trials + lo for g in range(num_games) for lo, _ in chunks]
        responses, call_log, owner = _per_trial(requests, answers, firsts)
        reasons = [None] * total if reasoning == "cot" else None
        statuses, details, actions, strategies, label_mass = _parse_all(
            mode, responses, m, continuation, reasons
        )
        raw = pa.array([r.text for r in responses], type=pa.string())
        latency = np.fromiter((r.latency_ms for r in responses), dtype=np.float64, count=total)

    positions = None
    if shown is not None:  # answers by presented position -> the original game's actions
        orders = np.asarray([p.row_order for p in shown], dtype=np.int64)[game_index]
        positions = actions
        actions = to_underlying_actions(actions, orders)
        strategies = to_underlying_strategies(strategies, orders)
    scores, decision, strategy = _scored(mode, payoffs, sol, game_index, actions, strategies)

    def nullable(values: np.ndarray) -> pa.Array:
        return _floats(values, np.isnan(values))

    trial_no = np.tile(np.arange(first, first + trials, dtype=np.int32), num_games)
    # Columns that repeat a few values are dictionary-encoded: cheap to build, to send from
    # the worker and to write. trial_id is derived by the catalog's view, not stored.
    trial_game_ids = pa.DictionaryArray.from_arrays(
        pa.array(game_index.astype(np.int32)), pa.array(ids, type=pa.string()))
    with_calls = call_log is not None and shard.llm.provider != "dummy"
    call_ids = [f"{shard.shard_id}/{tag}/{k}" for k in range(total)] if with_calls else None
    trial_call_ids = call_ids
    if with_calls and owner is not None:
        trial_call_ids = [call_ids[k] for k in owner]  # a trial names the call that answered it
    columns = {
        **_cell_columns(shard, mode, total),
        "family": _repeat("matrix", total),
        "game_id": trial_game_ids,
        "game_index": game_index + shard.start,
        "trial": trial_no,
        "decision": decision,
        "strategy": strategy,
        "label_mass": nullable(label_mass),
        "parse_status": statuses,
        "parse_detail": details,
        "raw_text": raw,
        "parser_version": _repeat(PARSER_VERSION, total),
        "reasoning": _repeat(reasoning, total),
        "reasoning_text": (pa.array(reasons, type=pa.string()) if reasons is not None
                           else pa.nulls(total, type=pa.string())),
        "llm_value": nullable(scores.llm_value),
        "br_value": nullable(scores.br_value),
        "nash_gap": nullable(scores.nash_gap),
        "exploitability": nullable(scores.exploitability),
        "gap_degenerate": sol.gap_degenerate[game_index],
        "call_id": trial_call_ids if with_calls else pa.nulls(total, type=pa.string()),
        "latency_ms": latency,
    }
    if shown is not None:
        columns.update(_presentation_columns(shown, game_index, mode, positions, m))
    trials_tab = pa.table(columns)
    ok = (np.ones(total, dtype=bool) if fast
          else np.asarray(statuses, dtype=object) == ParseStatus.OK.value)
    scores_tab = game_scores_table(shard, mode, ids, trials, ok, scores, sol.gap_degenerate,
                                   label_mass)
    calls = _calls(shard, mode, ids, trials, call_log, call_ids, first, tag) if with_calls \
        else None
    return trials_tab, scores_tab, calls


def _fast_answers(backend: Backend, mode: str, m: int, seeds: np.ndarray,
                  total: int) -> tuple:
    """The dummy's array answers (its fast path): (actions, strategies, statuses, details,
    raw texts, label masses, latencies) of every trial."""
    answers = backend.answer_arrays(mode, m, seeds.reshape(-1))
    actions = answers if mode == "pure" else np.full(total, -1, dtype=np.int64)
    strategies = answers if mode == "mixed" else np.full((total, m), np.nan)
    raw = (pa.DictionaryArray.from_arrays(
               pa.array(actions, type=pa.int32()),
               pa.array([f"Action: {k + 1}" for k in range(m)]))
           if mode == "pure" else pa.nulls(total, type=pa.string()))
    return (actions, strategies, _repeat(ParseStatus.OK.value, total), _repeat("", total), raw,
            np.full(total, np.nan), np.zeros(total))


def _logprob_answers(backend: Backend, shard: Shard, prompts: list[str], seeds: np.ndarray,
                     m: int, total: int) -> tuple[tuple, list]:
    """The strategies read from the next tokens' probabilities after each game's cue:
    ((actions, strategies, statuses, details, raw texts, label masses, latencies), the
    call log)."""
    num_games = len(prompts)
    readings, call_log = read_strategies(
        prompts, seeds[:, 0], m, lambda batch: _ask(backend, batch),
        temperature=shard.temperature, min_label_mass=shard.min_label_mass,
        task=f"matrix.logprob:{m}")
    actions = np.full(total, -1, dtype=np.int64)
    strategies = np.full((total, m), np.nan)
    for g, reading in enumerate(readings):
        if reading.strategy is not None:
            strategies[g] = reading.strategy
    label_mass = np.array([r.label_mass for r in readings], dtype=np.float64)
    raw = pa.array([r.text for r in readings], type=pa.string())
    firsts = [resp for _, _, resp in call_log[:num_games]]
    latency = np.fromiter((r.latency_ms for r in firsts), dtype=np.float64, count=total)
    return (actions, strategies, [r.status for r in readings], [r.detail for r in readings],
            raw, label_mass, latency), call_log


def _scored(mode: str, payoffs: np.ndarray, sol, game_index: np.ndarray, actions: np.ndarray,
            strategies: np.ndarray) -> tuple[Any, pa.Array, pa.Array]:
    """(the scores, the decision column, the strategy column) of every trial of ``mode``."""
    total, m = len(game_index), payoffs.shape[1]
    if mode == "pure":
        scores = score_actions(payoffs, sol.col, sol.value, game_index, actions)
        return (scores, pa.array(actions, mask=actions < 0, type=pa.int32()),
                pa.nulls(total, type=pa.list_(pa.float64())))
    scores = score_strategies(payoffs, sol.col, sol.value, game_index, strategies)
    valid = ~np.isnan(strategies).any(axis=1)
    strategy = pa.ListArray.from_arrays(
        pa.array(np.arange(0, total * m + 1, m, dtype=np.int32)),
        pa.array(np.nan_to_num(strategies).reshape(-1)),
        mask=pa.array(~valid),
    )
    return scores, pa.nulls(total, type=pa.int32()), strategy


def _presentation_columns(shown: list, game_index: np.ndarray, mode: str,
                          positions: np.ndarray | None, m: int) -> dict[str, pa.Array]:
    """The ``perturb_trials`` columns saying how each trial's game was presented."""
    total = len(game_index)
    codes = pa.array(game_index.astype(np.int32))
    orders = np.asarray([p.row_order for p in shown], dtype=np.int32)[game_index]
    row_order = pa.ListArray.from_arrays(
        pa.array(np.arange(0, total * m + 1, m, dtype=np.int32)), pa.array(orders.reshape(-1)))
    if mode == "pure" and positions is not None:
        position = pa.array(positions, mask=positions < 0, type=pa.int32())
    else:
        position = pa.nulls(total, type=pa.int32())
    return {
        "presentation": _repeat(shown[0].name, total),
        "presentation_id": pa.DictionaryArray.from_arrays(
            codes, pa.array([p.presentation_id for p in shown], type=pa.string())),
        "row_order": row_order,
        "position": position,
    }


def sample_chunks(trials: int, max_n: int) -> list[tuple[int, int]]:
    """The trials of one game as (lo, hi) ranges, one request each: one per trial when the
    endpoint takes one sample per request (``max_n`` 1), else as few requests as ``max_n``
    allows, of sizes differing by at most one."""
    if max_n <= 1 or trials <= 1:
        return [(t, t + 1) for t in range(trials)]
    count = requests_per_game(trials, max_n)
    bounds = [trials * i // count for i in range(count + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _per_trial(requests: list[Request], answers: list[Response], firsts: list[int]
               ) -> tuple[list[Response], list[tuple[int, Request, Response]], list[int]]:
    """Per trial, its answer; the call log (one entry per call made: a request of several
    samples answered in one call is one entry, under its first trial; one answered sample by
    sample is one entry per sample); and per trial the trial under which its call is logged.
    The log is in trial order, so with one sample per request it is exactly the log of one
    request per trial."""
    responses: list[Response] = []
    log: list[tuple[int, Request, Response]] = []
    owner: list[int] = []
    for first, req, answer in zip(firsts, requests, answers, strict=True):
        per_sample = answer.sample_responses(req.n)
        responses.extend(per_sample)
        if answer.parts is None and req.n > 1:
            log.append((first, req, answer))
            owner.extend([first] * req.n)
        else:
            log.extend((first + i, r, a) for i, (r, a) in enumerate(
                zip(req.split(), per_sample, strict=True)))
            owner.extend(range(first, first + req.n))
    return responses, log, owner


def _calls(shard: Shard, mode: str, ids: list[str], trials: int,
           call_log: list[tuple[int, Request, Response]], call_ids: list[str],
           first: int = 0, tag: str | None = None) -> pa.Table:
    """The ``calls`` rows of one mode, one per call made: call ``<shard>/<mode>/<k>`` answers
    the shard's ``k``-th trial (and, for a request of several samples, the trials after it
    that it answered); ``first`` is the game's first trial this shard plays. A logprob
    reading's follow-up calls come after the first calls, as ``<first call id>.<n>``."""
    total = len(call_ids)
    trial_ids = [f"{ids[k // trials]}/{tag or mode}/t{first + k % trials}" for k in range(total)]
    seen = [False] * total
    ids_out: list[str] = []
    trial_out: list[str] = []
    follow = [0] * total
    for k, _, _ in call_log:
        if seen[k]:
            follow[k] += 1
            ids_out.append(f"{call_ids[k]}.{follow[k]}")
        else:
            seen[k] = True
            ids_out.append(call_ids[k])
        trial_out.append(trial_ids[k])
    trial_ids = trial_out
    requests = [req for _, req, _ in call_log]
    responses = [resp for _, _, resp in call_log]
    return calls_table(shard.run_id, shard.shard_id, shard.llm, mode, requests, responses,
                       ids_out, trial_ids)


def game_scores_table(shard: Shard, mode: str, ids: list[str], trials: int, ok: np.ndarray,
                      scores, gap_degenerate: np.ndarray,
                      label_mass: np.ndarray | None = None) -> pa.Table:
    """The ``game_scores`` rows of one mode: per game, the statistics of its valid trials
    (a map-side combine: the run summary reads these instead of every trial)."""
    g = len(ids)
    ok = ok.reshape(g, trials)
    valid = ok.sum(axis=1)
    every = bool(ok.all())  # the common case: nothing to mask

    def valid_only(values: np.ndarray, fill: float) -> np.ndarray:
        values = values.reshape(g, trials)
        return values if every else np.where(ok, values, fill)

    with np.errstate(invalid="ignore", divide="ignore"):
        def mean(values: np.ndarray) -> np.ndarray:
            return valid_only(values, 0.0).sum(axis=1) / valid

        gaps = scores.nash_gap.reshape(g, trials)
        mean_gap = mean(scores.nash_gap)
        var_gap = valid_only((gaps - mean_gap[:, None]) ** 2, 0.0).sum(axis=1) / valid
        lo = valid_only(gaps, np.inf).min(axis=1)
        hi = valid_only(gaps, -np.inf).max(axis=1)

        def nullable(values: np.ndarray) -> pa.Array:
            return _floats(values, valid == 0)

        columns = {
            **_cell_columns(shard, mode, g),
            "game_id": pa.array(ids, type=pa.string()),
            "game_index": np.arange(shard.start, shard.stop, dtype=np.int64),
            "trials": np.full(g, trials, dtype=np.int32),
            "valid": valid.astype(np.int32),
            "mean_nash_gap": nullable(mean_gap),
            "var_nash_gap": nullable(var_gap),
            "min_nash_gap": nullable(lo),
            "max_nash_gap": nullable(hi),
            "mean_llm_value": nullable(mean(scores.llm_value)),
            "mean_br_value": nullable(mean(scores.br_value)),
            "mean_abs_br_value": nullable(mean(np.abs(scores.br_value))),
            "mean_exploitability": nullable(mean(scores.exploitability)),
            "mean_label_mass": _label_mass(label_mass, g, trials),
            "gap_degenerate": gap_degenerate,
        }
    return pa.table(columns)


def _label_mass(values: np.ndarray | None, games: int, trials: int) -> pa.Array:
    """Per game, the mean label mass of its readings (NULL where there is none)."""
    if values is None or np.isnan(values).all():
        return pa.nulls(games, type=pa.float64())
    per_game = values.reshape(games, trials)
    present = ~np.isnan(per_game)
    counts = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(present, per_game, 0.0).sum(axis=1) / counts
    return _floats(means, counts == 0)


def run_shard(shard: Shard, backends: Mapping[BackendSpec, Backend]) -> ShardResult:
    """Plays ``shard`` with its model (``backends[shard.llm]``) and returns its tables."""
    backend = backends[shard.llm]
    ids = game_ids(shard.bucket, shard.seed, shard.start, shard.stop)
    payoffs = generate_games(shard.bucket, shard.seed, shard.start, shard.stop)
    sol = solve_zero_sum(payoffs)
    games = games_table(shard, ids, payoffs, sol)
    probes: list[tuple[int, int]] = []
    played = [play_mode(shard, mode, backend, ids, payoffs, sol, probes=probes)
              for mode in shard.modes]
    perturbed = [play_mode(shard, mode, backend, ids, payoffs, sol, name, probes=probes)
                 for name in shard.perturb for mode in shard.modes]
    trials = _concat([t for t, _, _ in played])
    game_scores = _concat([t for _, t, _ in played])
    calls = [c for _, _, c in played + perturbed if c is not None]
    statuses = trials["parse_status"]
    valid = int(pc.sum(game_scores["valid"]).as_py() or 0)  # counted per game already
    failed = _count(statuses, ParseStatus.CALL_FAILED.value)
    other = _concat([t for t, _, _ in perturbed]) if perturbed else None
    if other is not None:
        valid += _count(other["parse_status"], ParseStatus.OK.value)
        failed += _count(other["parse_status"], ParseStatus.CALL_FAILED.value)
    stats = {"games": games.num_rows,
             "trials": trials.num_rows + (other.num_rows if other is not None else 0),
             "valid": valid, "call_failed": failed, "calls": sum(c.num_rows for c in calls)}
    if probes:  # paid requests without a calls row (engine.budget.probe_spend counts them)
        stats.update(probe_requests=len(probes),
                     probe_prompt_tokens=sum(p for p, _ in probes),
                     probe_completion_tokens=sum(c for _, c in probes))
    tables = {"games": (shard.chunk_id, games), "trials": (shard.shard_id, trials),
              "game_scores": (shard.shard_id, game_scores)}
    if other is not None:
        tables["perturb_trials"] = (shard.shard_id, other)
    if calls:
        tables["calls"] = (shard.shard_id, pa.concat_tables(calls))
    return ShardResult(shard_id=shard.shard_id, tables=tables, stats=stats)


def warm_up() -> None:
    """Loads the compiled kernels a shard uses (a warm executor calls this once)."""
    payoffs = np.array([[[1.0, -1.0], [-1.0, 1.0]]])
    sol = solve_zero_sum(payoffs)
    score_actions(payoffs, sol.col, sol.value, np.zeros(1, dtype=np.int64),
                  np.zeros(1, dtype=np.int64))
