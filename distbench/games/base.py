"""The family contract: what a game family gives the engine, and the types they share.

A family is a package under ``distbench/games/`` (or an installed plugin) that declares itself
with a :class:`Family` at the bottom of its plan module and registers it
(``distbench.games.registry``), the way an OpenSpiel game declares its ``GameType`` and
registers it. The declaration, at a glance (each group a frozen dataclass; a capability is
declared by giving its group, every hook in a group is required unless marked optional)::

    Family(
        identity=Identity(name, description, tables, main_table, unit, modes, views),
        play=Play(runner, summarize, command, options?, warm_up?, batch, commands?, example),
        presentation=Presentation(report?, viewer?, export?, formats),
        sweeps=Sweeps(configs, describer, section?, key, buckets?) | None,
        tournaments=Tournaments(seats, player, pairing, outcomes, options, anchors,
                                report?)                   | None,
        rescoring=Rescoring(rescore)                               | None,
        comparing=Comparing(units)                                 | None,
    )

Hooks are ``"module:attr"`` strings, imported on first use (a driver never loads a family's
kernels). What they do:

- a :class:`RunConfig` (``Play.command``, ``Sweeps.configs``, ``Tournaments.pairing``) plans
  itself: ``plan(run_id) -> RunPlan``, shards with stable ids (:func:`stable_hash` of what
  decides their rows), and says what decides its rows (``identity()``);
- every shard is a :class:`Shard` (``shard_id``, ``family``, ``num_units``, and ``specs`` or
  ``llm``); ``Play.runner`` plays one: ``run_shard(shard, backends) -> ShardResult`` (Arrow
  tables of the family's ``Identity.tables``, which the store receives and knows no game);
- ``Play.summarize``: ``summarize(con, offload) -> records`` from DuckDB views;
  ``Identity.unit``: what ``num_units`` counts;
- ``Rescoring.rescore``: ``rescore(StoredShard) -> Rescored``, no model call;
- ``Comparing.units``: the ``FamilyUnits`` of ``distbench compare`` (units, groups, metrics);
- ``Tournaments``: a ``--players`` entry as a player, a pairing as a :class:`RunConfig` with
  the seats filled, and the :class:`SeatOutcome` of every game a tournament rates.

:meth:`Family.capabilities` lists what a family declares; ``docs/contract.md`` is this page
checked against the code. Everything here is plain data and functions: families import it,
the engine imports it, and it imports no family and nothing above ``games``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from distbench.llm.base import BackendSpec

__all__ = ["CAPABILITIES", "CommandRun", "CommandServices", "Comparing", "Family", "Identity",
           "PairingSettings", "Play", "Presentation", "Rescored", "Rescoring", "RunConfig",
           "RunPlan", "SeatOutcome", "Shard", "ShardResult", "StoredShard", "Sweeps",
           "Tournaments", "check_config", "derive_seed", "parse_player", "shard_specs",
           "stable_hash"]

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

    def specs(self) -> list[BackendSpec]:
        """Every model the plan calls, once each, in a stable order."""
        seen: dict[BackendSpec, None] = {}
        for shard in self.shards:
            for spec in shard_specs(shard):
                seen.setdefault(spec, None)
        return list(seen)


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
    - ``temperature``: a number >= 0.

    Raises:
        ValueError: one line naming the field and the value given.
    """
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


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


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
        return stable_hash([seat_identity(self.player_a), seat_identity(self.player_b)], 4)


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


class CommandServices(Protocol):
    """What the CLI lends a family's own commands (``Play.commands``), so that they parse and
    print while the same code as ``distbench run`` and ``distbench tournament`` plays."""

    def run_folder(self, output_dir: Path, run_id: str) -> Path:
        """The run's folder under ``output_dir`` (both checked: one line on bad input)."""
        ...

    def play(self, plan: RunPlan, run_dir: Path, *, parallel: bool | None) -> Any:
        """Plays (or resumes) ``plan`` with the progress line; returns the run outcome."""
        ...

    def tournament(self, family: str, players: list[str], settings: PairingSettings,
                   output_dir: Path, run_id: str, *, parallel: bool | None) -> None:
        """Plays (or resumes) ``distbench tournament --family <family>`` into the run folder
        ``run_id`` of ``output_dir``, and prints what that command prints (the family's lines,
        then the ranking)."""
        ...


