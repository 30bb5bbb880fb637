"""The types every game family shares, and the helpers they use.

A family declares itself with a :class:`distbench.games.family.Family` (the contract at a
glance is that module's docstring and ``docs/contract.md``); what the declaration's hooks
take and return is here, plain data the engine and the families both import:

- :class:`Shard`: what every family's shard is (``shard_id``, ``family``, ``num_units``, and
  ``specs`` or ``llm``); :func:`shard_specs` reads its models;
- :class:`RunConfig`: a configuration that plans itself (``plan(run_id) -> RunPlan``) and
  says what decides its rows (``identity()``); :func:`check_config` holds the checks every
  configuration shares;
- :class:`RunPlan` (the shards and how to summarise them), :class:`ShardResult` (a shard's
  Arrow tables), :class:`CommandRun` (what ``distbench run`` plays);
- :class:`StoredShard` / :class:`Rescored`: a rescore hook's input and output;
- :class:`PairingSettings`, :class:`PairConfig`, :class:`SeatOutcome`, :func:`seat_label`:
  a tournament's pairings and what it rates;
- :func:`stable_hash` (shard ids), :func:`derive_seed` (seeds from stable ids).

It imports no family and nothing above ``games``.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from distbench.llm.base import BackendSpec

__all__ = ["CATALOG_KINDS", "CommandRun", "FieldTypeError", "PairConfig", "PairingSettings",
           "Rescored", "RunConfig", "RunPlan", "SeatOutcome", "Shard", "ShardResult", "StoredShard",
           "catalog_rows", "check_config", "check_field_types", "derive_seed", "parse_player",
           "seat_identity", "seat_label", "seed_key", "shard_specs", "stable_hash"]

#: Configuration fields that, when a run configuration has them, must be at least 1.
POSITIVE_FIELDS = ("num_games", "num_trials", "num_opponents", "shard_trials", "shard_episodes",
                   "shard_games", "max_messages", "max_tokens", "max_turns")

MAX_PLANNED_SHARDS = 50_000
"""Shards a run may plan: planning builds every shard up front (about 20 µs each), so this
bounds it to about a second; a larger run is refused in one line before any work."""

MAX_SHARD_ROWS = 1_000_000
"""Largest ``shard_trials`` / ``shard_episodes`` / ``shard_games``: a shard's rows are held in
memory together, by its worker and by the driver that writes them."""

SHARD_SIZE_FIELDS = ("shard_trials", "shard_episodes", "shard_games")

CATALOG_KINDS = ("games", "strategies", "classes", "buckets", "players")
"""What a family's ``catalog`` hook may list (``distbench list KIND``)."""


def check_plan_size(shards: int, what: str) -> None:
    """Refuses, in one line, a configuration that would plan more than
    :data:`MAX_PLANNED_SHARDS` shards (``what``: how the count comes about, e.g. ``10 seeds x
    1,000,000 games``), before any shard is built.

    Raises:
        ValueError: too many shards.
    """
    if shards > MAX_PLANNED_SHARDS:
        raise ValueError(f"this run would plan {shards:,} shards ({what}), more than "
                         f"{MAX_PLANNED_SHARDS:,}: play fewer games or seeds per run (split it "
                         "into several runs)")


def catalog_rows(pairs: Any, **extra: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of a family's ``catalog`` from (name, description) pairs; ``extra`` maps a column
    to {name: value} for the rows that have it (the others get None)."""
    return [{"name": name, "description": description,
             **{column: values.get(name) for column, values in extra.items()}}
            for name, description in pairs]


def stable_hash(payload: object, size: int = 8) -> str:
    """Hex digest of a JSON-serialisable payload, stable across processes."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


def derive_seed(*parts: object) -> int:
    """A 64-bit seed derived from ``parts`` (seeds, ids, labels), stable across processes:
    the one helper every family uses to give a game, a seat or a request its own seed."""
    text = "/".join(str(p) for p in parts)
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True, slots=True)
class ShardResult:
    """What a shard returns to the driver (every family).

    Attributes:
        shard_id: The shard's id.
        tables: table name -> (file stem, Arrow table). Shards that produce the same rows
            (e.g. the same chunk of games) use the same stem, so the file is written once.
        stats: Counts for the progress line and the commit marker (``trials``, ``episodes``
            or ``games``, ``calls``, failures, ...).
    """

    shard_id: str
    tables: dict[str, tuple[str, Any]]
    stats: dict[str, int]


