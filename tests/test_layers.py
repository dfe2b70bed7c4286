"""The package's layers and adapter boundaries, as declared in pyproject.toml, hold (import-linter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT


def test_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--no-cache"], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout and "KEPT" in result.stdout


PACKAGE = PROJECT_ROOT / "hybridtune"
MOST_INNER_IMPORTS = 10
# imports inside functions their owners are still moving (file: how many): a shrinking list
INNER_LEFTOVERS: dict = {}
# import circles (through imports inside functions) still to be broken: a shrinking list
CIRCLE_LEFTOVERS: list = []


def inner_imports() -> dict:
    """'package/module.py' -> [(line, text)] of the imports inside its functions."""
    import ast
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        numbers = sorted({sub.lineno for node in ast.walk(ast.parse(text))
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                          for sub in ast.walk(node) if isinstance(sub, (ast.Import, ast.ImportFrom))})
        if numbers:
            found[str(path.relative_to(PACKAGE))] = [(n, lines[n - 1]) for n in numbers]
    return found


def test_imports_inside_functions_are_few_and_say_why():
    found = inner_imports()
    counts = {name: len(found.get(name, [])) for name in INNER_LEFTOVERS}
    assert counts == INNER_LEFTOVERS, "update INNER_LEFTOVERS (it only shrinks)"
    rest = {name: imports for name, imports in found.items() if name not in INNER_LEFTOVERS}
    assert sum(map(len, rest.values())) <= MOST_INNER_IMPORTS, rest
    silent = [f"{name}:{number}" for name, imports in rest.items() for number, line in imports
              if "#" not in line]
    assert not silent, f"an import inside a function needs a comment giving its reason: {silent}"


def import_circles() -> list:
    """The sets of modules that import each other round a circle (imports inside functions too)."""
    import grimp
    graph = grimp.build_graph("hybridtune", cache_dir=None)
    edges = {m: {n for n in graph.find_modules_directly_imported_by(m) if n.startswith("hybridtune")}
             for m in graph.modules}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in edges.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            members = set()
            while not members or module not in members:
                members.add(stack.pop())
            on_stack.difference_update(members)
            if len(members) > 1:
                circles.append(members)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(edges):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circle_between_modules():
    circles = import_circles()
    assert all(circle in CIRCLE_LEFTOVERS for circle in circles), circles
    assert all(circle in circles for circle in CIRCLE_LEFTOVERS), \
        "a circle was broken: remove it from CIRCLE_LEFTOVERS"
