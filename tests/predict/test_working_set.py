"""Regions of n from working sets and cache sizes, and the level a thread's share falls in."""

from __future__ import annotations

from hybridtune.describe.loader import load_named
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.generate.size_expressions import N
from hybridtune.predict.working_set import border, capacities, level_for, regions


def _skylake():
    return load_named("machine", "SkylakeSP_Gold-6148", PROJECT_ROOT)


def test_regions_cover_n_with_samples_inside_each():
    machine = _skylake()
    working_set = 40 * N                        # five arrays of n doubles
    found = regions(working_set, machine)
    assert [r.level for r in found] == [lvl.name for lvl in machine.levels]
    for lower, upper in zip(found, found[1:]):
        assert lower.n_high == upper.n_low
    for region in found:
        assert region.samples and all(region.contains(n) for n in region.samples)
    l1 = dict(capacities(machine))["L1"]
    assert found[0].n_high == border(working_set, l1) and 40 * (found[0].n_high - 1) <= l1
    assert found[-1].n_high is None and min(found[-1].samples) > found[-1].n_low


def test_shared_level_is_split_among_threads_private_ones_are_not():
    machine = _skylake()
    one, two = dict(capacities(machine, 1)), dict(capacities(machine, 2))
    assert one["L1"] == two["L1"] and one["L2"] == two["L2"]
    assert two["L3"] == one["L3"] / 2
    working_set = 40 * N
    n = int(1.5 * one["L2"] / 40)               # 1.5 L2 of data: L3 on one thread, L2 on two
    assert level_for(working_set, machine, n, 1) == "L3"
    assert level_for(working_set, machine, n, 2) == "L2"


def test_valid_sizes_are_used_for_samples():
    machine = _skylake()
    found = regions(24 * N, machine, valid=lambda n: n + (-n) % 3, n_min=3)
    assert all(n % 3 == 0 for r in found for n in r.samples)