@dataclass(frozen=True)
class Identity:
    """What a family is (``Family.identity``).

    Attributes:
        name: The ``--family`` value and the ``family`` of its shards (an identifier).
        description: One line for ``--help`` and the README.
        tables: The family's tables, name -> Arrow schema (every column described).
        main_table: The table a user looks at first (one row per game or episode).
        unit: What a shard's ``num_units`` counts (trials, episodes, games...), stated here
            once: a plan of the family counts in it unless it says otherwise.
        modes: The family's ``--mode`` values, first the default (for ``--help``).
        views: SQL views over the family's tables, name -> (SELECT statement, the tables it
            reads), handed to the store with the tables: every connection to a run has them.
    """

    name: str
    description: str
    tables: Mapping[str, Any]
    main_table: str
    unit: str = "trials"
    modes: tuple[str, ...] = ()
    views: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Play:
    """How a family plays a run (``Family.play``): every family has all of it.

    Attributes:
        runner: ``"module:function"`` of ``run_shard(shard, backends) -> ShardResult``,
            imported where shards run (a driver never loads a family's kernels).
        summarize: ``"module:function"`` of ``summarize(con, offload) -> list[dict]``: the
            summary records of a run, from DuckDB views (stated here once).
        command: ``"module:function"`` of ``(options, spec) -> CommandRun``: the family's
            configuration from ``distbench run``'s options (a dict of every option's value)
            and the model spec; ValueError with a one-line message on bad input.
        options: ``"module:attr"`` of a list of ``click.Option``: the family's own flags of
            ``distbench run`` (refused with another family); None: it has none.
        warm_up: ``"module:function"`` run once by a warm executor before its first shard
            (import the runner, load compiled kernels); None: nothing to warm.
        batch: Whether the family's plans can be single-turn (every request of a shard known
            before any answer), so they may run through a provider's batch API
            (``--execution batch``); each plan still says so for itself (``RunPlan.batchable``).
        commands: ``"module:function"`` of ``(services: CommandServices) -> click.Group``: the
            family's own commands, ``distbench <name> ...`` (e.g. a study), which run plans
            and tournaments through ``services`` (the CLI's); None: it has none.
        example: Flags of ``distbench run --family <name>`` for a small run with free players
            (in-process models or scripted ones: no API key, seconds): what the all-families
            contract test plays.
    """

    runner: str
    summarize: str
    command: str
    options: str | None = None
    warm_up: str | None = None
    batch: bool = False
    commands: str | None = None
    example: tuple[str, ...] = ("--llm-type", "dummy", "--num-games", "2")


@dataclass(frozen=True)
class Sweeps:
    """A family's part of ``distbench sweep`` (``Family.sweeps``; None: it takes no part).

    Attributes:
        configs: ``"module:function"`` of ``(sweep_spec, model_entry) -> [RunConfig, ...]``:
            what the family plays for one model of a sweep.
        describer: ``"module:function"`` of ``(sweep_spec, shards) -> dict``: the family's
            figures for ``distbench sweep plan`` (cells, calls, tokens, episodes...).
        section: ``"module:function"`` of ``(table) -> dict``: validates the family's
            ``[<name>]`` table of a sweep spec, defaults filled in (ValueError ``"key:
            problem"``); None: the family has no spec section.
        key: Where the family's configurations sit in a sweep's recorded identity
            (``"sweep"`` for the first family, as in runs made before families were plugins;
            ``"families"`` for the others).
        buckets: ``"module:attr"`` of ``(bucket_id) -> dict``: the seed tool's object of one
            of the family's buckets, for a sweep's ``--output-format seed`` suite tables;
            None: the family has no buckets.
    """

    configs: str
    describer: str
    section: str | None = None
    key: str = "families"
    buckets: str | None = None


@dataclass(frozen=True)
class Tournaments:
    """A family whose players fill seats (``Family.tournaments``; None: no tournament).

    Attributes:
        seats: The seats a player fills, in order (e.g. ``("a", "b")``).
        player: ``"module:function"`` of ``(text) -> (player, label)``: a ``--players``
            entry as the family's player (a model spec or a scripted name) and its label as
            the family's tables write it (ValueError: one line).
        pairing: ``"module:function"`` of ``(player_a, player_b, settings) -> RunConfig``:
            one pairing in every seat, on the same instances in each seat order (paired);
            ``settings`` is a :class:`PairingSettings`.
        outcomes: ``"module:function"`` of ``(con) -> list[SeatOutcome]``: every game of a
            run with who sat where and each seat's score (higher is better), what a
            tournament rates.
        options: The family's own tournament settings, name -> one line of help (``distbench
            tournament --option NAME=VALUE``; they reach ``pairing`` in
            ``PairingSettings.options``); any other name is refused in one line.
        anchors: The family's scripted players, as ``--players`` takes them (listed by
            ``--help``; the contract test plays a tournament of the first two).
        report: ``"module:function"`` of ``(con) -> str``: the family's own lines printed
            after a tournament's ranking (e.g. fog's tier gradient); None: none.
    """

    seats: tuple[str, ...]
    player: str
    pairing: str
    outcomes: str
    options: Mapping[str, str] = field(default_factory=dict)
    anchors: tuple[str, ...] = ()
    report: str | None = None

    def __post_init__(self) -> None:
        if len(self.seats) < 2:
            raise ValueError(f"a tournament needs at least two seats, got {self.seats!r}")