@dataclass(frozen=True)
class StoredShard:
    """One committed shard of a finished run, as ``distbench rescore`` hands it to its family's
    ``rescore`` hook.

    Attributes:
        run_id: The id of the new (rescored) run: every row it returns carries it.
        source_run_id: The run the rows come from.
        shard_id: The shard's id (kept: the new run has the source's shards).
        shard: The shard as its commit marker recorded it (JSON: the family's shard fields).
        tables: table name -> (file stem, the rows as stored, an Arrow table).
        manifest: The source run's ``manifest.json``.
    """

    run_id: str
    source_run_id: str
    shard_id: str
    shard: Mapping[str, Any]
    tables: Mapping[str, tuple[str, Any]]
    manifest: Mapping[str, Any]

    def table(self, name: str) -> Any:
        """The stored rows of ``name`` (KeyError when the shard has none)."""
        return self.tables[name][1]

    def style(self, provider: str, model: str, default: str = "chat") -> str:
        """The prompt style the run used for a model (the manifest's ``models``)."""
        for entry in self.manifest.get("models") or []:
            if entry.get("provider") == provider and entry.get("model") == model:
                return str(entry.get("style") or default)
        return default


@dataclass(frozen=True)
class Rescored:
    """What a family's ``rescore`` hook returns for one shard.

    Attributes:
        result: The shard's new tables (the same names and file stems as the stored ones) and
            stats, as :class:`ShardResult`.
        transitions: (unit, old status, new status) -> count, for every answer re-read, e.g.
            ``("trials", "no_answer", "ok")``; unchanged answers count too (old == new).
        diverged: Units (episodes, games) of multi-turn families whose re-read moves changed
            the rest of the game, kept as stored and marked (see the family's docs).
    """

    result: ShardResult
    transitions: Mapping[tuple[str, str, str], int]
    diverged: int = 0


def shard_specs(shard: Any) -> tuple[BackendSpec, ...]:
    """The models a shard calls: ``shard.specs`` (multi-model families) or ``(shard.llm,)``."""
    specs = getattr(shard, "specs", None)
    return tuple(specs) if specs is not None else (shard.llm,)


@dataclass(frozen=True)
class RunPlan:
    """Everything the driver needs to run a family's configuration.

    Attributes:
        family: Game family name.
        config: The configuration as JSON (recorded in the manifest).
        identity: What decides the rows (compared on resume): the configuration without
            execution-only settings.
        shards: The planned shards, each with ``shard_id``, ``family``, ``num_units`` and
            ``specs`` or ``llm``.
        seeds: Seeds to record in the manifest.
        summarize: Builds the summary records from a DuckDB connection over the run and an
            offload for its numeric work (the run's Ray workers, or None: this process).
        unit: What ``num_units`` counts (trials, episodes, games), for the progress line.
        summary_threads: DuckDB threads for ``summarize``: 1 unless the summary is known to
            give the same numbers on any number of threads (DuckDB's parallel float sums
            otherwise differ in the last bits between identical runs).
        summary_tables: The tables ``summarize`` reads (None: all); only their views are
            made.
        extra_styles: Prompt styles the plan sends to every model besides the model's own
            (logprob mode reads completions), checked by the pre-flight.
        expected_calls: The answers (samples) the plan asks the models for (at least),
            when the family can tell, for the progress line's ETA (the endpoints count
            answers as they return); None: unknown. Free in-process models (the dummy) are
            not counted.
        expected_tokens: (prompt tokens, about; completion tokens, at most) of those calls,
            when the family can tell.
        expected_cost: What those tokens cost at most, in USD, for the models with a price
            (None: no price given).
        expected_requests: The requests those answers take (at least), as they will be sent:
            a request of several samples (``--max-n``) is one, as it is one ``calls`` row;
            for the estimate before a run and the size guard. None: as many as
            ``expected_calls``.
        shard_estimate: Shard -> (prompt tokens about, completion tokens at most, cost in USD
            at most or None), for the budgets (``--max-cost``, ``--max-tokens-total``); None:
            each shard's share of ``expected_tokens``/``expected_cost`` by units.
        batchable: Every request of a shard is known before any answer (single-turn), so
            the shards can run through a provider's batch API (``--execution batch``).
        shard_expected: (shard, observed) -> (prompt tokens, completion tokens expected,
            cost expected at the live price or None, source of the completion figure), the
            likely bill beside ``shard_estimate``'s ceiling; ``observed`` maps (provider,
            model, mode) to the median completion tokens per answer of earlier runs (or is
            None). None: the family gives no expected figure.
        shard_calls: Shard -> the model answers it asks for at most (multi-turn families, whose
            episodes end early or late: every turn of every model seat counted), for the
            progress line's ETA only (an upper bound, corrected as shards commit with the
            calls they made); the size guard does not read it. None: no bound known.
    """

    family: str
    config: dict[str, Any]
    identity: dict[str, Any]
    shards: list[Any]
    seeds: dict[str, Any]
    summarize: Callable[[Any, Any], list[dict[str, Any]]]
    unit: str = "trials"
    summary_threads: int | None = 1
    summary_tables: tuple[str, ...] | None = None
    extra_styles: tuple[str, ...] = ()
    expected_calls: int | None = None
    expected_tokens: tuple[int, int] | None = None
    expected_cost: float | None = None
    expected_requests: int | None = None
    shard_estimate: Callable[[Any], tuple[int, int, float | None]] | None = None
    batchable: bool = False
    shard_expected: Callable[[Any, Any], tuple[int, int, float | None, str]] | None = None
    shard_calls: Callable[[Any], int] | None = None

    def specs(self) -> list[BackendSpec]:
        """Every model the plan calls, once each, in a stable order."""
        seen: dict[BackendSpec, None] = {}
        for shard in self.shards:
            for spec in shard_specs(shard):
                seen.setdefault(spec, None)
        return list(seen)


