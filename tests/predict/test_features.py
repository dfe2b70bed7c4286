"""Feature rows of variant predictions: IVP characteristics counted from the description, working sets against the caches."""

from __future__ import annotations

import math

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.predict.features import (FEATURE_SCHEMA, ivp_characteristics, ranking_features,
                                         variant_features, working_set_ratios)
from hybridtune.predict.variants import VariantPrediction
from hybridtune.predict.working_set import capacities


def test_heat2d_interior_is_stencil_and_its_edges_special():
    ivp = load_named("ivp", "Heat2D", PROJECT_ROOT)
    g = 30
    facts = ivp_characteristics(ivp, g * g)
    # every row's interior (g - 2 components per repetition) is stencil; edges and corners special
    assert facts["ivp_stencil_share"] == pytest.approx(g * (g - 2) / (g * g))
    assert facts["ivp_access_distance"] == g
    assert facts["ivp_access_distance_over_n"] == pytest.approx(1 / g)
    assert facts["ivp_transcendentals"] == 0
    # the interior's five-point update: 4 adds/subs, 2 multiplications, 5 loads
    assert 4 < facts["ivp_flops"] <= 6 and 4 < facts["ivp_loads"] <= 5


def test_transcendental_calls_are_counted_per_component():
    inverter = ivp_characteristics(load_named("ivp", "InverterChain", PROJECT_ROOT), 600)
    assert inverter["ivp_transcendentals"] == pytest.approx(2, abs=0.01)   # two pow per stage
    cusp = ivp_characteristics(load_named("ivp", "Cusp", PROJECT_ROOT), 3000)
    assert cusp["ivp_transcendentals"] == 0 and cusp["ivp_stencil_share"] > 0.99


def test_working_set_ratios_use_each_threads_share_of_a_level():
    machine = load_named("machine", "SkylakeSP_Gold-6148", PROJECT_ROOT)
    one, two = working_set_ratios(1e6, machine, 1), working_set_ratios(1e6, machine, 2)
    sizes = dict(capacities(machine, 1))
    assert one["ws_over_L1"] == pytest.approx(1e6 / sizes["L1"])
    assert two["ws_over_L3"] == pytest.approx(2 * one["ws_over_L3"])     # L3 is shared
    assert set(one) == {"ws_over_L1", "ws_over_L2", "ws_over_L3"} and not math.isnan(one["ws_over_L2"])


def _part(seconds: float, cycles: float, **contributions) -> dict:
    return {"loop": 0, "level": "L2", "seconds": seconds, "cycles_per_cl": cycles,
            "contributions": {"T_ECM": cycles, "notes": "x", **contributions}}


def _prediction(variant: str, kernels: list, status: str = "ok") -> VariantPrediction:
    total = sum(kernel["seconds"] for kernel in kernels)
    return VariantPrediction(variant, variant.split("_")[0], "radauIIA7", "Cusp", 6000, 1, status,
                             total + 1e-7, 1e-7, 3, tuple(kernels))


def test_a_rankings_feature_rows_are_each_variants_with_shared_kernels_worked_out_once():
    machine = load_named("machine", "SkylakeSP_Gold-6148", PROJECT_ROOT)
    method = load_named("method", "radauIIA7", PROJECT_ROOT)
    facts = ivp_characteristics(load_named("ivp", "Cusp", PROJECT_ROOT), 6000)
    # parts shared by variants, as predict_variant shares a kernel variant's breakdown
    lc = [_part(2.1e-6, 11.3, T_comp=4.1, T_RegL1=2.3, T_L1L2=3.7), _part(1e-7, 0.0, T_comp=1.0)]
    rhs = [_part(5.3e-6, 20.9, T_comp=9.9, T_L1L2=7.1, T_L2L3=0.0)]
    update = [_part(7.7e-7, 5.5, T_comp=1.3, T_L1L2=2.9, T_L3MEM=1.1)]

    def kernel(template, name, calls, parts):
        return {"template": template, "variant": name, "calls_per_step": calls,
                "seconds": calls * sum(p["seconds"] for p in parts), "parts": parts}

    ranking = [
        _prediction("A_LC_ij_RHS_j", [kernel("LC", "LC_ij", 24, lc),
                                      kernel("RHS", "RHS_j", 4, rhs)]),
        _prediction("B_LC_ij_Update_j", [kernel("LC", "LC_ij", 24, lc),
                                         kernel("Update", "Update_j", 1, update)]),
        _prediction("C_LC_ij_LC_ij", [kernel("LC", "LC_ij", 24, lc), kernel("LC", "LC_ij", 6, lc)]),
        _prediction("D_RHS_j", [kernel("RHS", "RHS_j", 4, rhs)], status="failed"),
    ]
    sizes = {"A": 3.1e5, "B": 2.9e5, "C": 3.1e5, "D": 1e5}
    rows = ranking_features(ranking, method, machine, sizes, facts)
    alone = [variant_features(p, method, machine, sizes[p.skeleton], facts) for p in ranking]
    assert rows == alone and [list(row) for row in rows] == [list(row) for row in alone]
    first, _, twice, failed = rows
    assert failed == {} and first["feature_schema"] == FEATURE_SCHEMA
    assert first["tpl_LC_s"] == pytest.approx(24 * 2.2e-6) and "tpl_RHS_T_L2L3_s" not in first
    assert first["tpl_LC_T_comp_s"] == pytest.approx(24 * 2.1e-6 * 4.1 / 11.3, rel=1e-4)
    # one template twice: its contributions are both kernels' together
    assert twice["tpl_LC_T_comp_s"] == pytest.approx(30 * 2.1e-6 * 4.1 / 11.3, rel=1e-4)
    assert twice["ecm_T_comp_s"] == pytest.approx(twice["tpl_LC_T_comp_s"], rel=1e-4)
    assert first["share_T_comp"] == pytest.approx(
        first["ecm_T_comp_s"] / first["predicted_s"], rel=1e-3)
