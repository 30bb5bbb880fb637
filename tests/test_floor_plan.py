"""The floor plan (``distbench.games.family.declare``): a family declared with ``declare`` gets the
plan's hooks under its package, its own fields over them, and only the capabilities it names."""

from __future__ import annotations

import importlib

import pyarrow as pa

from distbench.games.family import Family, Identity, Play, Presentation, Rescoring, Sweeps, declare
from distbench.games.registry import get_family

_IDENTITY = Identity(name="toy", description="a toy", tables={"toys": pa.schema([])},
                     main_table="toys")


def test_declare_fills_the_plan_under_the_package_and_keeps_what_the_family_says():
    family = declare("pkg.toy", _IDENTITY, play={"example": ("--x",)},
                     presentation={"replay": None, "export": "pkg.toy.out:write"},
                     sweeps={"section": None}, rescoring=True)
    assert family == Family(
        identity=_IDENTITY,
        play=Play(runner="pkg.toy.runner:run_shard", summarize="pkg.toy.summary:toy_summary",
                  command="pkg.toy.command:command", options="pkg.toy.command:OPTIONS",
                  example=("--x",)),
        presentation=Presentation(catalog="pkg.toy.command:catalog",
                                  report="pkg.toy.report:section", viewer="pkg.toy.viewer:view",
                                  export="pkg.toy.out:write"),
        sweeps=Sweeps(configs="pkg.toy.plan:sweep_configs",
                      describer="pkg.toy.plan:describe_shards"),
        rescoring=Rescoring("pkg.toy.rescore:rescore"))
    assert family.tournaments is None and family.comparing is None


def test_every_hook_of_a_family_on_the_plan_loads():
    for name in ("fog", "gama", "matrix", "negotiation", "openspiel"):
        family = get_family(name)
        groups = [family.play, family.presentation, family.sweeps, family.tournaments,
                  family.rescoring, family.comparing]
        targets = [v for g in groups if g is not None for v in vars(g).values()
                   if isinstance(v, str) and ":" in v and v.startswith("distbench.")]
        assert targets, name
        for target in targets:
            module, _, attr = target.partition(":")
            assert hasattr(importlib.import_module(module), attr), (name, target)