def config_plan(config: Any, family: str, shards: list[Any],
                game_seeds: Iterable[int] | None = None, *, seeds_key: str = "game_seeds",
                recorded: dict[str, Any] | None = None, **fields: Any) -> RunPlan:
    """The :class:`RunPlan` of ``config`` as most families make it: the config as recorded
    (``recorded``; None: its identity) and its identity, its ``seeds`` (or ``game_seeds``, under
    ``seeds_key``) and ``llm_seed`` as the seeds; ``fields``: the rest (``summarize``,
    ``unit``...)."""
    seeds = config.seeds if game_seeds is None else game_seeds
    return RunPlan(family=family, identity=config.identity(), shards=shards,
                   config=config.identity() if recorded is None else recorded,
                   seeds={seeds_key: list(seeds), "llm_seed": config.llm_seed}, **fields)


def game_chunks(num_games: int, shard_games: int) -> list[tuple[int, int]]:
    """(start, stop) of each chunk of at most ``shard_games`` of ``num_games`` games, in order
    (a shard plays one chunk)."""
    return [(start, min(num_games, start + shard_games))
            for start in range(0, num_games, shard_games)]


@dataclass(frozen=True)
class GameChunk:
    """Games ``start..stop-1`` of one seed of a configuration: what the chunk shards of the
    bimatrix, repeated and gama families share (each adds what sets its shard apart, its
    ``config`` and its ``family``; they override what differs). A commit record stores the
    fields by name, so their order here is free."""

    shard_id: str
    run_id: str
    seed: int
    start: int
    stop: int

    @property
    def specs(self) -> tuple[BackendSpec, ...]:
        """The models the shard calls: its configuration's."""
        return self.config.specs()  # type: ignore[attr-defined]

    @property
    def num_units(self) -> int:
        """Progress units: games (matches)."""
        return self.stop - self.start


def chunk_id(prefix: str, family: str, identity: Mapping[str, Any], **place: Any) -> str:
    """A chunk shard's stable id, ``<prefix>-<hash>`` of the family, where the chunk stands
    (``place``: its seed, start, stop and the like) and what decides its rows (``identity``)."""
    return f"{prefix}-{stable_hash({'family': family, **place, **identity})}"


