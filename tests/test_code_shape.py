"""The package's shape: short, shallow functions and names that mean one thing across packages."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hybridtune"
MAX_LINES = 60
MAX_NESTING = 4
BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
          *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _is_elif(parent: ast.AST, child: ast.AST) -> bool:
    """child is an elif of parent (an if inside an else block starts further right)."""
    return (isinstance(parent, ast.If) and isinstance(child, ast.If)
            and parent.orelse == [child] and child.col_offset == parent.col_offset)


def nesting(node: ast.AST) -> int:
    """The deepest block levels (if/for/while/with/try/match) inside node, an elif on its if's
    level, functions and classes defined inside not counted (they are measured on their own)."""
    deepest = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, SCOPES):
            continue
        level = nesting(child)
        if isinstance(child, BLOCKS) and not _is_elif(node, child):
            level += 1
        deepest = max(deepest, level)
    return deepest


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def offenders() -> dict[str, str]:
    """path:function -> what is over the limits, for every function in the package."""
    found = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            lines, depth = node.end_lineno - node.lineno + 1, nesting(node)
            if lines > MAX_LINES or depth > MAX_NESTING:
                name = f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"
                found[name] = f"{lines} lines, nesting {depth}"
    return found


def test_nesting_counts_blocks_not_elifs_or_inner_functions():
    source = ("def f(x):\n"
              "    if x:\n        for i in x:\n            pass\n"
              "    elif x is None:\n        pass\n    else:\n        while x:\n            pass\n"
              "    def g():\n        if x:\n            if x:\n                pass\n")
    assert nesting(ast.parse(source).body[0]) == 2
    inside_else = "def f(x):\n    if x:\n        pass\n    else:\n        if x:\n            pass\n"
    assert nesting(ast.parse(inside_else).body[0]) == 2


def test_no_function_is_over_60_lines_or_nested_deeper_than_4():
    over = offenders()
    assert not over, "\n".join(f"{name}: {why}" for name, why in sorted(over.items()))


def test_no_two_modules_share_a_name():
    paths = defaultdict(list)
    for path in modules():
        if path.name != "__init__.py":
            paths[path.stem].append(path.relative_to(PACKAGE).as_posix())
    shared = {name: where for name, where in paths.items() if len(where) > 1}
    assert not shared, shared


def test_no_two_top_level_classes_share_a_name():
    paths = defaultdict(list)
    for path in modules():
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef):
                paths[node.name].append(path.relative_to(PACKAGE).as_posix())
    shared = {name: where for name, where in paths.items() if len(where) > 1}
    assert not shared, shared
