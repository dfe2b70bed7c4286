"""Sizes by working-set region: per IVP the largest valid n whose step vectors fill half a level and exceed the level below, a region an IVP's `max` cannot reach left out, unknown regions refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridtune.describe.loader import load
from hybridtune.describe.region_sizes import largest_valid_at_most, region_size, step_vectors
from hybridtune.errors import DescriptionError

ROOT = Path(__file__).resolve().parents[2]
MACHINE = ROOT / "tests" / "data" / "shared" / "machines" / "Zen2_EPYC-7452.yml"
IVPS = ROOT / "scenarios" / "ivps"


def ivp(name: str):
    return load(IVPS / f"{name}.ivp.yaml", "ivp")


def scenario(tmp_path, ivps: str, n: str):
    path = tmp_path / "regions.scenario.yaml"
    path.write_text(f"name: regions\nmethods: [radauIIA7]\nivps: [{ivps}]\nskeletons: [F]\n"
                    f"machine: {MACHINE}\nn: {n}\nthreads: [1]\nstrategy: run_all\n")
    return load(path, "scenario")


def test_the_largest_valid_size_at_most_a_target():
    assert largest_valid_at_most(ivp("Cusp"), 1000) == 999            # multiple of 3
    assert largest_valid_at_most(ivp("Heat2D"), 1000) == 961          # 31^2
    assert largest_valid_at_most(ivp("Diffusion3D"), 1000) == 1000    # 10^3
    assert largest_valid_at_most(ivp("Diffusion3D"), 999) == 729      # 9^3
    assert largest_valid_at_most(ivp("Cusp"), 5) is None              # below its smallest, 9


def test_each_ivp_gets_its_own_sizes_in_each_region(tmp_path):
    found = scenario(tmp_path, "Cusp, Heat2D, NBody", "{regions: [L1, L2, L3]}")
    machine = found.machine
    per_component = 8 * step_vectors(4)                  # Radau IIA(7): s = 4
    levels = {level.name: level.size_bytes for level in machine.levels}
    sizes = dict(found.sizes.per_ivp)
    for name in ("Cusp", "Heat2D"):
        l1, l2, l3 = sizes[name]
        assert l1 * per_component <= levels["L1"] / 2
        assert levels["L1"] < l2 * per_component <= levels["L2"] / 2
        assert levels["L2"] < l3 * per_component <= levels["L3"] / 2
        assert found.sizes.for_ivp(next(i for i in found.ivps if i.name == name)) == sizes[name]
    # NBody's max (6000) is below the L3 region's first size: it has no L3 size
    assert len(sizes["NBody"]) == 2 and max(sizes["NBody"]) <= 6000
    assert region_size(ivp("NBody"), 4, machine, "L3") is None
    assert sizes["Cusp"] != sizes["Heat2D"]             # valid sizes differ per IVP


def test_an_unknown_region_is_refused(tmp_path):
    with pytest.raises(DescriptionError) as caught:
        scenario(tmp_path, "Cusp", "{regions: [L2, L4]}")
    assert "L4" in str(caught.value) and "one of L1, L2, L3, MEM" in str(caught.value)
