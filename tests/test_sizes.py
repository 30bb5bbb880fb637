"""Sizes a reader can hold (issue 34): no function over 150 lines but the numba kernels (a
compiled loop reads best whole), no module over 800 lines. Read from the code of ``distbench/``.

``EXCLUDED`` lists the modules not checked yet (being split elsewhere); shrink it as they are.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "distbench"
MAX_FUNCTION = 150
MAX_MODULE = 800
EXCLUDED: set[str] = set()


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if p.relative_to(PACKAGE).as_posix() not in EXCLUDED]


def _numba(node: ast.AST) -> bool:
    """A function compiled by numba (``@njit``, ``@numba.jit(...)``, ...)."""
    for deco in getattr(node, "decorator_list", []):
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit", "vectorize", "guvectorize", "cfunc", "generated_jit"):
            return True
    return False


def long_functions(path: Path, limit: int = MAX_FUNCTION) -> list[str]:
    """``path:line name (N lines)`` of every function of ``path`` over ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _numba(node):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                out.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} "
                           f"({lines} lines)")
    return out


def test_no_function_is_over_150_lines_but_the_numba_kernels():
    found = [line for path in _modules() for line in long_functions(path)]
    assert not found, "functions over 150 lines:\n" + "\n".join(found)


def test_no_module_is_over_800_lines():
    found = [f"{p.relative_to(PACKAGE.parent)} ({n} lines)" for p in _modules()
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE]
    assert not found, "modules over 800 lines:\n" + "\n".join(found)


def test_the_scan_sees_a_long_function_and_spares_a_kernel(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION))
    sample = tmp_path / "distbench" / "sample.py"
    sample.parent.mkdir()
    sample.write_text(f"def long():\n{body}\n\n@njit(cache=True)\ndef kernel():\n{body}\n"
                      f"\ndef short():\n    return 1\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, sample.parent
    try:
        found = long_functions(sample)
    finally:
        PACKAGE = saved
    assert len(found) == 1 and " long " in found[0], found
