"""The scaling tests' one `predict --scaling` run (the small MPI scenario to 8 ranks on the fat-tree platform), made once a session: its JSON, its text and the store holding the kernel analyses, which the plan and report tests reuse instead of running kerncraft again."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.face.cli import main

SCENARIO = PROJECT_ROOT / "tests" / "data" / "scaling" / "scaling.scenario.yaml"
FAT_TREE = PROJECT_ROOT / "tests" / "data" / "platforms" / "fat-tree-100g.xml"


def run_cli(*argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one in-process command."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def cache_at(folder: Path):
    """HYBRIDTUNE_CACHE pointed at folder for the commands run inside (never data/cache)."""
    before = os.environ.get("HYBRIDTUNE_CACHE")
    os.environ["HYBRIDTUNE_CACHE"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["HYBRIDTUNE_CACHE"]
        else:
            os.environ["HYBRIDTUNE_CACHE"] = before


class ScalingRun(NamedTuple):
    as_json: tuple          # (code, stdout, stderr) of the cold --json run
    as_text: tuple          # (code, stdout, stderr) of the warm text run on its store
    db: Path                # the store both wrote (read it; copy it before writing)
    cache: Path             # the HYBRIDTUNE_CACHE they used


@pytest.fixture(scope="session")
def scaling_run(tmp_path_factory) -> ScalingRun:
    """One cold JSON run to 8 ranks on the fat tree, then a warm text run on its store."""
    folder = tmp_path_factory.mktemp("scaling")
    db, cache = folder / "store.h5", folder / "cache"
    argv = ("predict", SCENARIO, "--scaling", "--ranks-max", 8, "--platform", FAT_TREE)
    with cache_at(cache):
        as_json = run_cli(*argv, "--json", "--db", db)
        as_text = run_cli(*argv, "--db", db)
    return ScalingRun(as_json, as_text, db, cache)
