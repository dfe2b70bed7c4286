"""The tune tests' shared pieces: the tune scenario, its predicted store (made once per session) and commands."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.store import Store

TUNE_SCENARIO = str(PROJECT_ROOT / "tests" / "data" / "tune" / "tune.scenario.yaml")
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def predicted_store(tmp_path_factory) -> Path:
    """A store holding the tune scenario's predictions (kerncraft runs once, here)."""
    path = tmp_path_factory.mktemp("predicted") / "predicted.h5"
    done = subprocess.run([str(BIN / "hybridtune"), "predict", TUNE_SCENARIO, "--db", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture
def tune_store(predicted_store, tmp_path) -> Path:
    """A copy of the predicted store for one test to tune into."""
    path = tmp_path / "tune.h5"
    shutil.copy(predicted_store, path)
    return path


FAULTS = PROJECT_ROOT / "tests" / "data" / "faults"


def failing_scenario(folder: Path) -> str:
    """The faults scenario with only the Update variants that crash or compute a wrong result:
    every variant of its pool fails when measured."""
    text = (FAULTS / "Update.kernel.yaml").read_text()
    kept = [part for part in text.split("  - name: ")
            if not part.startswith(("Update_j\n", "Update_forever\n"))]
    (folder / "Update.kernel.yaml").write_text("  - name: ".join(kept))
    shutil.copy(FAULTS / "faults.scenario.yaml", folder)
    return str(folder / "faults.scenario.yaml")


def tune_command(store: Path, *extra: str, ranks: int = 0) -> list[str]:
    """`hybridtune tune` of the tune scenario into store, under mpiexec -n ranks when ranks > 0."""
    command = [str(BIN / "hybridtune"), "tune", TUNE_SCENARIO, "--db", str(store),
               "--budget", "0.2", *extra]
    return [str(BIN / "mpiexec"), "-n", str(ranks), *command] if ranks else command


def clean_env() -> dict:
    """This environment without a Slurm job around it (the tests may run inside one)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PMI_"))}


def run(command: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=clean_env())


def measurement_rows(store: Path) -> list[dict]:
    with Store.open(store, "r") as opened:
        frame = opened.frame("measurements")
    return [] if frame.empty else frame.to_dict("records")


def first_timings(rows: list[dict]) -> dict:
    """id -> count of ordinary measurements (re-timings of close contenders left out)."""
    counts: dict = {}
    for row in rows:
        if row["timing"] == "alone":
            counts[row["id"]] = counts.get(row["id"], 0) + 1
    return counts


def wait_for_rows(store: Path, process, count: int, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and process.poll() is None:
        if store.with_name(store.name + ".journal").exists() or store.exists():
            try:
                if len(measurement_rows(store)) >= count:
                    return
            except Exception:       # the writer may be folding its journal in right now
                pass
        time.sleep(0.2)
    raise AssertionError(f"no {count} measurement rows within {limit_s} s "
                         f"(exit {process.poll()})")


def runners_of(pid: int) -> list[int]:
    """Variant runner processes started by process pid that are still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"HT_PARENT_PID={pid}".encode() in environ:
            found.append(int(entry.name))
    return found


# A C program of the user's own on a tuned library named tuned_ic (replace the name for another):
# main N THREADS STEPS H prints the choice (variant, threads, measured) and the state after STEPS
# steps; THREADS 0 lets the library choose.
DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tuned_ic.h"
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int threads = atoi(argv[2]), steps = atoi(argv[3]);
    double h = atof(argv[4]);
    tuned_ic_ctx *c = threads > 0 ? tuned_ic_create_threads(n, threads) : tuned_ic_create(n);
    if (!c) return 1;
    printf("%s %d %d\n", tuned_ic_chosen_variant(c), tuned_ic_chosen_threads(c), tuned_ic_chosen_measured(c));
    tuned_ic_initial_values(c);
    for (int k = 0; k < steps; ++k) tuned_ic_step(c, k * h, h);
    double *y = tuned_ic_state(c);
    for (long j = 0; j < n; ++j) printf("%.17g\n", y[j]);
    tuned_ic_destroy(c);
    return 0;
}
"""