@dataclass(frozen=True)
class CommandRun:
    """What ``distbench run --family NAME`` plays, as the family builds it from the options.

    Attributes:
        plan: ``run_id -> RunPlan``.
        label: One line describing the run (printed after ``run <id>: ``).
        folder: The prefix of a timestamped run folder (``pure``, ``pure_and_mixed``,
            ``negotiation``...).
        format_summary: Renders the summary records for the terminal (None: a plain table).
        stamp: ``strftime`` format of the timestamp after ``folder``.
        nested: The run's own folder (tables, manifest, summary) is a folder of the same
            name inside the named one, whose top is left to ``finish``.
        finish: Called after the run with (the run's folder, the named folder); writes
            files for other tools and returns them.
    """

    plan: Callable[[str], RunPlan]
    label: str
    folder: str
    format_summary: Callable[[list[dict[str, Any]]], str] | None = None
    stamp: str = "%Y%m%d-%H%M%S"
    nested: bool = False
    finish: Callable[[Path, Path], list[Path]] | None = None


def parse_player(text: str, base: BackendSpec, *, tiers: tuple[str, ...] = (),
                 scripted: tuple[str, ...] = ()) -> BackendSpec | str:
    """An ``--opponent`` / ``--agent`` value: one of ``tiers`` or ``scripted`` names as is, the
    running model (``base.provider`` alone), or a model as ``PROVIDER[:MODEL]``.

    Raises:
        ValueError: none of these, with the accepted kinds named.
    """
    from distbench.llm.registry import UnknownProviderError, make_spec

    if text in tiers or text in scripted:
        return text
    provider, _, model = text.partition(":")
    if provider == base.provider and not model:
        return base
    try:
        return make_spec(provider, model or None)
    except UnknownProviderError as exc:
        kinds = "|".join(tiers or scripted) or "a model"
        raise ValueError(f"--opponent/--agent {text!r}: not {kinds} nor a model ({exc})") from None


def check_config(config: Any) -> None:
    """The checks every run configuration shares, in one place (each family's
    ``__post_init__`` calls it, then checks what is its own).

    - ``seeds``: at least one, each a non-negative integer;
    - the :data:`POSITIVE_FIELDS` it has: at least 1 (``max_tokens`` may be None: by mode);
    - the :data:`SHARD_SIZE_FIELDS` it has: at most :data:`MAX_SHARD_ROWS`;
    - ``temperature``: a number >= 0;
    - every field declared ``int``, ``float``, ``bool`` or ``str`` (or one of them ``| None``)
      holds a value of that kind (:func:`check_field_types`).

    Raises:
        ValueError: one line naming the field and the value given.
    """
    check_field_types(config)
    seeds = getattr(config, "seeds", None)
    if seeds is not None:
        if not seeds:
            raise ValueError("seeds: at least one seed is needed")
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
            raise ValueError(f"seeds must be non-negative integers, got {list(seeds)}")
    for name in POSITIVE_FIELDS:
        value = getattr(config, name, None)
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    for name in SHARD_SIZE_FIELDS:
        value = getattr(config, name, None)
        if value is not None and value > MAX_SHARD_ROWS:
            raise ValueError(f"{name} must be at most {MAX_SHARD_ROWS:,} (a shard's rows are "
                             f"held in memory together), got {value:,}")
    temperature = getattr(config, "temperature", None)
    if temperature is not None and not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")


_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "int": ("an integer", lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)),
    "float": ("a finite number", lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)
              and math.isfinite(v)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "str": ("a text", lambda v: isinstance(v, str)),
}


def check_field_types(config: Any) -> None:
    """Refuses, in one line naming the field, a value of the wrong kind in a field of the
    dataclass ``config`` declared ``int``, ``float``, ``bool`` or ``str`` (optionally
    ``| None``): ``rounds=2.5`` or ``rounds=true`` from a tournament's ``--option`` or a spec,
    which would otherwise fail in the middle of a run. Other fields are left to their family.

    Raises:
        FieldTypeError: the field, the kind it takes and the value given.
    """
    if not is_dataclass(config):
        return
    for f in fields(config):
        declared = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        name, _, rest = declared.partition(" | ")
        optional = rest == "None"
        if name not in _KINDS or (rest and not optional):
            continue
        value = getattr(config, f.name)
        what, ok = _KINDS[name]
        if not (ok(value) or (optional and value is None)):
            raise FieldTypeError(f.name, f"{f.name} must be {what}, got {value!r}")