@dataclass(frozen=True)
class Rescoring:
    """A family whose runs can be rescored (``Family.rescoring``; None: they cannot).

    Attributes:
        rescore: ``"module:function"`` of ``rescore(stored: StoredShard) -> Rescored``:
            re-reads a committed shard's stored answers with today's parsers and re-scores
            them with today's metrics, calling no model (``distbench rescore``).
    """

    rescore: str


@dataclass(frozen=True)
class Comparing:
    """A family whose runs ``distbench compare`` compares (``Family.comparing``; None: not
    compared).

    Attributes:
        units: ``"module:attr"`` of a :class:`distbench.report.compare.FamilyUnits`: how the
            family's rows are cut into units within groups, and the metrics (the headline
            ``quality`` and its components first, then the family's own).
    """

    units: str


@dataclass(frozen=True)
class Presentation:
    """How a family's results are shown (``Family.presentation``); each hook is optional, its
    absence meaning the generic behaviour named.

    Attributes:
        report: ``"module:function"`` of ``section(doc, con)``: the family's section of
            ``distbench report``; None: the report has no section of it.
        viewer: ``"module:function"`` of ``view(con, options) -> ViewPart``: its part of
            ``distbench view``; None: a generic table of its main table.
        export: ``"module:function"`` of ``export(con, out_dir, run_id) -> [paths]``: the
            files ``distbench export`` writes; None: each table as JSON records
            (``<table>.json``) and the summary (``summary.json``).
        formats: The family's own ``distbench export --format`` values, name ->
            ``"module:function"`` of ``(con, out_dir) -> [paths]`` (e.g. negotiation's
            ``clembench`` tree); refused in one line for another family's runs.
    """

    report: str | None = None
    viewer: str | None = None
    export: str | None = None
    formats: Mapping[str, str] = field(default_factory=dict)


CAPABILITIES = ("batch", "sweeps", "tournaments", "rescoring", "comparing")
"""What a family may declare it can do, besides playing (every family plays)."""


