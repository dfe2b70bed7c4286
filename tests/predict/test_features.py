"""Feature rows of variant predictions: IVP characteristics counted from the description, working sets against the caches."""

from __future__ import annotations

import math

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load_named
from hybridtune.predict.features import ivp_characteristics, working_set_ratios
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
