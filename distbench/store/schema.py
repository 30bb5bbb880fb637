"""The table registry: every result table's columns, defined once.

The store knows no game: it defines the ``calls`` table (every family's model calls) and
holds the schemas the game families hand it (:func:`register_tables`). Writers build tables
against these schemas, the DuckDB catalog creates empty views from them, and the README's table
reference is checked against them by the tests. Each field carries a ``description`` in its
metadata.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pyarrow as pa

from distbench.store.fields import column as _f
from distbench.store.fields import derived_expression

TIMING_COLUMNS: frozenset[str] = frozenset({"latency_ms", "elapsed_ms", "queue_ms"})
"""Columns that hold wall-clock measurements: the only ones allowed to differ between runs."""


_F64 = pa.float64()

CALLS = pa.schema(
    [
        _f("run_id", pa.string(), "Run id.", False),
        _f("shard_id", pa.string(), "Shard that made the call.", False),
        _f("call_id", pa.string(), "Call id (joins trials.call_id).", False),
        _f("trial_id", pa.string(), "The trial the call answered.", False),
        _f("mode", pa.string(), "Answer mode of the trial.", False),
        _f("endpoint", pa.string(), "'<provider>:<base URL>' ('in-process' for local).", False),
        _f("provider", pa.string(), "Model provider.", False),
        _f("model", pa.string(), "Model name.", False),
        _f("style", pa.string(), "'chat' or 'completion'.", False),
        _f("request_hash", pa.string(), "SHA-256 of what decides the answer (cache key).", False),
        _f("prompt_text", pa.string(), "The prompt sent.", False),
        _f("response_text", pa.string(), "The answer text; NULL when the call failed."),
        _f("status", pa.string(), "'ok' or 'failed'.", False),
        _f("error", pa.string(), "Why the call failed ('' when ok); never a key.", False),
        _f("http_status", pa.int32(), "Last HTTP status; NULL in-process or without an answer."),
        _f("attempts", pa.int32(), "Attempts made (0 for a cache hit).", False),
        _f("latency_ms", _F64,
           "Time on the wire of the last attempt: request sent to answer read, in "
           "milliseconds (the model's own time for in-process models; timing column)."),
        _f("queue_ms", _F64,
           "Time the call waited before and between attempts (a rate-limit token, a "
           "concurrency slot, retry back-off), in milliseconds (timing column)."),
        _f("prompt_tokens", pa.int64(), "Prompt tokens reported by the endpoint."),
        _f("completion_tokens", pa.int64(), "Completion tokens reported by the endpoint."),
        _f("reasoning_content", pa.string(),
           "The provider's separate reasoning text (an OpenAI-compatible message's "
           "reasoning_content), kept whatever the run's reasoning factor; NULL when none."),
        _f("reasoning_tokens", pa.int64(),
           "Reasoning tokens the provider reported (usage.completion_tokens_details."
           "reasoning_tokens); NULL when not reported."),
        _f("cache_hit", pa.bool_(), "Answered from the response cache.", False),
        _f("samples", pa.int32(),
           "Answers the request asked for (OpenAI's n): 1, or k when one request answered k "
           "trials that share their prompt; then those trials' call_id all name this call, "
           "trial_id is the first of them, response_text is the JSON list of the k texts and "
           "the tokens are the request's (the prompt billed once).", False),
        _f("notes", pa.string(),
           "What the answer's body held that could not be used, by field ('' when nothing): "
           "a token count that is not a plausible count (stored as NULL, never priced), "
           "lone surrogates replaced by U+FFFD in the text."),
        _f("batch_id", pa.string(),
           "The provider batch that answered the call (--execution batch; billed at the batch "
           "price); NULL for a live call."),
        _f("estimated_prompt_tokens", pa.int64(),
           "Set when the endpoint's token counts of an answered call were missing or "
           "implausible (none, 0, negative, a completion over max_tokens, a prompt far over "
           "the text sent): the request's ceiling, a quarter of the prompt's characters, which "
           "budgets and costs count instead of prompt_tokens; NULL otherwise."),
        _f("estimated_completion_tokens", pa.int64(),
           "With estimated_prompt_tokens: the whole completion budget (max_tokens per "
           "sample), counted instead of completion_tokens; NULL otherwise."),
    ]
)

RATINGS = pa.schema(
    [
        _f("run_id", pa.string(), "Run id (a tournament).", False),
        _f("family", pa.string(), "Game family the players met in.", False),
        _f("player", pa.string(), "The player: '<provider>:<model>' or a scripted player's name.", False),
        _f("rank", pa.int32(), "Rank by Bradley-Terry strength, from 1.", False),
        _f("matches", pa.int64(), "Games the player played (both seats).", False),
        _f("wins", _F64, "Games won, a tie counted as half.", False),
        _f("mean_margin", _F64, "Mean of the player's seat score minus its opponent's, over its games (the family's units).", False),
        _f("bt_strength", _F64, "Bradley-Terry log-strength (natural log odds, mean 0 over the population), penalised ML with ties as half a win each.", False),
        _f("bt_low", _F64, "Lower end of bt_strength's simultaneous interval: a max-|t| bootstrap band over matches, so all players' intervals hold at once at the run's confidence (bt_strength - c * se); NULL without resamples."),
        _f("bt_high", _F64, "Upper end of that simultaneous interval (bt_strength + c * se); NULL without resamples."),
        _f("elo", _F64, "Elo display of bt_strength: 1500 + 400 / ln 10 * bt_strength.", False),
        _f("elo_low", _F64, "Elo display of bt_low (the simultaneous band)."),
        _f("elo_high", _F64, "Elo display of bt_high."),
        _f("nash_mass", _F64, "The player's probability in the maximum-entropy Nash equilibrium of the meta-game (mean margins).", False),
        _f("nash_rating", _F64, "Nash averaging rating: the player's mean margin against the equilibrium mixture (<= 0; 0 on its support); NULL for a player without games (not in the meta-game)."),
        _f("confidence", _F64, "Confidence level of the intervals.", False),
    ]
)

PAIRINGS = pa.schema(
    [
        _f("run_id", pa.string(), "Run id (a tournament).", False),
        _f("family", pa.string(), "Game family.", False),
        _f("player_i", pa.string(), "The first player of the pair (earlier in --players).", False),
        _f("player_j", pa.string(), "The second player.", False),
        _f("matches", pa.int64(), "Games the pair played (both seat orders).", False),
        _f("wins_i", _F64, "player_i's wins, a tie counted as half.", False),
        _f("score_diff", _F64, "Mean of player_i's seat score minus player_j's (the family's units).", False),
        _f("diff_low", _F64, "Lower end of score_diff's percentile bootstrap interval over the pair's games; NULL without resamples."),
        _f("diff_high", _F64, "Upper end of that interval; NULL without resamples."),
    ]
)

HARNESS_COLUMN = "harness_hash"
"""The column every table ends with: the hash of the harness that made the row (the family's
prompt templates, parsers, scorers and version; :mod:`distbench.store.harness`), the same in
every row of a shard; NULL in rows written before harness hashes existed."""

HARNESS_FIELD = _f(HARNESS_COLUMN, pa.string(), "Hash of the harness that made the row: the "
                   "family's prompt templates, parser and scorer sources and its version "
                   "(rescoring changes the parser and scorer parts); the same in every row of "
                   "a shard; NULL in rows written before harness hashes.")


def with_harness(schema: pa.Schema) -> pa.Schema:
    """``schema`` ending with the :data:`HARNESS_COLUMN` (unchanged when it has it)."""
    return schema if HARNESS_COLUMN in schema.names else schema.append(HARNESS_FIELD)


SCHEMAS: dict[str, pa.Schema] = {"calls": with_harness(CALLS), "ratings": with_harness(RATINGS),
                                 "pairings": with_harness(PAIRINGS)}
"""Every known table by name: ``calls`` (every family's model calls), ``ratings`` and
``pairings`` (a tournament's, any family), and the tables the game families registered
(:func:`register_tables`; ``distbench.games.registry`` does it when a family registers). The
store itself knows no game. These are the stored schemas, ending with :data:`HARNESS_COLUMN`;
producers build their rows with the schemas they declared (``CALLS``..., without it) and the
writer sets it (:func:`distbench.store.writer.encode_table`)."""

_OWNERS: dict[str, str] = {"calls": "distbench", "ratings": "distbench", "pairings": "distbench"}


def register_tables(tables: dict[str, pa.Schema] | Any, owner: str) -> None:
    """Adds a family's tables; a table name another owner registered is an error (the same
    schema registered again by its owner is a no-op)."""
    for name, schema in dict(tables).items():
        if name in SCHEMAS and _OWNERS.get(name) != owner:
            raise ValueError(f"table {name!r} of {owner!r} is already registered by "
                             f"{_OWNERS.get(name)!r}")
        for f in schema:
            if not (f.metadata or {}).get(b"description"):
                raise ValueError(f"table {name!r}: column {f.name!r} has no description")
        SCHEMAS[name] = with_harness(schema)
        _OWNERS[name] = owner


_Z = "1.959963984540054::DOUBLE"  # the normal 97.5% quantile (report.stats.Z95)
_WILSON = (f"(s / n + {_Z} * {_Z} / (2 * n)) / (1.0 + {_Z} * {_Z} / n) {{sign}} {_Z} / "
           f"(1.0 + {_Z} * {_Z} / n) * sqrt(s / n * (1.0 - s / n) / n + {_Z} * {_Z} / "
           "(4.0 * n * n))")
MACROS: dict[str, str] = {
    "wilson_low(s, n)": f"CASE WHEN s = 0 THEN 0.0 ELSE greatest(0.0, {_WILSON.format(sign='-')}) END",
    "wilson_high(s, n)": f"CASE WHEN s = n THEN 1.0 ELSE least(1.0, {_WILSON.format(sign='+')}) END",
}
"""SQL macros every connection has (the queries use them; so can a user's SQL):
``wilson_low(successes, n)`` and ``wilson_high(successes, n)``, the 95% Wilson score interval
of the rate ``successes / n`` within [0, 1] (successes may be fractional: a draw counts half),
the formula of :func:`distbench.report.stats.wilson_interval`."""

VIEWS: dict[str, tuple[str, tuple[str, ...]]] = {}
"""Views the game families registered (:func:`register_views`): name -> (SELECT statement,
the tables it reads). The catalog makes each one over the tables of a connection that has
them all, so the queries share one definition instead of repeating it."""


def register_views(views: dict[str, tuple[str, tuple[str, ...]]], owner: str) -> None:
    """Adds a family's views; a name already used by a table or by another owner's view is an
    error (the same view registered again by its owner is a no-op)."""
    for name, (sql, tables) in dict(views).items():
        if name in SCHEMAS or (name in VIEWS and _OWNERS.get(name) != owner):
            raise ValueError(f"view {name!r} of {owner!r}: the name is already taken")
        VIEWS[name] = (sql, tuple(tables))
        _OWNERS[name] = owner


def table_owner(table: str) -> str | None:
    """Who registered ``table``: a family's name, or ``"distbench"`` for the shared tables."""
    return _OWNERS.get(table)


def schema_for(table: str) -> pa.Schema:
    """The schema of ``table``; KeyError names the known tables."""
    try:
        return SCHEMAS[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known: {', '.join(SCHEMAS)}") from None


def stored_columns_id(table: str) -> str:
    """A short hash of the columns a file of ``table`` stores (names and types, in order):
    commit markers record it per file, so a reader knows when every file of a table has
    today's columns and can read them without reconciling schemas file by file."""
    fields = [(f.name, str(f.type)) for f in schema_for(table) if derived_expression(f) is None]
    return hashlib.blake2b(json.dumps(fields).encode(), digest_size=8).hexdigest()


def empty_table(table: str) -> pa.Table:
    """An empty Arrow table with the schema of ``table``."""
    return schema_for(table).empty_table()


def describe(table: str) -> list[tuple[str, str, str]]:
    """(column, type, description) rows of ``table``, for docs and ``distbench tables``."""
    return [
        (f.name, str(f.type), (f.metadata or {}).get(b"description", b"").decode())
        for f in schema_for(table)
    ]
