"""Helpers the tests share: the reference files they read and how a located error is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridtune.describe.loader import load
from hybridtune.errors import DescriptionError
from hybridtune.generate.pool import covering_sample  # noqa: F401  (the tests' import)

# kerncraft's published machine files, Offsite's method files and the paper's description examples,
# copied with their relative paths so that a clone of the project alone runs the tests
SHARED = Path(__file__).resolve().parent / "data" / "shared"
SHARED_METHODS = SHARED / "offsite-formats" / "methods"
SHARED_MACHINES = SHARED / "machines"


def expect_error(path: Path, key: str | None, line: int | None, expected: str,
                 kind: str | None = None, file: Path | None = None) -> DescriptionError:
    """Loading fails with one error naming the file, the line, the key and what was expected."""
    with pytest.raises(DescriptionError) as info:
        load(path, kind)
    error = info.value
    assert error.file == str(file or path), error
    assert error.key == key, error
    if line is not None:
        assert error.line == line, error
    assert expected in error.expected, error
    message = str(error)
    assert str(file or path) in message and "expected" in message
    return error
