"""The package's layers, read from its own imports (top-level and inside functions).

Layers, bottom to top (README, "Architecture"): ``kernels`` and ``store``; ``llm`` and
``report``; ``games`` (the family contract ``games.base``/``games.family``/``games.registry``/``games.section``,
the shared answer reading ``games.answers``, and one package per family); ``spec``; ``engine``, ``mockserver`` and ``studies``; ``cli``. A module imports
its own package and the layers below it, never one above or beside it. Besides:

- the engine names no family (it may use ``games.base`` and ``games.registry`` only);
- a family imports no other family;
- nothing but the CLI imports the mock server;
- no import cycle between modules.

There is no list of exceptions: a new import that breaks a rule fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "distbench"

RANK = {"errors": 0, "kernels": 1, "store": 1, "llm": 2, "report": 2, "games": 3, "spec": 4,
        "engine": 5, "mockserver": 5, "studies": 6, "cli": 7}
CONTRACT = {"answers", "base", "family", "registry", "section"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, int]]:
    """(imported distbench module, line) of every import in ``path``, at any depth."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("distbench")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("distbench"):
                continue
            for alias in node.names:  # "from pkg import module" imports the module
                sub = f"{target}.{alias.name}"
                is_module = (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists() \
                    or (PACKAGE.parent / sub.replace(".", "/")).is_dir()
                out.append((sub if is_module else target, node.lineno))
    return out


def _graph() -> dict[str, list[tuple[str, int]]]:
    return {_module(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _family(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "games" and parts[2] not in CONTRACT:
        return parts[2]
    return None


def _breaks() -> list[str]:
    out = []
    for me, imports in _graph().items():
        mine = _layer(me)
        for target, line in imports:
            theirs = _layer(target)
            where = f"{me}:{line} imports {target}"
            if mine in RANK and theirs in RANK and mine != theirs and RANK[theirs] >= RANK[mine]:
                out.append(f"{where}: {mine} may not import {theirs} (above or beside it)")
            if mine == "engine" and _family(target):
                out.append(f"{where}: the engine names no family")
            if _family(me) and _family(target) and _family(me) != _family(target):
                out.append(f"{where}: families do not import each other")
            if theirs == "mockserver" and mine not in ("mockserver", "cli"):
                out.append(f"{where}: only the CLI uses the mock server")
    return out


def test_every_module_has_a_layer():
    layers = {_layer(m) for m in _graph()} - {"", "__main__"}
    assert layers <= set(RANK), f"modules outside the layer map: {sorted(layers - set(RANK))}"


def test_imports_go_down_the_layers_only():
    breaks = _breaks()
    assert not breaks, "layer breaks:\n" + "\n".join(breaks)


def test_no_import_cycles():
    graph = _graph()
    known = set(graph)

    def resolve(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    edges = {m: {t for t, _ in imps if resolve(t) not in (None, m)} for m, imps in graph.items()}
    edges = {m: {resolve(t) for t in ts} for m, ts in edges.items()}
    # Tarjan's strongly connected components.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize(("source", "expected"), [
    ("from distbench.games.matrix.runner import run_shard\n", "the engine names no family"),
    ("from distbench.cli.query import render\n", "above or beside it"),
])
def test_the_checker_catches_a_break(source, expected):
    # A module of the engine that names a family, and one that imports the CLI: both found.
    fake = PACKAGE / "engine" / "_layers_probe.py"
    fake.write_text(source, encoding="utf-8")
    try:
        assert any(expected in b for b in _breaks())
    finally:
        fake.unlink()


# What plays a tournament round by round (plans, schedules, stops, ratings) is the engine's
# (``engine.tournament_run``); the CLI calls its entry points with a progress callback.
ORCHESTRATION = {"plan_tournament", "plan_schedule", "allocate_round", "next_pairs",
                 "separation", "stop_reason", "rate", "rate_matches", "read_matches",
                 "write_ratings"}


def _cli_orchestration() -> list[str]:
    out = []
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "distbench.engine"):
                out += [f"{_module(path)}:{node.lineno} imports {node.module}.{a.name}"
                        for a in node.names if a.name in ORCHESTRATION]
    return out


def test_the_cli_holds_no_orchestration():
    """The CLI parses and prints: it plays runs and tournaments through the engine's entry
    points (``run_with_progress`` over ``engine.driver``, ``engine.tournament_run``), never
    planning rounds, stopping or rating itself."""
    found = _cli_orchestration()
    assert not found, "orchestration in the CLI:\n" + "\n".join(found)
