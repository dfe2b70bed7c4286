"""Kernel call sites of MPI variants: HT_COMPUTE(k) in code order, the template of each, nothing natively (the variant still verifies on real ranks)."""

from __future__ import annotations

import re

import pytest

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.loader import load
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.tasks import measure_configuration

N = 240
SCENARIO = """name: sites
methods: [radauIIA7]
ivps: [Lorenz96]
skeletons: [A, A-mpi, D-mpi]
machine: SkylakeSP_Gold-6148.yml
n: [240]
threads: [1]
ranks: [1, 2]
"""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    path = tmp_path_factory.mktemp("sites") / "sites.scenario.yaml"
    path.write_text(SCENARIO)
    return load(path)


def _generated(scenario, skeleton: str):
    method, ivp = scenario.methods[0], scenario.ivps[0]
    variant = next(v for v in pool_for(scenario, method).values() if v.skeleton == skeleton)
    skeletons = {s.name: s for s in scenario.skeletons}
    return variant, generate_variant(variant, skeletons[skeleton], scenario.template_map, method,
                                     ivp)


@pytest.mark.parametrize("skeleton, templates", [
    ("A-mpi", ("RHS_predictor", "LC", "RHS", "Approx", "Update")),
    ("D-mpi", ("RHS_LC_predictor", "RHS_LC", "RHS", "ApproxUpdate"))])
def test_every_call_site_is_numbered_in_code_order(scenario, skeleton, templates):
    variant, generated = _generated(scenario, skeleton)
    assert generated.mpi and generated.call_templates == templates
    sites = re.findall(r"HT_COMPUTE\((\d+)\) (k_\w+)\(", generated.code)
    assert [int(k) for k, _ in sites] == list(range(len(templates)))
    assert [name for _, name in sites] == [f"k_{variant.kernel_map[t]}" for t in templates]
    assert "#define HT_COMPUTE(k)\n" in generated.code                 # natively: nothing
    assert "SMPI_SAMPLE_DELAY(ht_compute_s[k])" in generated.code      # under HT_INJECT
    assert f"== {len(templates)}," in generated.code      # HT_COMPUTE_S: one number per site
    create = generated.code[generated.code.index("ht_ctx *ht_create"):]
    assert "ctx->y = HT_ALLOC(1L * n);" in create             # folded under HT_INJECT
    assert "#ifndef HT_INJECT\n    #pragma omp parallel" in create   # and never first-touched


def test_a_variant_of_one_process_keeps_its_text(scenario):
    _, generated = _generated(scenario, "A")
    assert not generated.mpi
    assert generated.call_templates == ("RHS_predictor", "LC", "RHS", "Approx", "Update")
    assert "HT_COMPUTE" not in generated.code and "HT_INJECT" not in generated.code
    assert "ctx->y = ht_alloc(1L * n);" in generated.code


@pytest.mark.mpi
def test_native_mpi_variants_still_verify_on_two_ranks(scenario):
    method, ivp = scenario.methods[0], scenario.ivps[0]
    chosen = [next(v for v in pool_for(scenario, method).values() if v.skeleton == name)
              for name in ("A-mpi", "D-mpi")]
    quick = MeasureOptions(budget_s=0.1, min_repetitions=3, max_repetitions=6, timeout_s=30.0)
    for result in measure_configuration(scenario, Configuration(method, ivp, N, 1, 2), chosen,
                                        quick):
        assert result.status == "ok", (result.id, result.message)
        assert result.check_error <= 1e-10
