"""The family declaration: what a game family is and can do, as the engine, the store, the
reports and the CLI see it.

A family is a package under ``distbench/games/`` (or an installed plugin) that declares itself
with a :class:`Family` at the bottom of its plan module and registers it
(``distbench.games.registry``), the way an OpenSpiel game declares its ``GameType`` and
registers it. The declaration, at a glance (each group a frozen dataclass; a capability is
declared by giving its group, every hook in a group is required unless marked optional)::

    Family(
        identity=Identity(name, description, tables, main_table, unit, modes, views),
        play=Play(runner, summarize, command, options?, warm_up?, batch, commands?, shared?,
                  example),
        presentation=Presentation(report?, viewer?, export?, formats, catalog?, replay?),
        sweeps=Sweeps(configs, describer, section?, key, buckets?)           | None,
        tournaments=Tournaments(seats, player, pairing, outcomes, options, anchors,
                                report?)                                    | None,
        rescoring=Rescoring(rescore)                                        | None,
        comparing=Comparing(units)                                          | None,
    )

Hooks are ``"module:attr"`` strings, imported on first use (a driver never loads a family's
kernels). The types they take and return are in :mod:`distbench.games.base`:

- a ``RunConfig`` (``Play.command``, ``Sweeps.configs``, ``Tournaments.pairing``) plans
  itself, ``plan(run_id) -> RunPlan``, into shards with stable ids, and says what decides
  its rows (``identity()``);
- every shard is a ``Shard`` (``shard_id``, ``family``, ``num_units``, and ``specs`` or
  ``llm``); ``Play.runner`` plays one: ``run_shard(shard, backends) -> ShardResult`` (Arrow
  tables of ``Identity.tables``, which the store receives and knows no game);
- ``Play.summarize``: ``summarize(con, offload) -> records`` from DuckDB views;
  ``Identity.unit``: what ``num_units`` counts (both stated here once);
- ``Rescoring.rescore``: ``rescore(StoredShard) -> Rescored``, no model call;
- ``Comparing.units``: the ``FamilyUnits`` of ``distbench compare`` (units, groups, metrics);
- ``Tournaments``: a ``--players`` entry as a player, a pairing as a ``RunConfig`` with the
  seats filled, and the ``SeatOutcome`` of every game a tournament rates.

:meth:`Family.capabilities` lists what a family declares; ``docs/contract.md`` is this page
generated from the code (``tools/contract_doc.py``); ``tests/test_family_contract.py`` runs
every registered family through every verb. It imports no family and nothing above ``games``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from distbench.games.base import (
    CommandRun,
    PairingSettings,
    Rescored,
    RunPlan,
    SeatOutcome,
    Shard,
    ShardResult,
    StoredShard,
)
from distbench.llm.base import BackendSpec

__all__ = ["CAPABILITIES", "SHARED_GROUPS", "CommandServices", "Comparing", "Family", "Identity",
           "Play", "Presentation", "Rescoring", "Sweeps", "Tournaments"]


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


SHARED_GROUPS = {
    "import": "Bring another benchmark's published records into a distbench run.",
    "suite": "Published benchmarks' protocols, played and tabled as they publish them.",
}
"""The CLI's top-level groups that families fill (``Play.shared``), name -> help line."""


