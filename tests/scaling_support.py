"""The scaling tests' one `predict --scaling` run (the small MPI scenario to 8 ranks on the fat-tree platform), made once a session: its JSON, its text and the store holding the kernel analyses, which the plan and report tests reuse instead of running kerncraft again."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.commands.main import main
from hybridtune.predict.variants import VariantPrediction
from hybridtune.simulate.smpi import SimulationError, smpi_tools

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


# ---- hand-built curves of known times ------------------------------------------------------------

N_HAND = 1000


def prediction(variant: str, ranks: int, seconds: float, comm: float = 0.0, n: int = N_HAND,
               status: str = "ok", skeleton: str | None = None) -> VariantPrediction:
    return VariantPrediction(variant, skeleton or variant.split("_")[0], "radauIIA7", "Lorenz96",
                             n, 1, status, seconds, comm, ranks=ranks)


def tables(curves: dict) -> dict:
    """{variant: {P: (seconds, comm, n)}} -> {P: [VariantPrediction]}."""
    out: dict = {}
    for variant, points in curves.items():
        for p, (seconds, comm, n) in points.items():
            out.setdefault(p, []).append(prediction(variant, p, seconds, comm, n))
    return out


# "A-mpi_x": gathers, its communication grows with P and overtakes its computation at 8 ranks;
# "F-mpi-nx_y": slower on one rank, scales perfectly (no communication at all).
# Strong: A is fastest on 1 and 2 ranks, F from 4 on. Weak: A's step grows slowly, F's stays at 10
# s, A stays fastest: the best variants of strong and weak scaling differ at 4 and 8 ranks.
STRONG = {"A-mpi_x": {1: (8.0, 0.0, N_HAND), 2: (4.5, 0.5, N_HAND), 4: (2.6, 0.6, N_HAND),
                      8: (2.0, 1.1, N_HAND)},
          "F-mpi-nx_y": {1: (10.0, 0.0, N_HAND), 2: (5.0, 0.0, N_HAND), 4: (2.5, 0.0, N_HAND),
                         8: (1.25, 0.0, N_HAND)}}
WEAK = {"A-mpi_x": {1: (8.0, 0.0, N_HAND), 2: (8.5, 0.5, 2 * N_HAND), 4: (9.0, 1.0, 4 * N_HAND),
                    8: (9.5, 1.5, 8 * N_HAND)},
        "F-mpi-nx_y": {p: (10.0, 0.0, p * N_HAND) for p in (1, 2, 4, 8)}}


# ---- bad requests: exit code 2, one message, no store written ------------------------------------

def refusal(tmp_path: Path, command: str):
    """run(*argv) -> stderr of `command` refused: exit 2, one `error:` line, no store written."""
    db = tmp_path / "never.h5"

    def _refused(*argv) -> str:
        code, out, err = run_cli(command, *argv, "--db", db)
        assert code == 2 and out == "", (code, out, err)
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert not db.exists()
        assert not os.path.exists(os.environ["HYBRIDTUNE_STORE"])
        return err
    return _refused


@pytest.fixture(scope="module")
def simgrid():
    """SimGrid's SMPI tools, installed on first use; the test is skipped, saying why, where they
    cannot be."""
    try:
        smpi_tools()
    except SimulationError as error:
        pytest.skip(f"SimGrid is missing here and cannot be installed: {error}")