@dataclass(frozen=True)
class Family:
    """A game family, as the engine, the store and the CLI see it: what it is, how it plays,
    and each thing it can do declared as a group (None: it cannot).

    Attributes:
        identity: Name, description, tables, main table, unit, modes, views.
        play: Runner, summary, ``distbench run`` command and flags, warm-up, batch.
        presentation: Report section, viewer, export.
        sweeps: Its part of ``distbench sweep`` (None: none).
        tournaments: Its seats and pairing (None: no tournament).
        rescoring: Its rescore hook (None: runs cannot be rescored).
        comparing: Its comparison units and metrics (None: not compared).
    """

    identity: Identity
    play: Play
    presentation: Presentation = Presentation()
    sweeps: Sweeps | None = None
    tournaments: Tournaments | None = None
    rescoring: Rescoring | None = None
    comparing: Comparing | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a family name must be an identifier, got {self.name!r}")
        if self.main_table not in self.tables:
            raise ValueError(f"family {self.name!r}: main table {self.main_table!r} is not "
                             f"among its tables ({', '.join(self.tables)})")

    # What it is (read through, for brevity at call sites).
    @property
    def name(self) -> str:
        """The family's name."""
        return self.identity.name

    @property
    def description(self) -> str:
        """One line for ``--help``."""
        return self.identity.description

    @property
    def tables(self) -> Mapping[str, Any]:
        """Table name -> Arrow schema."""
        return self.identity.tables

    @property
    def main_table(self) -> str:
        """The table a user looks at first."""
        return self.identity.main_table

    @property
    def unit(self) -> str:
        """What a shard's ``num_units`` counts."""
        return self.identity.unit

    @property
    def seats(self) -> tuple[str, ...]:
        """The seats players fill (empty: no tournament)."""
        return self.tournaments.seats if self.tournaments else ()

    @property
    def pairable(self) -> bool:
        """Whether players can be paired in this family's seats (a tournament can run)."""
        return self.tournaments is not None

    def capabilities(self) -> dict[str, bool]:
        """Each of :data:`CAPABILITIES` -> whether the family declares it."""
        return {"batch": self.play.batch, "sweeps": self.sweeps is not None,
                "tournaments": self.tournaments is not None,
                "rescoring": self.rescoring is not None, "comparing": self.comparing is not None}

    # Play.
    def run_shard(self, shard: Shard, backends: Mapping[BackendSpec, Any]) -> ShardResult:
        """Plays ``shard`` (imports the runner on first use)."""
        return _load(self.play.runner)(shard, backends)

    def summary(self, con: Any, offload: Any = None) -> list[dict[str, Any]]:
        """The summary records of a run's rows of this family."""
        return _load(self.play.summarize)(con, offload)

    def command_run(self, options: Mapping[str, Any], spec: BackendSpec) -> CommandRun:
        """What ``distbench run --family <name>`` plays with these options."""
        return _load(self.play.command)(options, spec)

    def cli_options(self) -> list[Any]:
        """The family's own ``click.Option`` objects for ``distbench run`` (none by default)."""
        return list(_load(self.play.options)) if self.play.options else []

    def command_group(self, services: CommandServices) -> Any:
        """The family's own ``click.Group`` (None when it has none)."""
        return _load(self.play.commands)(services) if self.play.commands else None

    def warm(self) -> None:
        """Runs the family's warm-up (nothing when it has none)."""
        if self.play.warm_up:
            _load(self.play.warm_up)()

    # Presentation.
    def report_section(self, doc: Any, con: Any) -> None:
        """Adds the family's section to a report document (imports it on first use)."""
        if self.presentation.report:
            _load(self.presentation.report)(doc, con)

    def view_part(self, con: Any, options: Any) -> Any:
        """The family's part of ``distbench view`` (ValueError when it has no viewer)."""
        if not self.presentation.viewer:
            raise ValueError(f"the {self.name} family has no viewer hook")
        return _load(self.presentation.viewer)(con, options)

    def export_files(self, con: Any, out_dir: Path, run_id: str) -> list[Path] | None:
        """The family's ``distbench export`` files, or None when it has no hook (the
        generic export applies)."""
        export = self.presentation.export
        return list(_load(export)(con, out_dir, run_id)) if export else None

    def export_format(self, fmt: str, con: Any, out_dir: Path) -> list[Path]:
        """The files of one of the family's own export formats (ValueError when it has not
        that format)."""
        if fmt not in self.presentation.formats:
            raise ValueError(f"export --format {fmt} does not apply to {self.name} runs")
        return list(_load(self.presentation.formats[fmt])(con, out_dir))

    # Sweeps.
    def sweep_configs(self, spec: Any, entry: Any) -> list[Any]:
        """The configurations the family plays for one model entry of a sweep."""
        return list(_load(self.sweeps.configs)(spec, entry)) if self.sweeps else []

    def describe(self, spec: Any, shards: list[Any]) -> dict[str, Any]:
        """The family's figures of a sweep's shards, for ``distbench sweep plan``."""
        return dict(_load(self.sweeps.describer)(spec, shards)) if self.sweeps else {}

    def bucket_info(self) -> Any:
        """The family's ``Sweeps.buckets`` function (None when it has no buckets)."""
        return _load(self.sweeps.buckets) if self.sweeps and self.sweeps.buckets else None

    def spec_section(self, table: Any) -> dict[str, Any]:
        """The family's sweep-spec section validated, defaults filled in (ValueError)."""
        if not (self.sweeps and self.sweeps.section):
            raise ValueError("this family takes no section in a sweep spec")
        return dict(_load(self.sweeps.section)(table))

    # Tournaments.
    def _seated(self) -> Tournaments:
        if self.tournaments is None:
            raise ValueError(f"the {self.name} family has no seats for players to fill")
        return self.tournaments

    def tournament_player(self, text: str) -> tuple[Any, str]:
        """A ``--players`` entry as (the family's player, its label) (ValueError)."""
        return _load(self._seated().player)(text)

    def plan_pairing(self, player_a: Any, player_b: Any, settings: PairingSettings) -> Any:
        """The configuration playing ``player_a`` against ``player_b`` in every seat."""
        return _load(self._seated().pairing)(player_a, player_b, settings)

    def seat_outcomes(self, con: Any) -> list[SeatOutcome]:
        """Every game of a run with each seat's player and score."""
        return list(_load(self._seated().outcomes)(con))

    def tournament_report(self, con: Any) -> str:
        """The family's own lines after a tournament's ranking ("" when it has none)."""
        report = self._seated().report
        return str(_load(report)(con)) if report else ""

    # Rescoring and comparing.
    def rescore_shard(self, stored: StoredShard) -> Rescored:
        """Re-reads and re-scores one stored shard (ValueError when the family does not
        declare rescoring)."""
        if self.rescoring is None:
            raise ValueError(f"the {self.name} family cannot rescore a run (it has no rescore "
                             "hook)")
        return _load(self.rescoring.rescore)(stored)

    def compare_units(self) -> Any:
        """The family's comparison units and metrics (a ``FamilyUnits``; ValueError when the
        family does not declare comparing)."""
        if self.comparing is None:
            raise ValueError(f"the {self.name} family is not compared (it declares no units)")
        return _load(self.comparing.units)
