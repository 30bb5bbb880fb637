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
from distbench.store.fields import derived_expression, table

TIMING_COLUMNS: frozenset[str] = frozenset({"latency_ms", "elapsed_ms", "queue_ms"})
"""Columns that hold wall-clock measurements: the only ones allowed to differ between runs."""



CALLS = table("""
run_id                       string   not null  Run id.
shard_id                     string   not null  Shard that made the call.
call_id                      string   not null  Call id (joins trials.call_id).
trial_id                     string   not null  The trial the call answered.
mode                         string   not null  Answer mode of the trial.
endpoint                     string   not null  '<provider>:<base URL>' ('in-process' for local).
provider                     string   not null  Model provider.
model                        string   not null  Model name.
style                        string   not null  'chat' or 'completion'.
request_hash                 string   not null  SHA-256 of what decides the answer (cache key).
prompt_text                  string   not null  The prompt sent.
response_text                string             The answer text; NULL when the call failed.
status                       string   not null  'ok' or 'failed'.
error                        string   not null  Why the call failed ('' when ok); never a key.
http_status                  int32              Last HTTP status; NULL in-process or without an
                                                answer.
attempts                     int32    not null  Attempts made (0 for a cache hit).
latency_ms                   float64            Time on the wire of the last attempt: request sent
                                                to answer read, in milliseconds (the model's own
                                                time for in-process models; timing column).
queue_ms                     float64            Time the call waited before and between attempts (a
                                                rate-limit token, a concurrency slot, retry
                                                back-off), in milliseconds (timing column).
prompt_tokens                int64              Prompt tokens reported by the endpoint.
completion_tokens            int64              Completion tokens reported by the endpoint.
reasoning_content            string             The provider's separate reasoning text (an
                                                OpenAI-compatible message's reasoning_content), kept
                                                whatever the run's reasoning factor; NULL when none.
reasoning_tokens             int64              Reasoning tokens the provider reported
                                                (usage.completion_tokens_details.reasoning_tokens);
                                                NULL when not reported.
cache_hit                    bool     not null  Answered from the response cache.
samples                      int32    not null  Answers the request asked for (OpenAI's n): 1, or k
                                                when one request answered k trials that share their
                                                prompt; then those trials' call_id all name this
                                                call, trial_id is the first of them, response_text
                                                is the JSON list of the k texts and the tokens are
                                                the request's (the prompt billed once).
notes                        string             What the answer's body held that could not be used,
                                                by field ('' when nothing): a token count that is
                                                not a plausible count (stored as NULL, never
                                                priced), lone surrogates replaced by U+FFFD in the
                                                text.
batch_id                     string             The provider batch that answered the call
                                                (--execution batch; billed at the batch price); NULL
                                                for a live call.
estimated_prompt_tokens      int64              Set when the endpoint's token counts of an answered
                                                call were missing or implausible (none, 0, negative,
                                                a completion over max_tokens, a prompt far over the
                                                text sent): the request's ceiling, a quarter of the
                                                prompt's characters, which budgets and costs count
                                                instead of prompt_tokens; NULL otherwise.
estimated_completion_tokens  int64              With estimated_prompt_tokens: the whole completion
                                                budget (max_tokens per sample), counted instead of
                                                completion_tokens; NULL otherwise.
""")

RATINGS = table("""
run_id       string   not null  Run id (a tournament).
family       string   not null  Game family the players met in.
player       string   not null  The player: '<provider>:<model>' or a scripted player's name.
rank         int32    not null  Rank by Bradley-Terry strength, from 1.
matches      int64    not null  Games the player played (both seats).
wins         float64  not null  Games won, a tie counted as half.
mean_margin  float64  not null  Mean of the player's seat score minus its opponent's, over its games
                                (the family's units).
bt_strength  float64  not null  Bradley-Terry log-strength (natural log odds, mean 0 over the
                                population), penalised ML with ties as half a win each.
bt_low       float64            Lower end of bt_strength's simultaneous interval: a max-|t|
                                bootstrap band over matches, so all players' intervals hold at once
                                at the run's confidence (bt_strength - c * se); NULL without
                                resamples.
bt_high      float64            Upper end of that simultaneous interval (bt_strength + c * se); NULL
                                without resamples.
elo          float64  not null  Elo display of bt_strength: 1500 + 400 / ln 10 * bt_strength.
elo_low      float64            Elo display of bt_low (the simultaneous band).
elo_high     float64            Elo display of bt_high.
nash_mass    float64  not null  The player's probability in the maximum-entropy Nash equilibrium of
                                the meta-game (mean margins).
nash_rating  float64            Nash averaging rating: the player's mean margin against the
                                equilibrium mixture (<= 0; 0 on its support); NULL for a player
                                without games (not in the meta-game).
confidence   float64  not null  Confidence level of the intervals.
""")

PAIRINGS = table("""
run_id      string   not null  Run id (a tournament).
family      string   not null  Game family.
player_i    string   not null  The first player of the pair (earlier in --players).
player_j    string   not null  The second player.
matches     int64    not null  Games the pair played (both seat orders).
wins_i      float64  not null  player_i's wins, a tie counted as half.
score_diff  float64  not null  Mean of player_i's seat score minus player_j's (the family's units).
diff_low    float64            Lower end of score_diff's percentile bootstrap interval over the
                               pair's games; NULL without resamples.
diff_high   float64            Upper end of that interval; NULL without resamples.
""")

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
    "share(c)": "avg(CASE WHEN c THEN 1.0 ELSE 0.0 END)",
    "share_among(c, among)": "avg(CASE WHEN c THEN 1.0 ELSE 0.0 END) FILTER (WHERE among)",
}
"""SQL macros every connection has (the queries use them; so can a user's SQL):
``wilson_low(successes, n)`` and ``wilson_high(successes, n)``, the 95% Wilson score interval
of the rate ``successes / n`` within [0, 1] (successes may be fractional: a draw counts half),
the formula of :func:`distbench.report.stats.wilson_interval`; ``share(condition)``, the
share of the group's rows where ``condition`` holds (NULL counts as not), and
``share_among(condition, among)``, the same over the rows where ``among`` holds (aggregates:
use them in a grouped SELECT)."""

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
