"""A periodic grid written with / and % in its %in indices: predicted, tuned and solved as its blocked form."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from tune_support import BIN, run

pytestmark = pytest.mark.slow

PERIODIC = PROJECT_ROOT / "tests" / "data" / "periodic"
SCENARIO = str(PERIODIC / "periodic.scenario.yaml")


@pytest.fixture(scope="module")
def predicted(tmp_path_factory):
    """The periodic scenario predicted by kerncraft into a store: (store, --json answer)."""
    store = tmp_path_factory.mktemp("periodic") / "periodic.h5"
    done = subprocess.run([str(BIN / "hybridtune"), "predict", SCENARIO, "--db", str(store),
                           "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return store, json.loads(done.stdout)


def test_predict_ranks_every_variant_with_no_failed_analysis(predicted):
    _, answer = predicted
    [configuration] = answer["configurations"]
    assert configuration["ivp"] == "GrayScott2D"
    assert len(configuration["variants"]) == 32 and not answer["failures"]
    assert all(v["status"] == "ok" and v["predicted_s"] > 0 for v in configuration["variants"])


def test_tune_measures_the_shortlist_and_chooses(predicted, tmp_path):
    store = tmp_path / "tune.h5"
    store.write_bytes(predicted[0].read_bytes())
    done = run([str(BIN / "hybridtune"), "tune", SCENARIO, "--db", str(store), "--budget", "0.2",
                "--strategy", "top_k:2", "--json"])
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["configurations"]
    assert record["measured"] == 2 and not record["failed"]
    assert record["chosen"]["id"] in record["shortlisted"] and record["chosen"]["measured_s"] > 0


def test_solve_gives_the_blocked_form_s_state(tmp_path):
    """The reference of the written code, and a compiled variant of its split, against the
    reference of the same system written as blocks."""
    common = ["--method", "radauIIA7", "-n", "800", "--t1", "1", "--steps", "20"]
    runs = {"written": ["--ivp", str(PERIODIC / "GrayScott2D.ivp.yaml")],
            "blocked": ["--ivp", str(PERIODIC / "GrayScott2DBlocked.ivp.yaml")],
            "variant": ["--ivp", str(PERIODIC / "GrayScott2D.ivp.yaml"), "--scenario", SCENARIO,
                        "--variant", "F_RHS_LC_predictor_ilj_RHS_LC_ilj_RHS_Approx_Update_ij"]}
    states = {}
    for name, extra in runs.items():
        out = tmp_path / f"{name}.npy"
        done = run([str(BIN / "hybridtune"), "solve", *common, *extra, "--out", str(out)])
        assert done.returncode == 0, done.stderr
        states[name] = np.load(out)
    blocked = states["blocked"]
    assert np.ptp(blocked) > 0.1              # a state that is not flat: the stencil matters
    for name in ("written", "variant"):
        assert np.max(np.abs(states[name] - blocked)) <= 1e-12 * np.max(np.abs(blocked)), name
