"""Every module of the package opens with a docstring whose first line is a short summary."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hybridtune"
SUMMARY_MAX = 100
MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_modules():
    assert len(MODULES) > 100


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_module_opens_with_a_short_summary(path):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    assert docstring and docstring.strip(), f"{path.relative_to(PACKAGE)} has no module docstring"
    lines = docstring.strip().splitlines()
    summary = lines[0].strip()
    assert len(summary) <= SUMMARY_MAX, f"summary of {len(summary)} characters: {summary}"
    assert len(lines) == 1 or not lines[1].strip(), "the summary must be one line, then a blank line"
