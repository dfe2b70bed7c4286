"""Scenarios of two methods with different stage counts (Radau IIA(7), 4 stages; Gauss(4), 2): predict and tune (directly, under mpiexec, dry-run) on a shipped IVP and a user's own at one and two threads, evaluate, report and export --tuned per method."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.reference.pirk import solve
from tune_support import BIN, DRIVER, run

pytestmark = pytest.mark.slow

FOLDER = PROJECT_ROOT / "tests" / "data" / "methods"
SCENARIO = str(FOLDER / "two-methods.scenario.yaml")
# the same methods on InverterChain and an IVP of the user's own (Cable), one and two threads
OWN_IVP = str(FOLDER / "own-ivp.scenario.yaml")
RUN = {(m, i, t) for m in ("radauIIA7", "gauss4") for i in ("InverterChain", "Cable")
       for t in (1, 2)}
# every variant of the scenario measured on one host (jobs/learn_fixture.sh, FIXTURE=methods)
GROUND_TRUTH = FOLDER / "fixture.h5"
METHODS = ("radauIIA7", "gauss4")
CONFIGURATIONS = {(m, i) for m in METHODS for i in ("InverterChain", "Wave1D")}
def hybridtune(*args) -> subprocess.CompletedProcess:
    return run([str(BIN / "hybridtune"), *map(str, args)], timeout=900)


@pytest.fixture(scope="module")
def predicted(tmp_path_factory):
    """The scenario with the user's own IVP predicted into a new store: kerncraft analyses both
    methods' kernels."""
    path = tmp_path_factory.mktemp("methods") / "predicted.h5"
    done = hybridtune("predict", OWN_IVP, "--db", path, "--json")
    assert done.returncode == 0, done.stderr
    return path, json.loads(done.stdout)


def test_predict_ranks_every_configuration_of_both_methods(predicted):
    _, answer = predicted
    found = {(c["method"], c["ivp"], c["threads"]) for c in answer["configurations"]}
    assert found == RUN
    for record in answer["configurations"]:
        assert len(record["variants"]) == 32 and record["variants"][0]["predicted_s"] > 0
    assert answer["failures"] == []


@pytest.mark.parametrize("ranks", [0, 2])
def test_tune_chooses_in_every_configuration_directly_and_under_mpiexec(predicted, tmp_path, ranks):
    store = tmp_path / "tune.h5"
    shutil.copy(predicted[0], store)
    command = [str(BIN / "hybridtune"), "tune", OWN_IVP, "--db", str(store), "--strategy",
               "top_k:2", "--budget", "0.1", "--json"]
    done = run([str(BIN / "mpiexec"), "-n", str(ranks), *command] if ranks else command,
               timeout=900)
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)["configurations"]
    assert {(r["method"], r["ivp"], r["threads"]) for r in records} == RUN
    assert all(r["chosen"] is not None and r["measured"] == 2 for r in records)
    dry = hybridtune("tune", OWN_IVP, "--db", store, "--strategy", "top_k:2", "--budget", "0.1",
                     "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert sum("2 in the store, 0 to measure" in line for line in dry.stdout.splitlines()) == 8


def test_evaluate_and_report_keep_the_methods_apart(tmp_path):
    done = hybridtune("evaluate", "--db", GROUND_TRUTH, "--noise-seeds", "2", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    keys = {tuple(c["key"][:2]) for c in answer["configurations"]}
    assert keys == CONFIGURATIONS
    assert answer["strategies"]["RunAll"]["measured_mean"] == 32
    report = hybridtune("report", "--db", GROUND_TRUTH, "-o", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "index.html").is_file()


def test_export_tuned_dispatches_per_method_and_each_matches_its_reference(tmp_path):
    refused = hybridtune("export", SCENARIO, "--tuned", "--db", GROUND_TRUTH, "-o", tmp_path / "x")
    assert refused.returncode == 2 and "--method" in refused.stderr
    assert not (tmp_path / "x").exists()
    scenario = load(SCENARIO, "scenario")
    ivp = next(i for i in scenario.ivps if i.name == "InverterChain")
    n, steps = 600, 4
    h = ivp.step_size(n)
    for method in scenario.methods:
        out, name = tmp_path / method.name, f"tuned_{method.name.lower()}"
        done = hybridtune("export", SCENARIO, "--tuned", "--method", method.name, "--ivp",
                          ivp.name, "--db", GROUND_TRUTH, "-o", out, "--name", name)
        assert done.returncode == 0, done.stderr
        table = json.loads((out / f"{name}.json").read_text())
        assert (table["method"], table["ivp"]) == (method.name, ivp.name)
        subprocess.run(["make", "-s", "-C", str(out)], check=True, capture_output=True)
        driver = tmp_path / f"{name}.c"
        driver.write_text(DRIVER.replace("tuned_ic", name))
        exe = tmp_path / name
        subprocess.run(["gcc", "-O2", "-fopenmp", "-I", str(out), str(driver),
                        str(out / f"lib{name}.a"), "-lm", "-o", str(exe)], check=True)
        lines = subprocess.run([str(exe), str(n), "0", str(steps), repr(h)], capture_output=True,
                               text=True, check=True).stdout.split("\n")
        assert lines[0].split()[0] in table["variants"]
        want = solve(method, ivp, n, 0.0, steps * h, steps)
        y = np.array([float(x) for x in lines[1:] if x])
        assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want)), method.name