class CommandServices(Protocol):
    """What the CLI lends a family's own commands (``Play.commands``), so that they parse and
    print while the same code as ``distbench run`` and ``distbench tournament`` plays."""

    def run_folder(self, output_dir: Path, run_id: str) -> Path:
        """The run's folder under ``output_dir`` (both checked: one line on bad input)."""
        ...

    def play(self, plan: RunPlan, run_dir: Path, *, parallel: bool | None,
             num_workers: int | None = None) -> Any:
        """Plays (or resumes) ``plan`` with the progress line (``num_workers`` concurrent
        shards; None: the CLI's default); returns the run outcome."""
        ...

    def preflight(self, spec: BackendSpec) -> None:
        """Fails fast, before any work, when the model cannot be used (a one-line
        ``BackendUnavailable``): the check ``distbench run`` makes."""
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
        shared: The family's subcommands of the CLI's shared groups (:data:`SHARED_GROUPS`),
            group -> ``"module:function"`` of ``(services: CommandServices) ->
            click.Command``: ``distbench <group> <name> ...`` (e.g. ``import gama``,
            ``suite gama``); empty: it contributes none.
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
    shared: Mapping[str, str] = field(default_factory=dict)
    example: tuple[str, ...] = ("--llm-type", "dummy", "--num-games", "2")

    def __post_init__(self) -> None:
        unknown = sorted(set(self.shared) - set(SHARED_GROUPS))
        if unknown:
            raise ValueError(f"Play.shared: no shared group {unknown[0]!r}; the groups are "
                             f"{', '.join(SHARED_GROUPS)}")


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
        table: ``"module:function"`` of ``(players, settings) -> RunConfig``: a table of n
            players (an n-seat family); then the tournament plays tables (every player at
            each, seats rotated, on the same instances), ``outcomes`` returns each game as
            ``(game_id, shard_id, player of each seat, score of each seat)`` and the
            players are rated by Plackett–Luce over each game's finishing order (ties as
            ties); Nash averaging is not defined (NULL). None: two seats, pairs.
    """

    seats: tuple[str, ...]
    player: str
    pairing: str
    outcomes: str
    options: Mapping[str, str] = field(default_factory=dict)
    anchors: tuple[str, ...] = ()
    report: str | None = None
    table: str | None = None

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
        catalog: ``"module:function"`` of ``() -> {kind: [rows]}``: what the family offers by
            name (kinds from ``base.CATALOG_KINDS``: games, strategies, classes, buckets,
            players), for ``distbench list``; None: nothing listed.
        replay: ``"module:function"`` of ``replay(con, per_game, seed) -> ReplayPart``
            (``distbench.report.replay``): sampled games drawn step by step, with the family's
            JavaScript renderer (a file beside it); None: no replay page.
    """

    report: str | None = None
    viewer: str | None = None
    export: str | None = None
    formats: Mapping[str, str] = field(default_factory=dict)
    catalog: str | None = None
    replay: str | None = None


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

    def shared_command(self, group: str, services: CommandServices) -> Any:
        """The family's ``click.Command`` in the shared group ``group`` (None: it has none)."""
        target = self.play.shared.get(group)
        return _load(target)(services) if target else None

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

    def replay_part(self, con: Any, per_game: int, seed: int) -> Any:
        """The family's replays of a run (ValueError when it has no replay hook)."""
        if not self.presentation.replay:
            raise ValueError(f"the {self.name} family has no replay hook")
        return _load(self.presentation.replay)(con, per_game, seed)

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
    def catalog_entries(self) -> dict[str, list[dict[str, Any]]]:
        """What the family offers by name (``Presentation.catalog``; empty when none)."""
        if not self.presentation.catalog:
            return {}
        return {kind: [dict(row) for row in rows]
                for kind, rows in _load(self.presentation.catalog)().items()}

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

    def plan_table(self, players: Any, settings: PairingSettings) -> Any:
        """The configuration of a table of ``players`` (an n-seat family's)."""
        return _load(self._seated().table)(players, settings)

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


# --- the floor plan: every family's hooks where the plan puts them -------------------------

FLOOR_PLAN: dict[str, tuple[type, dict[str, str]]] = {
    "play": (Play, {
        "runner": "runner:run_shard", "summarize": "summary:{name}_summary",
        "command": "command:command", "options": "command:OPTIONS"}),
    "presentation": (Presentation, {
        "catalog": "command:catalog", "report": "report:section", "viewer": "viewer:view",
        "replay": "replay:replay"}),
    "sweeps": (Sweeps, {
        "configs": "plan:sweep_configs", "describer": "plan:describe_shards",
        "section": "command:section"}),
    "tournaments": (Tournaments, {
        "player": "tournament:player", "pairing": "tournament:pairing",
        "outcomes": "tournament:outcomes"}),
    "rescoring": (Rescoring, {"rescore": "rescore:rescore"}),
    "comparing": (Comparing, {"units": "compare:UNITS"}),
}
"""Group -> (its class, field -> ``"module:function"`` relative to the family's package;
``{name}``: the family's name)."""

Group = bool | Mapping[str, Any] | None


def hooks(package: str, name: str, group: str) -> dict[str, str]:
    """The plan's hooks of ``group`` for the family ``name`` in ``package``, absolute."""
    return {key: f"{package}.{target.format(name=name)}"
            for key, target in FLOOR_PLAN[group][1].items()}


def _group(package: str, name: str, group: str, value: Group) -> Any:
    if value is None or value is False:
        return None
    fields = hooks(package, name, group) | (dict(value) if isinstance(value, Mapping) else {})
    return FLOOR_PLAN[group][0](**{k: v for k, v in fields.items() if v is not None})


def declare(package: str, identity: Identity, *, play: Group = True,
            presentation: Group = True, sweeps: Group = None, tournaments: Group = None,
            rescoring: Group = None, comparing: Group = None) -> Family:
    """The family of ``package`` (pass ``__package__``) on the floor plan.

    A family package puts each role in the same file under the same name (the runner in
    ``runner.py:run_shard``, the viewer in ``viewer.py:view``, the rescore hook in
    ``rescore.py:rescore``...: :data:`FLOOR_PLAN`), so its declaration states only what it
    has and where it departs from the plan. What this builds is the ordinary declaration
    (absolute ``"module:function"`` strings): nothing downstream knows the difference.

    Each capability is a group: ``True`` takes the plan as is, a dict the plan with the dict's
    fields over it (None drops one of the plan's hooks: the field's default), None or False
    leaves the capability out. ``play`` and ``presentation`` are always there."""
    groups = {"play": play or True, "presentation": presentation or True, "sweeps": sweeps,
              "tournaments": tournaments, "rescoring": rescoring, "comparing": comparing}
    return Family(identity=identity, **{
        group: _group(package, identity.name, group, value) for group, value in groups.items()})
