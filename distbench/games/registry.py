"""Game families by name: the built-in ones and those installed as plugins.

A family registers itself at the bottom of its plan module (``register(FAMILY)``); its tables
go to the store at the same time. :func:`load_families` imports the built-in families' plan
modules and every entry point of the group ``distbench.families`` (a ``module:attr`` naming a
:class:`~distbench.games.base.Family`, or a module that registers one when imported), once per
process. Unknown names get a "did you mean" hint.
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points
from typing import Any

from distbench.errors import look_up
from distbench.games.family import Family
from distbench.store.schema import register_tables, register_views

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "distbench.families"
DEFAULT = "matrix"
"""The family ``distbench run`` plays when ``--family`` is not given."""
BUILTIN = ("distbench.games.matrix.plan", "distbench.games.negotiation.plan",
           "distbench.games.fog.plan", "distbench.games.bimatrix.plan",
           "distbench.games.repeated.plan", "distbench.games.openspiel.plan",
           "distbench.games.gama.plan")

_FAMILIES: dict[str, Family] = {}
_loaded = False


class UnknownFamilyError(ValueError):
    """A family name that is not registered."""


def register(family: Family) -> Family:
    """Adds ``family`` and hands its tables to the store; registering the same object again
    is a no-op, another family of the same name an error."""
    known = _FAMILIES.get(family.name)
    if known is family:
        return family
    if known is not None:
        raise ValueError(f"game family {family.name!r} is registered twice")
    register_tables(family.tables, owner=family.name)
    register_views(family.identity.views, owner=family.name)
    _FAMILIES[family.name] = family
    return family


def load_families() -> dict[str, Family]:
    """Imports the built-in families and the installed plugins (once); returns them by name."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            importlib.import_module(module)
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                value = ep.load()
            except Exception as exc:  # noqa: BLE001 - one broken plugin must not stop the rest
                log.warning("cannot load game family plugin %s (%s): %s: %s", ep.name,
                            ep.value, type(exc).__name__, exc)
                continue
            if isinstance(value, Family):
                register(value)
    return dict(_FAMILIES)


def families() -> dict[str, Family]:
    """Every registered family by name (loading them first)."""
    return load_families()


def report_parts() -> list[Any]:
    """Every family's part of ``distbench report`` (for :func:`distbench.report.build.build_report`)."""
    from distbench.report.build import ReportPart

    return [ReportPart(f.name, f.main_table, f.unit, f.report_section)
            for f in families().values() if f.presentation.report]


def view_sources() -> list[Any]:
    """Every family's part of ``distbench view`` (for :func:`distbench.report.viewer.build_view`)."""
    from distbench.report.viewer import ViewSource

    return [ViewSource(f.name, f.main_table, f.view_part if f.presentation.viewer else None)
            for f in families().values()]


def replay_sources() -> list[Any]:
    """Every family's replay hook (for :func:`distbench.report.replay.write_replays`)."""
    from distbench.report.replay import ReplaySource

    return [ReplaySource(f.name, f.main_table, f.replay_part if f.presentation.replay else None)
            for f in families().values()]


def compare_units() -> list[Any]:
    """Every compared family's units and metrics (``Family.comparing``; for
    :func:`distbench.report.compare.compare_runs`)."""
    return [f.compare_units() for f in families().values() if f.comparing]


def default_family() -> str:
    """The family ``distbench run`` plays by default."""
    return DEFAULT


def get_family(name: str) -> Family:
    """The family called ``name``; raises UnknownFamilyError with a hint otherwise."""
    return look_up(_FAMILIES, name, load_families, UnknownFamilyError, "game family")
