"""No family is named outside its own package but the registry (issue 34, DESIGN.md "One
contract, declared"): the engine, the store, the reports and the CLI reach every family through
the contract (``games.family.Family``) and the registry, so a new family lands with no edit
there.

Read from the code: every identifier, import and string of ``engine/``, ``store/``, ``report/``
and ``cli/`` but docstrings and comments (prose may give examples). "matrix" is also a word
of mathematics: a square matrix, an (n, n) matrix, the matrix of something are not the family.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "distbench"
LAYERS = ("engine", "store", "report", "cli")
NAMES = ("matrix", "negotiation", "fog", "bimatrix", "repeated", "openspiel", "gama")
_WORD = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(NAMES) + r")(?![A-Za-z0-9_])")


def _docstrings(tree: ast.AST) -> set[int]:
    """The first lines of every docstring (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(body[0].lineno)
    # attribute docstrings: a bare string after an assignment
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for prev, stmt in zip(stmts, stmts[1:], strict=False):
                    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                            and isinstance(stmt.value.value, str) \
                            and isinstance(prev, (ast.Assign, ast.AnnAssign)):
                        out.add(stmt.lineno)
    return out


def _mentions(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    skip = _docstrings(ast.parse(text))
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and tok.start[0] in skip):
            continue
        if tok.type not in (tokenize.NAME, tokenize.STRING, tokenize.OP) and tok.type != 61:
            continue  # 61: FSTRING_MIDDLE (Python 3.12+)
        for m in _WORD.finditer(tok.string):
            before, after = tok.string[:m.start()], tok.string[m.end():]
            if m.group(1) == "matrix" and (before.endswith(("square ", "(n, n) "))
                                           or after.startswith(" of ")):
                continue
            out.append(f"{path.relative_to(PACKAGE.parent)}:{tok.start[0]}: {tok.line.strip()}")
    return out


def test_no_family_is_named_in_the_engine_the_store_the_reports_or_the_cli():
    found = [line for layer in LAYERS for path in sorted((PACKAGE / layer).rglob("*.py"))
             for line in _mentions(path)]
    assert not found, "family names outside the families and the registry:\n" + "\n".join(found)


def test_the_check_sees_a_family_name_in_code(tmp_path):
    """The check itself: a name in code is found, the same word in a docstring or comment is
    not, nor the matrix of mathematics."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""Plays fog."""\n# negotiation\nx = "a square matrix"\n'
                      'def f():\n    """bimatrix"""\n    return get("openspiel")\n')
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path.parent
    try:
        found = _mentions(sample)
    finally:
        PACKAGE = saved
    assert len(found) == 1 and "openspiel" in found[0], found