class FieldTypeError(ValueError):
    """A configuration field holds a value of the wrong kind (:func:`check_field_types`)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.field = name


@dataclass(frozen=True)
class PairingSettings:
    """What every pairing of a tournament shares (``Family.pairing``).

    Attributes:
        num_instances: Instances played, each in every seat order.
        seed: Instance seed (the same instances for every pairing).
        llm_seed: Seed of the models' sampling.
        temperature: Sampling temperature.
        max_tokens: Completion budget per answer (None: the family's default).
        options: The family's own settings (e.g. fog's ``scout_accuracy``).
    """

    num_instances: int
    seed: int = 0
    llm_seed: int = 0
    temperature: float = 1.0
    max_tokens: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def seat_label(player: BackendSpec | str) -> str:
    """A seated player as the tables write it: a scripted player's name, or
    ``<provider>:<model>``."""
    return player if isinstance(player, str) else f"{player.provider}:{player.model}"


def seat_identity(player: BackendSpec | str) -> Any:
    """What decides a seated player's answers: a scripted player's name, or the model's
    identity (as JSON)."""
    return (player if isinstance(player, str)
            else json.loads(json.dumps(player.identity(), default=str)))


def seed_key(player: BackendSpec | str) -> Any:
    """What a seed or a seeded id (pairing, match, episode) may know of a seated player: its
    :func:`seat_identity` without the address it is reached at, so the same runs against two
    servers draw the same numbers."""
    return (player if isinstance(player, str)
            else json.loads(json.dumps(player.seed_identity(), default=str)))


class PairConfig:
    """What the configuration of one tournament pairing shares whatever the family (a mixin of
    a frozen dataclass with the fields ``player_a`` and ``player_b``, each a scripted player's
    name or a model, and ``shard_games``, an execution-only setting)."""

    player_a: BackendSpec | str
    player_b: BackendSpec | str
    shard_games: int

    def check_players(self) -> None:
        """Refuses a pairing of a player with itself (ValueError)."""
        if seat_label(self.player_a) == seat_label(self.player_b):
            raise ValueError(f"a pairing needs two players, got {seat_label(self.player_a)} "
                             "twice")

    def specs(self) -> tuple[BackendSpec, ...]:
        """The models the pairing calls."""
        return tuple(p for p in (self.player_a, self.player_b) if isinstance(p, BackendSpec))

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared on resume): every field but ``shard_games``, the
        players by :func:`seat_identity`."""
        out = json.loads(json.dumps(asdict(self), default=str))  # type: ignore[call-overload]
        out["player_a"] = seat_identity(self.player_a)
        out["player_b"] = seat_identity(self.player_b)
        del out["shard_games"]
        return out

    def pairing_id(self) -> str:
        """Short stable id of the (player_a, player_b) pairing."""
        return stable_hash([seed_key(self.player_a), seed_key(self.player_b)], 4)


@dataclass(frozen=True)
class SeatOutcome:
    """One game of a pairing, as a tournament rates it.

    Attributes:
        game_id: The game (episode) id.
        instance: What the game was played on (the same in both seat orders: pairs a game
            with its swapped-seat twin).
        player_a: Label of the player in the first seat.
        player_b: Label of the player in the second seat.
        score_a: The first seat's score (higher is better; the family's units).
        score_b: The second seat's score.
        shard_id: The shard that played it (a tournament rates the games of its plan only).
    """

    game_id: str
    instance: str
    player_a: str
    player_b: str
    score_a: float
    score_b: float
    shard_id: str = ""


@runtime_checkable
class Shard(Protocol):
    """What every family's shard is (a frozen dataclass of the family's own fields besides
    these): the driver schedules, records and resumes shards by these alone, and hands each
    back to its family's runner.

    Attributes:
        shard_id: Stable id (:func:`stable_hash` of what decides the shard's rows).
        family: The family's name (the runner the shard goes to).
        num_units: The units it plays (``Identity.unit``: trials, episodes, games...).

    A shard also names the models it calls, as ``specs`` (several) or ``llm`` (one):
    :func:`shard_specs` reads either.
    """

    shard_id: str
    family: str
    num_units: int


@runtime_checkable
class RunConfig(Protocol):
    """What every family's run configuration is (a frozen dataclass that checks itself with
    :func:`check_config` in ``__post_init__``): it plans itself and says what decides its rows."""

    def plan(self, run_id: str) -> RunPlan:
        """The configuration expanded into shards."""
        ...

    def identity(self) -> dict[str, Any]:
        """What decides the rows (compared on resume): no execution-only setting."""
        ...
