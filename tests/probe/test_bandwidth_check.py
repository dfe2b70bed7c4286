"""The bandwidth check: each level as a probed file composes it against the measured load bandwidth, on real runs."""

from __future__ import annotations

import dataclasses

import pytest

from hybridtune.describe.loader import load
from hybridtune.probe.bandwidth_check import check_bandwidths, quantity
from hybridtune.probe.host_facts import CacheFacts, read_host_facts
from hybridtune.probe.machine_file import write_machine_file
from hybridtune.probe.bandwidth import BandwidthPoint, last_level_regime
from hybridtune.probe.machine_probe import probe_machine, probe_summary

KIB, MIB = 1 << 10, 1 << 20
QUIET_KERNCRAFT = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                             "ignore::PendingDeprecationWarning")


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """A real, short probe of the host with small caches, written and read back."""
    real = read_host_facts()
    cores = real.cores
    facts = dataclasses.replace(real, caches=(
        CacheFacts(1, 16 * KIB, 32, 8, 64, 1, cores), CacheFacts(2, 128 * KIB, 256, 8, 64, 1, cores),
        CacheFacts(3, MIB, 1024, 16, 64, cores, 1)))
    mapping = probe_machine(facts, samples=1, min_seconds=0.002, rounds=1)
    path = write_machine_file(tmp_path_factory.mktemp("check") / "host.yml", mapping)
    return facts, mapping, path


def test_the_file_holds_the_effective_clock_and_the_nominal_one(probed):
    facts, mapping, path = probed
    clock = quantity(mapping["clock"], "Hz")
    assert quantity(mapping["nominal clock"], "Hz") == pytest.approx(facts.clock_hz, rel=1e-3)
    assert 0.5 * facts.clock_hz <= clock <= 2.0 * facts.clock_hz
    assert load(path).clock_hz == pytest.approx(clock, rel=1e-3)
    assert any(note.startswith("clock: the ") for note in mapping["probe notes"])


@QUIET_KERNCRAFT
def test_kerncraft_loads_the_file_with_both_clocks(probed):
    from kerncraft.machinemodel import MachineModel

    _, mapping, path = probed
    machine = MachineModel(str(path))
    assert float(machine["clock"]) == pytest.approx(quantity(mapping["clock"], "Hz"), rel=1e-3)
    assert float(machine["nominal clock"]) == pytest.approx(
        quantity(mapping["nominal clock"], "Hz"), rel=1e-3)
    assert float(machine.get_bandwidth(3, 1, 0, 1, cores=1)[0]) > 0


def test_each_level_is_checked_and_the_caches_agree_with_their_measurement(probed):
    _, mapping, _ = probed
    checks = check_bandwidths(mapping)
    assert [c.level for c in checks] == ["L1", "L2", "L3", "MEM"]
    assert checks[0].file_Bps is None and checks[0].measured_Bps > 0
    written = mapping["bandwidth check"]
    for check in checks[1:]:
        assert check.file_Bps > 0 and check.measured_Bps > 0 and check.cycles_per_line > 0
        assert written[check.level]["file / measured"] == pytest.approx(check.ratio, abs=1e-3)
        assert quantity(written[check.level]["measured"], "B/s") == pytest.approx(
            check.measured_Bps, rel=1e-3)
    # Cache levels above L1: the upstream throughputs telescope back to the measured load
    # bandwidth up to the first level that was no slower than the one below it (on a busy host a
    # level can be; from there the file adds that level's whole time and the sums stop telescoping).
    for check in checks[1:-1]:
        if any(f"{check.level} load kernel was not slower" in n for n in mapping["probe notes"]):
            break
        assert check.ratio == pytest.approx(1.0, abs=0.01)
    # Memory adds its bandwidth term to every cache transfer: the file's memory bandwidth is never
    # above the memory bandwidth it is composed from (the measured 1-core figure it is compared
    # with comes from another run of the benchmark, so their ratio depends on the machine's load)
    best = max(quantity(v, "B/s") for v in mapping["benchmarks"]["measurements"]["MEM"][1][
        "results"]["load"])
    assert checks[-1].file_Bps <= best * (1 + 1e-3)
    lines = probe_summary(mapping)
    assert lines[0].startswith(f"{mapping['model name']}: {mapping['clock']} in the file (nominal")
    assert [line.split()[0] for line in lines[-4:]] == ["L1", "L2", "L3", "MEM"]


def test_a_last_level_that_loads_like_memory_is_measured_where_it_holds_data():
    """The footprint search on a benchmark whose planned last level streams like memory."""
    real = read_host_facts()
    facts = dataclasses.replace(real, caches=(
        CacheFacts(1, 16 * KIB, 32, 8, 64, 1, 1), CacheFacts(2, 128 * KIB, 256, 8, 64, 1, 1),
        CacheFacts(3, 64 * MIB, 4096, 16, 1024, 1, 1)))
    plan = {"L1": [8 * KIB], "L2": [64 * KIB], "L3": [32 * MIB], "MEM": [256 * MIB]}
    calls = []

    def bench(kernel, threads, footprints):
        # the planned last level streams like memory; smaller footprints cache well
        calls.append(list(footprints))
        return [BandwidthPoint(f, 1.0, (10e9 if f >= 32 * MIB else 40e9 if f <= MIB else 30e9,))
                for f in footprints]
    changed, notes = last_level_regime(bench, facts, plan)
    assert calls[0] == [32 * MIB, 256 * MIB]
    assert calls[1][0] == int(1.5 * 128 * KIB) and calls[1][-1] < 32 * MIB
    assert changed["L3"] == [max(f for f in calls[1] if f <= MIB)]
    assert changed["L2"] == plan["L2"] and changed["MEM"] == plan["MEM"]
    assert "like memory" in notes[0] and "instead" in notes[0]


def test_a_level_faster_than_one_below_it_is_named_where_transfers_overlap():
    """With overlapping transfers kerncraft composes a level no faster than the slowest below it;
    a noisy L1 sample slower than L2 cannot be written, and the probe says so."""
    from hybridtune.probe.core_model import ZEN
    from hybridtune.probe.machine_probe import _upstream
    facts = read_host_facts()
    measured = {"load": {f"L{c.level}": [BandwidthPoint(1, gbs * 1e9, (gbs * 1e9,))]
                         for c, gbs in zip(facts.caches, (70.0, 90.0, 30.0))}}
    values, notes = _upstream(facts, ZEN, measured, 3e9)
    assert len(values) == len(facts.caches) - 1
    assert notes[0].startswith(f"L{facts.caches[1].level} load kernel was not slower than "
                               f"L{facts.caches[0].level}")
    assert len(notes) == 1       # the slower L3 composes as measured
