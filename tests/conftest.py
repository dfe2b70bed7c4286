"""Shared fixtures: the shipped library, loaded once, the session's predicted stores, and a writer of description files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load, load_named
# Session fixtures made once for the whole suite: defined here only (a module or a folder's conftest
# importing them would make a session fixture of its own, and run kerncraft again).
from learn_support import fixture_rows, fixture_store  # noqa: F401  (fixtures)
from scaling_support import scaling_run, simgrid  # noqa: F401  (fixtures)
from tune_support import predicted_store, tune_store  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    """Commands run without --db write to a store of the test's own, never data/store."""
    monkeypatch.setenv("HYBRIDTUNE_STORE", str(tmp_path / "default-store.h5"))


@pytest.fixture(scope="session")
def default_scenario():
    return load(PROJECT_ROOT / "scenarios" / "default.yaml", "scenario")


@pytest.fixture(scope="session")
def radau7():
    return load_named("method", "radauIIA7", PROJECT_ROOT)


@pytest.fixture
def write(tmp_path):
    """write(name, text) -> path of a dedented description file in a fresh folder."""
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path
    return _write
