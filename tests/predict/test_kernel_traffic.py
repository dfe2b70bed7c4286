"""Compulsory traffic: each n-sized array a kernel reads once, writes twice, summed over the step."""

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.generate.pool import pool_for
from hybridtune.predict.kernel_traffic import kernel_traffic, step_traffic

VARIANT = "A_RHS_predictor_lj_LC_ijl_RHS_lj_Approx_ij_Update_j"


@pytest.fixture(scope="module")
def default():
    scenario = load(PROJECT_ROOT / "scenarios" / "default.yaml", "scenario")
    method = next(m for m in scenario.methods if m.name == "radauIIA7")
    return scenario, method


def test_a_kernel_reads_its_inputs_once_and_writes_its_outputs_twice(default):
    scenario, method = default
    s, n = method.stages, 1000
    lc = kernel_traffic(scenario.template_map["LC"], "LC_ijl", s, n)
    assert lc["arrays"] == {
        "y": {"elements": n, "read": True, "written": False, "transfers": 1, "bytes": 8 * n},
        "F": {"elements": s * n, "read": True, "written": False, "transfers": 1,
              "bytes": 8 * s * n},
        "Y": {"elements": s * n, "read": True, "written": True, "transfers": 2,
              "bytes": 16 * s * n}}
    assert lc["bytes"] == 8 * n + 8 * s * n + 16 * s * n


def test_the_step_sums_each_kernel_over_its_calls(default):
    scenario, method = default
    variant = pool_for(scenario, method)[VARIANT]
    skeleton = next(k for k in scenario.skeletons if k.name == variant.skeleton)
    step = step_traffic(variant, skeleton, scenario.template_map, method, 1000)
    calls = {k["template"]: k["calls"] for k in step["kernels"]}
    m = method.corrector_steps
    assert calls == {"RHS_predictor": 1, "LC": m, "RHS": m, "Approx": 1, "Update": 1}
    assert step["bytes"] == sum(k["calls"] * k["bytes_per_call"] for k in step["kernels"])
    assert step["bytes"] == 72000 + m * 104000 + m * 96000 + 48000 + 24000
